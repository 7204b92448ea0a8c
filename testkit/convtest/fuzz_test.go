package convtest

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/mcpx-dev/mcpx/generated/convert"
	"github.com/mcpx-dev/mcpx/generated/mcp"
	"github.com/mcpx-dev/mcpx/internal/mcpjson"
)

// fuzzTypes are the wire types whose decoders see the most peer input.
var fuzzTypes = []string{"CallToolResult", "CallToolRequestParams", "ReadResourceResult", "GetPromptResult", "ListToolsResult", "CompleteRequestParams", "InitializeRequestParams"}

// FuzzWireDecode: whatever bytes a peer sends, decoding them into a
// revision's type as production does (internal/mcpjson) never panics, and
// what decodes survives a round trip: upgrade, downgrade, encode, decode
// again, and the second encoding equals the first.
func FuzzWireDecode(f *testing.F) {
	seeds := []string{
		`{"content":[{"type":"text","text":"hi"},{"type":"image","data":"aGk=","mimeType":"image/png"},{"type":"resource","resource":{"uri":"a:b","text":"x"}}],"isError":true,"structuredContent":{"a":1}}`,
		`{"name":"t","arguments":{"x":[1,2]},"_meta":{"progressToken":7}}`,
		`{"contents":[{"uri":"a:b","blob":"aGk="},{"uri":"c:d","text":"t","mimeType":"text/plain"}]}`,
		`{"messages":[{"role":"user","content":{"type":"resource_link","uri":"a:b","name":"n"}}]}`,
		`{"tools":[{"name":"t","inputSchema":{"type":"object"},"annotations":{"readOnlyHint":true}}],"nextCursor":"c"}`,
		`{"ref":{"type":"ref/prompt","name":"p"},"argument":{"name":"a","value":"v"}}`,
		`{"protocolVersion":"2025-06-18","capabilities":{"roots":{"listChanged":true}},"clientInfo":{"name":"c","version":"1"}}`,
		`{"content":[{"type":"nope"}]}`, `[]`, `null`, `{"content":null}`,
		// What internal/mcpjson reads unlike encoding/json: a member name
		// in another case is not the member, a name twice and invalid
		// UTF-8 are refused.
		`{"NAME":"smuggled","name":"t"}`, `{"name":"a","name":"b"}`, "{\"name\":\"\xff\"}",
	}
	for i, s := range seeds {
		for j := range mcp.Revisions {
			f.Add(s, uint8(i+j))
		}
	}
	f.Fuzz(func(t *testing.T, in string, pick uint8) {
		rev := mcp.Revisions[int(pick)%len(mcp.Revisions)]
		name := fuzzTypes[int(pick/8)%len(fuzzTypes)]
		wire := convert.New(rev, name)
		if wire == nil {
			return
		}
		if mcpjson.Unmarshal([]byte(in), wire) != nil {
			return
		}
		first, ok := roundTrip(t, rev, wire)
		if !ok {
			return
		}
		again := convert.New(rev, name)
		if err := mcpjson.Unmarshal(first, again); err != nil {
			t.Fatalf("%s %s: our own encoding does not decode: %v\n%s", rev, name, err, first)
		}
		second, ok := roundTrip(t, rev, again)
		if !ok || !bytes.Equal(first, second) {
			t.Fatalf("%s %s: not stable:\n%s\n%s", rev, name, first, second)
		}
	})
}

// roundTrip upgrades a decoded wire value, downgrades it again and encodes
// it; ok is false when the value has no encoding (a union left empty by
// input that named no variant, which the encoder refuses).
func roundTrip(t *testing.T, rev mcp.Revision, wire any) ([]byte, bool) {
	hub, err := convert.Upgrade(rev, wire)
	if err != nil {
		t.Fatalf("upgrade %T: %v", wire, err)
	}
	down, err := convert.Downgrade(rev, hub)
	if err != nil {
		t.Fatalf("downgrade %T: %v", hub, err)
	}
	b, err := json.Marshal(down)
	return b, err == nil
}
