package mcpjson_test

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"

	"github.com/mcpx-dev/mcpx/generated/convert"
	"github.com/mcpx-dev/mcpx/generated/mcp"
	"github.com/mcpx-dev/mcpx/internal/mcpjson"
)

// marshalCases are hub values, written as JSON, that reach every union
// kind the generated code has (content blocks, embedded resources, a
// sampling message's content as one block and as a list), raw members with
// white space and line breaks to compact, strings that encoding/json
// escapes (HTML, U+2028, control bytes, invalid UTF-8), empty and absent
// members (omitempty) and a nil list.
var marshalCases = map[string]string{
	"CallToolResult": `{"content":[
		{"type":"text","text":"a <b> & c\u2028 \u0001 \n\"q\"\t","annotations":{"audience":["user"],"priority":0.5}},
		{"type":"image","data":"aGk=","mimeType":"image/png"},
		{"type":"audio","data":"aGk=","mimeType":"audio/wav","_meta":{"k": [1, 2]}},
		{"type":"resource_link","uri":"file:///a","name":"a","size":3},
		{"type":"resource","resource":{"uri":"file:///b","text":"b <>"}},
		{"type":"resource","resource":{"uri":"file:///c","blob":"aGk=","mimeType":"x/y"}}],
		"structuredContent":{ "a" : [1, 2,
			3], "h": "<&>" },
		"isError":false,
		"_meta":{"x":{"y": true}}}`,
	"CallToolRequestParams": `{"name":"t","arguments":{ "text" : "x\n y", "n": 1.50 }}`,
	"GetPromptResult":       `{"description":"d","messages":[{"role":"user","content":{"type":"text","text":"hi"}},{"role":"assistant","content":{"type":"resource","resource":{"uri":"u","text":"t"}}}]}`,
	"CreateMessageRequestParams": `{"maxTokens":5,"messages":[
		{"role":"user","content":{"type":"text","text":"one"}},
		{"role":"user","content":[{"type":"text","text":"two"},{"type":"image","data":"aGk=","mimeType":"image/png"}]}],
		"systemPrompt":"s","includeContext":"none"}`,
	"ListToolsResult": `{"tools":[{"name":"t","inputSchema":{ "type" : "object",
		"properties": {"a": {"type":"string"}} },"annotations":{"readOnlyHint":true}}],"nextCursor":""}`,
	"ReadResourceResult": `{"contents":[{"uri":"u","text":"t"},{"uri":"v","blob":"aGk="}]}`,
	"ListRootsResult":    `{"roots":null}`,
	// A _meta of more members than Meta.MarshalJSONTo sorts on its stack,
	// keys and values that encoding/json escapes, raw values to compact.
	"PaginatedRequestParams": `{"cursor":"c","_meta":{"z":1,"y":{ "a" : [1, 2] },"<h>":"&","é":"\u00e9","a/b":null,
		"progressToken":"t","io.modelcontextprotocol/protocolVersion":"2026-07-28","k\u2028":" x ","B":true,"b":false,"0":[ ]}}`,
}

// TestMarshalIsEncodingJSON: mcpjson.Marshal writes what encoding/json
// writes, byte for byte, for the hub value and its downgrade to every
// revision (unions through MarshalJSONTo, raw members, escaping).
func TestMarshalIsEncodingJSON(t *testing.T) {
	for name, doc := range marshalCases {
		hub := mcp.New(name)
		if hub == nil {
			t.Fatalf("no hub type %s", name)
		}
		if err := mcpjson.Unmarshal([]byte(doc), hub); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		values := map[string]any{"hub": hub}
		for _, rev := range mcp.Revisions {
			w, err := convert.Downgrade(rev, hub)
			if err != nil {
				continue // a type this revision does not have
			}
			values[string(rev)] = w
		}
		for where, v := range values {
			want, werr := json.Marshal(v)
			got, gerr := mcpjson.Marshal(v)
			if (werr == nil) != (gerr == nil) {
				t.Errorf("%s at %s: encoding/json: %v, mcpjson: %v", name, where, werr, gerr)
				continue
			}
			if !bytes.Equal(got, want) {
				t.Errorf("%s at %s:\nmcpjson:       %s\nencoding/json: %s", name, where, got, want)
			}
		}
	}
}

// TestMarshalInvalidUTF8: a string a handler built with invalid UTF-8
// (it cannot arrive: Unmarshal refuses it) is written with U+FFFD in
// place of each bad byte, as encoding/json writes it, but as the character
// itself where encoding/json writes the escape \ufffd: the same string to
// any reader.
func TestMarshalInvalidUTF8(t *testing.T) {
	v := &mcp.CallToolResult{Content: []mcp.ContentBlock{{Value: &mcp.TextContent{Text: "a\xff\xfeb"}}}}
	got, err := mcpjson.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := json.Marshal(v)
	if !bytes.Equal(bytes.ReplaceAll(want, []byte(`\ufffd`), []byte("\ufffd")), got) {
		t.Errorf("mcpjson: %s\nencoding/json: %s", got, want)
	}
}

// TestMarshalUnionErrors: a union with no variant fails both ways, and
// a downgraded union whose variant the revision lacks says which.
func TestMarshalUnionErrors(t *testing.T) {
	empty := &mcp.CallToolResult{Content: []mcp.ContentBlock{{}}}
	if _, err := mcpjson.Marshal(empty); err == nil {
		t.Error("mcpjson.Marshal of a union with no variant: no error")
	}
	if _, err := json.Marshal(empty); err == nil {
		t.Error("encoding/json of a union with no variant: no error")
	}
}

// TestUnmarshalShared: the same values as Unmarshal, a raw member being
// the input's own bytes.
func TestUnmarshalShared(t *testing.T) {
	for name, doc := range marshalCases {
		want, got := mcp.New(name), mcp.New(name)
		werr := mcpjson.Unmarshal([]byte(doc), want)
		gerr := mcpjson.UnmarshalShared([]byte(doc), got)
		if werr != nil || gerr != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("%s: Unmarshal %v, UnmarshalShared %v; equal %v", name, werr, gerr, reflect.DeepEqual(got, want))
		}
	}
	in := []byte(`{"name":"t","arguments":{"a": 1}}`)
	var p mcp.CallToolRequestParams
	if err := mcpjson.UnmarshalShared(in, &p); err != nil {
		t.Fatal(err)
	}
	if string(p.Arguments) != `{"a": 1}` || &p.Arguments[0] != &in[bytes.IndexByte(in[1:], '{')+1] {
		t.Errorf("arguments %s: not the input's bytes", p.Arguments)
	}
	if err := mcpjson.UnmarshalShared([]byte(`{"name":"t","arguments":{"a":}}`), &p); err == nil || !mcpjson.IsSyntax(err) {
		t.Errorf("invalid JSON: %v, want a syntax error", err)
	}
}

// TestMetaMarshalIsEncodingJSON: a _meta written by its own MarshalJSONTo
// is what encoding/json writes for the map, nil values (null) and the
// empty and nil maps included.
func TestMetaMarshalIsEncodingJSON(t *testing.T) {
	for _, m := range []mcp.Meta{
		nil, {},
		{"a": nil, "b": json.RawMessage(`{ "x" :  [1 , 2] }`), "<&>": json.RawMessage(`"<&>"`)},
		{"k1": json.RawMessage(`1`), "k9": json.RawMessage(`9`), "k2": json.RawMessage(`2`), "k8": json.RawMessage(`8`), "k3": json.RawMessage(`3`),
			"k7": json.RawMessage(`7`), "k4": json.RawMessage(`4`), "k6": json.RawMessage(`6`), "k5": json.RawMessage(`5`), "k10": json.RawMessage(`10`)},
	} {
		want, werr := json.Marshal(m)
		got, gerr := mcpjson.Marshal(m)
		if werr != nil || gerr != nil || !bytes.Equal(got, want) {
			t.Errorf("%v:\nmcpjson:       %s (%v)\nencoding/json: %s (%v)", m, got, gerr, want, werr)
		}
	}
	if _, err := mcpjson.Marshal(mcp.Meta{"bad": json.RawMessage(`{`)}); err == nil {
		t.Error("a _meta value that is not JSON was written")
	}
}
