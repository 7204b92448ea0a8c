//go:build !race

package edge

import (
	"encoding/json"
	"testing"

	"github.com/mcpx-dev/mcpx/generated/mcp"
)

// Not under -race, which empties the JSON encoder's pools.

// TestRequestForAllocations: a forwarded tools/call to an upstream of the
// hub's own revision costs its downgraded params and the encoded bytes:
// the _meta is not copied (two allocations), the empty client
// capabilities not encoded (one), and, by the generated downgrade, not
// decoded and encoded again (three, and a copy of the map: 9 in all
// before).
func TestRequestForAllocations(t *testing.T) {
	d := testDialect(mcp.Revisions[0])
	p := &mcp.CallToolRequestParams{Name: "echo", Arguments: json.RawMessage(`{"text":"hi"}`), Meta: mcp.Meta{
		protocolVersionKey: json.RawMessage(`"` + string(mcp.Revisions[0]) + `"`), clientCapabilitiesKey: json.RawMessage(`{}`)}}
	caps := &mcp.ClientCapabilities{}
	if n := testing.AllocsPerRun(100, func() {
		if _, err := d.RequestFor(mcp.MethodToolsCall, p, nil, mcp.LoggingLevelInfo, caps); err != nil {
			t.Fatal(err)
		}
	}); n > 2 {
		t.Errorf("%v allocations, want 2", n)
	}
}

// TestRequestForDeclaredCapabilitiesAllocations: capabilities a client
// declared (each request its own value, as relayable makes them) are
// encoded in the upstream's revision once, set after the downgrade: the
// call costs what one declaring nothing does (10 before: encoded as hub
// JSON, then decoded, converted and encoded again by the downgrade).
func TestRequestForDeclaredCapabilitiesAllocations(t *testing.T) {
	d := testDialect(mcp.Revisions[0])
	p := &mcp.CallToolRequestParams{Name: "echo", Arguments: json.RawMessage(`{"text":"hi"}`), Meta: mcp.Meta{
		protocolVersionKey: json.RawMessage(`"` + string(mcp.Revisions[0]) + `"`), clientCapabilitiesKey: json.RawMessage(`{"elicitation":{"form":{}},"roots":{}}`)}}
	declared := []*mcp.ClientCapabilities{
		{Elicitation: &mcp.ClientCapabilitiesElicitation{Form: json.RawMessage(`{}`)}, Roots: json.RawMessage(`{}`)},
		{Elicitation: &mcp.ClientCapabilitiesElicitation{Form: json.RawMessage(`{}`)}, Roots: json.RawMessage(`{}`)},
	}
	i := 0
	if n := testing.AllocsPerRun(100, func() {
		i++
		if _, err := d.RequestFor(mcp.MethodToolsCall, p, nil, "", declared[i%2]); err != nil {
			t.Fatal(err)
		}
	}); n > 2 {
		t.Errorf("%v allocations, want 2", n)
	}
}

// BenchmarkRequestFor is a forwarded tools/call's request to a 2026-07-28
// upstream, for a client declaring nothing and for one declaring
// elicitation and roots.
func BenchmarkRequestFor(b *testing.B) {
	d := testDialect(mcp.Rev20260728)
	for name, declared := range map[string]string{"none": `{}`, "declared": `{"elicitation":{"form":{}},"roots":{}}`} {
		b.Run(name, func(b *testing.B) {
			p := &mcp.CallToolRequestParams{Name: "echo", Arguments: json.RawMessage(`{"text":"hi"}`), Meta: mcp.Meta{
				protocolVersionKey: json.RawMessage(`"2026-07-28"`), clientCapabilitiesKey: json.RawMessage(declared)}}
			b.ReportAllocs()
			for range b.N {
				caps := new(mcp.ClientCapabilities)
				if err := json.Unmarshal([]byte(declared), caps); err != nil {
					b.Fatal(err)
				}
				if _, err := d.RequestFor(mcp.MethodToolsCall, p, nil, "", caps); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
