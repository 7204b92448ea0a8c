package requeststate

import (
	"testing"

	"github.com/mcpx-dev/mcpx/generated/mcp"
)

// TestBindCanonical: the params digest is of the values, not the bytes:
// member order, whitespace, string escapes and a fraction's spelling do
// not change it, nor do _meta, inputResponses and requestState; any other
// value does, integers beyond 2^53 included.
func TestBindCanonical(t *testing.T) {
	base := `{"name":"t","arguments":{"a":1.5,"b":[1,"x",{"z":null,"y":true}],"c":"é"}}`
	same := []string{
		`{ "arguments" : { "c":"\u00e9", "b":[1,"x",{"y":true,"z":null}], "a":15e-1 }, "name":"t" }`,
		"{\n\t\"name\": \"t\",\n\t\"arguments\": {\"a\": 1.50, \"b\": [1, \"x\", {\"z\": null, \"y\": true}], \"c\": \"é\"}\n}",
		`{"name":"t","arguments":{"a":1.5,"b":[1,"x",{"z":null,"y":true}],"c":"é"},"_meta":{"progressToken":7,"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}`,
		`{"name":"t","arguments":{"a":1.5,"b":[1,"x",{"z":null,"y":true}],"c":"é"},"inputResponses":{"k":{"action":"accept"}},"requestState":"mcpx1.abc"}`,
	}
	other := []string{
		`{"name":"t","arguments":{"a":1.5,"b":[1,"x",{"z":null,"y":false}],"c":"é"}}`,
		`{"name":"t","arguments":{"a":1.5,"b":["x",1,{"z":null,"y":true}],"c":"é"}}`, // array order is meaning
		`{"name":"t","arguments":{"a":1.5,"b":[1,"x",{"z":null,"y":true}],"c":"e"}}`,
		`{"name":"t","arguments":{"a":1.5,"b":[1,"x",{"z":null,"y":true}],"c":"é","_meta":{}}}`, // only the top-level _meta is unbound
		`{"name":"t","arguments":{"a":1.5,"b":[1,"x",{"z":null,"y":true}],"c":"é"},"task":{}}`,
		`{"name":"u","arguments":{"a":1.5,"b":[1,"x",{"z":null,"y":true}],"c":"é"}}`,
	}
	want := bind(t, "tools/call", base, "ns").Params
	for _, p := range same {
		if got := bind(t, "tools/call", p, "ns").Params; got != want {
			t.Errorf("%s: another digest than %s", p, base)
		}
	}
	for _, p := range other {
		if got := bind(t, "tools/call", p, "ns").Params; got == want {
			t.Errorf("%s: the digest of %s", p, base)
		}
	}
	if bind(t, "x", `{"id":9007199254740993}`, "").Params == bind(t, "x", `{"id":9007199254740992}`, "").Params {
		t.Error("two integers beyond 2^53 share a digest")
	}
	// No params, null and {} are one request; a bare _meta is none too.
	empty := bind(t, "x", `{}`, "").Params
	for _, p := range []string{``, `null`, ` `, `{"_meta":{"progressToken":1}}`} {
		if bind(t, "x", p, "").Params != empty {
			t.Errorf("%q: not the digest of {}", p)
		}
	}
	for _, p := range []string{`[1]`, `"s"`, `{"a":1,"a":2}`, "{\"a\":\"\xff\"}", `{`} {
		if _, err := Bind("x", []byte(p), ""); err == nil {
			t.Errorf("%q: bound", p)
		}
	}
}

// TestBindParams: hub params bind as their encoding does, so a handler,
// which has only hub values, binds the same request as the raw params.
func TestBindParams(t *testing.T) {
	p := &mcp.CallToolRequestParams{Name: "t", Arguments: []byte(`{"b":2, "a":1}`), RequestState: "s", Meta: mcp.Meta{"progressToken": []byte(`1`)}}
	got, err := BindParams("tools/call", p, "ns")
	if err != nil {
		t.Fatal(err)
	}
	if want := bind(t, "tools/call", `{"arguments":{"a":1,"b":2},"name":"t"}`, "ns"); got != want {
		t.Errorf("hub params: %x, raw: %x", got.Params, want.Params)
	}
}
