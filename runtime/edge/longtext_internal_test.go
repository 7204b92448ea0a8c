package edge

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/mcpx-dev/mcpx/generated/mcp"
	"github.com/mcpx-dev/mcpx/internal/mcpjson"
	"github.com/mcpx-dev/mcpx/runtime/server"
)

// TestEncodePooledLongText: a result with a long text, data or resource
// is written spliced (longText) and the bytes are encodeResult's, in
// every revision.
func TestEncodePooledLongText(t *testing.T) {
	text := strings.Repeat(`{"a":"<b>\n"} `, 200)
	results := []any{
		&mcp.CallToolResult{Content: []mcp.ContentBlock{{Value: &mcp.TextContent{Text: text}}}},
		&mcp.CallToolResult{Content: []mcp.ContentBlock{{Value: &mcp.TextContent{Text: "short"}}, {Value: &mcp.ImageContent{Data: strings.Repeat("aGk=", 400), MIMEType: "image/png"}}}},
		&mcp.CallToolResult{Content: []mcp.ContentBlock{{Value: &mcp.AudioContent{Data: strings.Repeat("aGk=", 400), MIMEType: "audio/wav"}}}},
		&mcp.CallToolResult{Content: []mcp.ContentBlock{{Value: &mcp.EmbeddedResource{Resource: mcp.EmbeddedResourceResource{Value: &mcp.TextResourceContents{URI: "u", Text: text}}}}}},
		&mcp.CallToolResult{Content: []mcp.ContentBlock{{Value: &mcp.TextContent{Text: "short"}}}, StructuredContent: json.RawMessage(`{"a":"` + strings.Repeat("x", 2000) + `","b":[1,true]}`)},
		&mcp.CallToolResult{Content: []mcp.ContentBlock{{Value: &mcp.TextContent{Text: "short"}}}, StructuredContent: json.RawMessage(`{"a": "` + strings.Repeat("<", 2000) + `"}`)},
		&mcp.ReadResourceResult{Contents: []mcp.ReadResourceResultContentsItem{{Value: &mcp.BlobResourceContents{URI: "u", Blob: strings.Repeat("aGk=", 400)}}}},
	}
	e := &Edge{Server: &server.Server{Info: mcp.Implementation{Name: "t", Version: "1"}}}
	for i, r := range results {
		if !longText(r) {
			t.Errorf("result %d: longText false", i)
		}
		for _, rev := range mcp.Revisions {
			want, err := e.encodeResult(rev, r)
			if err != nil {
				t.Fatal(err)
			}
			got, err := e.encodePooled(rev, r)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got.Bytes(), want) {
				t.Errorf("result %d, %s: encodePooled\n%.200s\nencodeResult\n%.200s", i, rev, got.Bytes(), want)
			}
			got.Free()
		}
	}
	if longText(&mcp.CallToolResult{Content: []mcp.ContentBlock{{Value: &mcp.TextContent{Text: text[:mcpjson.SplicedMin-1]}}}}) {
		t.Error("longText true for a text under SplicedMin")
	}
}
