package edge_test

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"

	"github.com/mcpx-dev/mcpx/generated/convert"
	"github.com/mcpx-dev/mcpx/generated/mcp"
	"github.com/mcpx-dev/mcpx/internal/mcpjson"
)

// metaOf is the _meta of a downgraded request's params.
func metaOf(t *testing.T, v any) mcp.Meta {
	t.Helper()
	m := reflect.ValueOf(v).Elem().FieldByName("Meta")
	if !m.IsValid() {
		t.Fatalf("%T has no Meta", v)
	}
	return m.Interface().(mcp.Meta)
}

// TestMetaDowngradeAsConverted: a reserved _meta value the downgrade
// converts (clientCapabilities, whose hub type has 2025-11-25's tasks) is
// what decoding it, converting it and encoding it again gives, or kept as
// it is when it does not decode; one the conversion leaves as it is ({},
// a value already in the revision's shape) keeps the hub's map, uncopied.
// The hub's map is never changed.
func TestMetaDowngradeAsConverted(t *testing.T) {
	const key = mcp.MetaKeyClientCapabilities
	for _, raw := range []string{
		`{}`,
		`{ }`,
		`{"elicitation":{"form":{}}}`,
		`{"elicitation":{"form":{}},"extensions":{"io.modelcontextprotocol/tasks":{}},"roots":{},"sampling":{"tools":{}}}`,
		`{"roots": {}, "elicitation": {}}`,
		`{"tasks":{"list":{}},"roots":{}}`,
		`{"roots":{},"tasks":{}}`,
		`{"experimental":{"a":[1, 2]}}`,
		`[1]`,
		`"x"`,
		`null`,
	} {
		in := mcp.Meta{key: json.RawMessage(raw), mcp.MetaKeyProtocolVersion: json.RawMessage(`"2026-07-28"`), "x.y/z": json.RawMessage(`1`)}
		hub := &mcp.CallToolRequestParams{Name: "t", Meta: in}
		wire, err := convert.Downgrade(mcp.Rev20260728, hub)
		if err != nil {
			t.Fatal(err)
		}
		got := metaOf(t, wire)

		// The conversion spelled out: decode, downgrade, encode.
		want := json.RawMessage(raw)
		var a mcp.ClientCapabilities
		if mcpjson.Unmarshal(want, &a) == nil {
			b, err := convert.Downgrade(mcp.Rev20260728, &a)
			if err != nil {
				t.Fatal(err)
			}
			if want, err = json.Marshal(b); err != nil {
				t.Fatal(err)
			}
		}
		if !bytes.Equal(got[key], want) || len(got) != 3 || string(got["x.y/z"]) != `1` {
			t.Errorf("%s: downgraded to %s (%d members), want %s", raw, got[key], len(got), want)
		}
		if string(in[key]) != raw || len(in) != 3 {
			t.Errorf("%s: the hub's _meta changed: %s", raw, in[key])
		}
		shared := reflect.ValueOf(got).UnsafePointer() == reflect.ValueOf(in).UnsafePointer()
		if unchanged := bytes.Equal(want, []byte(raw)); shared != unchanged {
			t.Errorf("%s: map shared %v, value unchanged %v", raw, shared, unchanged)
		}
	}
}

// TestMetaDowngradeNoOpAllocations: a request's _meta whose
// clientCapabilities is {} (what mcpx declares for most clients) is
// downgraded to the hub's own revision without decoding the value or
// copying the map: the downgraded params are the only allocation (7
// before: the value decoded, converted and encoded, and the map copied).
func TestMetaDowngradeNoOpAllocations(t *testing.T) {
	p := &mcp.CallToolRequestParams{Name: "t", Meta: mcp.Meta{
		mcp.MetaKeyProtocolVersion:    json.RawMessage(`"` + string(mcp.Revisions[0]) + `"`),
		mcp.MetaKeyClientCapabilities: json.RawMessage(`{}`),
		mcp.MetaKeyClientInfo:         json.RawMessage(`{"name":"mcpx","version":"1"}`),
	}}
	if n := testing.AllocsPerRun(100, func() { _, _ = convert.Downgrade(mcp.Revisions[0], p) }); n > 1 {
		t.Errorf("%v allocations, want 1", n)
	}
}
