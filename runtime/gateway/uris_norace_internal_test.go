//go:build !race

package gateway

import (
	"testing"

	"github.com/mcpx-dev/mcpx/generated/mcp"
)

// TestMapBlocksTextAllocations: a result of text blocks has no URI to
// expose, and its blocks are not copied (one allocation before).
func TestMapBlocksTextAllocations(t *testing.T) {
	m := &member{name: "up"}
	blocks := []mcp.ContentBlock{{Value: &mcp.TextContent{Text: "hi"}}}
	if n := testing.AllocsPerRun(100, func() { m.mapBlocks(blocks) }); n != 0 {
		t.Errorf("mapBlocks of text: %v allocations, want 0", n)
	}
}
