//go:build !race

package mcpjson_test

import (
	"encoding/json"
	"testing"

	"github.com/mcpx-dev/mcpx/generated/mcp"
	"github.com/mcpx-dev/mcpx/internal/mcpjson"
)

// TestMetaMarshalAllocations: a _meta is written without reflecting on
// the map (two allocations a member, and more to sort them, before
// Meta.MarshalJSONTo): only the output's own. Not under -race, which
// empties the encoder's pools.
func TestMetaMarshalAllocations(t *testing.T) {
	m := mcp.Meta{"io.modelcontextprotocol/protocolVersion": json.RawMessage(`"2026-07-28"`),
		"io.modelcontextprotocol/clientCapabilities": json.RawMessage(`{}`), "io.modelcontextprotocol/clientInfo": json.RawMessage(`{"name":"mcpx","version":"1"}`)}
	v := struct {
		Meta mcp.Meta `json:"_meta"`
	}{m}
	if n := testing.AllocsPerRun(100, func() { mcpjson.Marshal(&v) }); n > 2 {
		t.Errorf("a _meta of 3 members: %v allocations, want at most 2", n)
	}
}
