package gateway

import (
	"encoding/json"
	"testing"

	"github.com/mcpx-dev/mcpx/generated/mcp"
)

// TestMapBlocksAsCopied: mapBlocks answers what its copy of every block
// gave before, whether it shares the blocks or copies them, and shares
// them only when no block has a URI to expose.
func TestMapBlocksAsCopied(t *testing.T) {
	m := &member{name: "up"}
	text := mcp.ContentBlock{Value: &mcp.TextContent{Text: "hi"}}
	link := mcp.ContentBlock{Value: &mcp.ResourceLink{URI: "file:///a", Name: "a"}}
	embedded := mcp.ContentBlock{Value: &mcp.EmbeddedResource{Resource: mcp.EmbeddedResourceResource{Value: &mcp.TextResourceContents{URI: "file:///b", Text: "b"}}}}
	nilLink := mcp.ContentBlock{Value: (*mcp.ResourceLink)(nil)}
	for _, tc := range []struct {
		name   string
		blocks []mcp.ContentBlock
		shared bool
	}{
		{"empty", []mcp.ContentBlock{}, true},
		{"text", []mcp.ContentBlock{text, text}, true},
		{"nil link", []mcp.ContentBlock{text, nilLink}, true},
		{"link", []mcp.ContentBlock{text, link}, false},
		{"embedded", []mcp.ContentBlock{embedded, text}, false},
	} {
		old := make([]mcp.ContentBlock, len(tc.blocks)) // mapBlocks before
		for i, b := range tc.blocks {
			old[i] = mcp.ContentBlock{Value: m.mapBlock(b.Value)}
		}
		got := m.mapBlocks(tc.blocks)
		want, _ := json.Marshal(old)
		if b, _ := json.Marshal(got); string(b) != string(want) {
			t.Errorf("%s: %s, want %s", tc.name, b, want)
		}
		if shared := len(got) == 0 || &got[0] == &tc.blocks[0]; len(tc.blocks) > 0 && shared != tc.shared {
			t.Errorf("%s: shared %v, want %v", tc.name, shared, tc.shared)
		}
	}
}
