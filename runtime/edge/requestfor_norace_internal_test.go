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
	d := testDialect(mcp.Rev20260728)
	p := &mcp.CallToolRequestParams{Name: "echo", Arguments: json.RawMessage(`{"text":"hi"}`), Meta: mcp.Meta{
		protocolVersionKey: json.RawMessage(`"2026-07-28"`), clientCapabilitiesKey: json.RawMessage(`{}`)}}
	caps := &mcp.ClientCapabilities{}
	if n := testing.AllocsPerRun(100, func() {
		if _, err := d.RequestFor(mcp.MethodToolsCall, p, nil, mcp.LoggingLevelInfo, caps); err != nil {
			t.Fatal(err)
		}
	}); n > 2 {
		t.Errorf("%v allocations, want 2", n)
	}
}
