package convtest

import (
	"encoding/json"
	"testing"

	"github.com/mcpx-dev/mcpx/generated/convert"
	"github.com/mcpx-dev/mcpx/generated/mcp"
	"github.com/mcpx-dev/mcpx/generated/revision"
)

// TestReservedMetaValuesConverted: a reserved _meta key's value is converted
// like any member. The hub's ClientCapabilities has members the newest
// revision lacks (from the tables); a hub _meta whose clientCapabilities
// carries one is downgraded to the newest revision with that member gone,
// closed-world valid there, and the hub value left unchanged.
func TestReservedMetaValuesConverted(t *testing.T) {
	v := validator(t)
	newest := revision.Tables[0]
	caps, ok := newest.Type("ClientCapabilities")
	if !ok || len(caps.Dropped) == 0 || len(caps.Fields) == 0 {
		t.Skipf("%s's ClientCapabilities has the hub's members exactly; nothing to convert", newest.Revision)
	}
	dropped, kept := caps.Dropped[0], caps.Fields[0]
	value := json.RawMessage(`{"` + dropped + `": {}, "` + kept + `": {}}`)
	if err := v.Validate(string(newest.Revision), "ClientCapabilities", value); err == nil {
		t.Fatalf("%s is closed-world valid in %s; the test needs a member it lacks", value, newest.Revision)
	}
	in := &mcp.CallToolRequestParams{Name: "echo", Meta: mcp.Meta{
		mcp.MetaKeyProtocolVersion:    json.RawMessage(`"` + string(newest.Revision) + `"`),
		mcp.MetaKeyClientCapabilities: value,
		"example.com/other":           json.RawMessage(`{"` + dropped + `":1}`),
	}}
	w, err := convert.Downgrade(newest.Revision, in)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(w)
	var out struct {
		Meta map[string]json.RawMessage `json:"_meta"`
	}
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	got := out.Meta[mcp.MetaKeyClientCapabilities]
	if err := v.Validate(string(newest.Revision), "ClientCapabilities", got); err != nil {
		t.Errorf("downgraded clientCapabilities %s: %v", got, err)
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(got, &m) != nil || m[kept] == nil || m[dropped] != nil {
		t.Errorf("downgraded clientCapabilities = %s, want %q kept and %q gone", got, kept, dropped)
	}
	if string(out.Meta["example.com/other"]) != `{"`+dropped+`":1}` {
		t.Errorf("an unreserved key changed: %s", out.Meta["example.com/other"])
	}
	if string(in.Meta[mcp.MetaKeyClientCapabilities]) != string(value) {
		t.Errorf("the hub value was changed: %s", in.Meta[mcp.MetaKeyClientCapabilities])
	}
}

// TestReservedMetaSharedWhenSame: a _meta whose reserved values need no
// conversion is the same map after a downgrade (no copy per message).
func TestReservedMetaSharedWhenSame(t *testing.T) {
	newest := revision.Tables[0]
	in := &mcp.CallToolRequestParams{Name: "echo", Meta: mcp.Meta{mcp.MetaKeyProtocolVersion: json.RawMessage(`"x"`), "progressToken": json.RawMessage(`1`)}}
	w, err := convert.Downgrade(newest.Revision, in)
	if err != nil {
		t.Fatal(err)
	}
	out, _ := json.Marshal(w)
	in.Meta["progressToken"] = json.RawMessage(`2`)
	again, _ := json.Marshal(w)
	if string(out) == string(again) {
		t.Errorf("the downgrade copied a _meta it did not have to change")
	}
}
