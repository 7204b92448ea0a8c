package edge

import (
	"encoding/json"
	"testing"

	"github.com/mcpx-dev/mcpx/generated/mcp"
)

// TestUndeclared: a relayed question needs the capability the MRTR page
// names for it, as the client declared it: an empty elicitation object
// means form mode only; url mode needs elicitation.url; sampling that
// offers tools needs sampling.tools; roots/list needs roots.
func TestUndeclared(t *testing.T) {
	form := `{"method":"elicitation/create","params":{"mode":"form","message":"m","requestedSchema":{"type":"object","properties":{}}}}`
	url := `{"method":"elicitation/create","params":{"mode":"url","message":"m","url":"https://example.com/x"}}`
	sample := `{"method":"sampling/createMessage","params":{"messages":[],"maxTokens":1}}`
	sampleTools := `{"method":"sampling/createMessage","params":{"messages":[],"maxTokens":1,"tools":[{"name":"t","inputSchema":{"type":"object"}}]}}`
	roots := `{"method":"roots/list","params":{}}`
	for _, tc := range []struct {
		caps, req, need string // need "": nothing lacking
	}{
		{`{"elicitation":{}}`, form, ""},
		{`{"elicitation":{"form":{}}}`, form, ""},
		{`{"elicitation":{"url":{}}}`, form, `{"elicitation":{"form":{}}}`},
		{`{}`, form, `{"elicitation":{"form":{}}}`},
		{`{"elicitation":{}}`, url, `{"elicitation":{"url":{}}}`},
		{`{"elicitation":{"url":{}}}`, url, ""},
		{`{"sampling":{}}`, sample, ""},
		{`{}`, sample, `{"sampling":{}}`},
		{`{"sampling":{}}`, sampleTools, `{"sampling":{"tools":{}}}`},
		{`{"sampling":{"tools":{}}}`, sampleTools, ""},
		{`{"roots":{}}`, roots, ""},
		{`{"elicitation":{}}`, roots, `{"roots":{}}`},
	} {
		var caps mcp.ClientCapabilities
		var req mcp.InputRequest
		if err := json.Unmarshal([]byte(tc.caps), &caps); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal([]byte(tc.req), &req); err != nil {
			t.Fatal(err)
		}
		need, lacks := undeclared(&caps, map[string]mcp.InputRequest{"k": req})
		got := ""
		if lacks {
			b, _ := json.Marshal(need)
			got = string(b)
		}
		if got != tc.need {
			t.Errorf("client %s asked %s: needs %q, want %q", tc.caps, tc.req, got, tc.need)
		}
	}
}
