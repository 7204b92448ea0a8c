package edge

import (
	"github.com/mcpx-dev/mcpx/generated/mcp"
	"github.com/mcpx-dev/mcpx/internal/mcpjson"
)

// longText reports whether result holds a text or data of
// mcpjson.SplicedMin bytes or more (a tool's content, a resource's), the
// strings mcpjson.MarshalSpliced copies in instead of quoting, or a
// structured content that long (a raw value it may copy in as it is); its
// encoder costs about a microsecond more on a small result.
func longText(result any) bool {
	long := func(s string) bool { return len(s) >= mcpjson.SplicedMin }
	resource := func(v any) bool {
		switch r := v.(type) {
		case *mcp.TextResourceContents:
			return long(r.Text)
		case *mcp.BlobResourceContents:
			return long(r.Blob)
		}
		return false
	}
	switch r := result.(type) {
	case *mcp.CallToolResult:
		if len(r.StructuredContent) >= mcpjson.SplicedMin { // copied in as it is when already compact
			return true
		}
		for _, c := range r.Content {
			switch b := c.Value.(type) {
			case *mcp.TextContent:
				if long(b.Text) {
					return true
				}
			case *mcp.ImageContent:
				if long(b.Data) {
					return true
				}
			case *mcp.AudioContent:
				if long(b.Data) {
					return true
				}
			case *mcp.EmbeddedResource:
				if resource(b.Resource.Value) {
					return true
				}
			}
		}
	case *mcp.ReadResourceResult:
		for _, c := range r.Contents {
			if resource(c.Value) {
				return true
			}
		}
	}
	return false
}
