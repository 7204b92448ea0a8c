package gateway

import (
	"encoding/json"
	"testing"

	"github.com/mcpx-dev/mcpx/generated/mcp"
)

// TestCovers: whether the capabilities a client declared include all an
// upstream's -32021 names, member by member; an empty elicitation
// declared is form mode.
func TestCovers(t *testing.T) {
	for _, tc := range []struct {
		declared, required string
		want               bool
	}{
		{`{"elicitation":{}}`, `{"elicitation":{}}`, true},
		{`{"elicitation":{}}`, `{"elicitation":{"form":{}}}`, true},
		{`{"elicitation":{}}`, `{"elicitation":{"url":{}}}`, false},
		{`{"elicitation":{"url":{}}}`, `{"elicitation":{"form":{}}}`, false},
		{`{"elicitation":{"form":{},"url":{}}}`, `{"elicitation":{"url":{}}}`, true},
		{`{"sampling":{}}`, `{"sampling":{"tools":{}}}`, false},
		{`{"sampling":{"tools":{}},"roots":{}}`, `{"sampling":{},"roots":{}}`, true},
		{`{"roots":{"listChanged":false}}`, `{"roots":{"listChanged":true}}`, false},
		{`{"roots":{}}`, `{"roots":{"listChanged":false}}`, true},
		{`{"roots":{"listChanged":true}}`, `{"roots":{"listChanged":true}}`, true},
		{`{}`, `{"roots":{}}`, false},
		{`{"sampling":{}}`, `{"sampling":{},"roots":{}}`, false},
	} {
		var d, r mcp.ClientCapabilities
		if json.Unmarshal([]byte(tc.declared), &d) != nil || json.Unmarshal([]byte(tc.required), &r) != nil {
			t.Fatalf("bad case %+v", tc)
		}
		need, _ := toJSON(&r).(map[string]any)
		if got := covers(toJSON(declaredForm(&d)), need); got != tc.want {
			t.Errorf("declared %s, required %s: covers %v, want %v", tc.declared, tc.required, got, tc.want)
		}
	}
}
