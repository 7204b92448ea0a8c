package catalog

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/mcpx-dev/mcpx/generated/mcp"
)

// TextResult returns a successful tool result holding one text block.
func TextResult(text string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.ContentBlock{{Value: &mcp.TextContent{Text: text}}}}
}

// ErrorResult returns a tool result with isError set and the formatted
// message as its text: how a tool reports a failure the model can read and
// act on, rather than a protocol error it would never see.
func ErrorResult(format string, args ...any) *mcp.CallToolResult {
	r := TextResult(fmt.Sprintf(format, args...))
	r.IsError = mcp.Ptr(true)
	return r
}

// StructuredResult returns a successful result whose structuredContent is v
// encoded as JSON. The same JSON is also its text block, as the
// specification asks, for clients that do not read structured content.
func StructuredResult(v any) (*mcp.CallToolResult, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("encode structured content: %w", err)
	}
	r := TextResult(string(b))
	r.StructuredContent = b
	return r, nil
}

// Typed adapts a function taking decoded arguments to a [ToolHandler]. The
// arguments have already passed the tool's inputSchema, so a decode error
// means the schema and In disagree; it is still reported as a tool error.
func Typed[In any](f func(ctx context.Context, in In) (*mcp.CallToolResult, error)) ToolHandler {
	return func(ctx context.Context, args json.RawMessage) (*mcp.CallToolResult, error) {
		var in In
		if err := json.Unmarshal(args, &in); err != nil {
			return ErrorResult("invalid arguments: %v", err), nil
		}
		return f(ctx, in)
	}
}

// Text returns resource contents holding text.
func Text(uri, mimeType, text string) mcp.ReadResourceResultContentsItem {
	return mcp.ReadResourceResultContentsItem{Value: &mcp.TextResourceContents{URI: uri, MIMEType: mimeType, Text: text}}
}

// Blob returns resource contents holding binary data, base64-encoded.
func Blob(uri, mimeType string, data []byte) mcp.ReadResourceResultContentsItem {
	return mcp.ReadResourceResultContentsItem{Value: &mcp.BlobResourceContents{
		URI: uri, MIMEType: mimeType, Blob: base64.StdEncoding.EncodeToString(data),
	}}
}

// Static returns a [ReadFunc] that always returns items: the read function
// of a resource whose content never changes.
func Static(items ...mcp.ReadResourceResultContentsItem) ReadFunc {
	return func(context.Context) ([]mcp.ReadResourceResultContentsItem, error) {
		return slices.Clone(items), nil
	}
}

// Suggest returns the values that start with prefix, ignoring case, in the
// order given: the completion result for a closed set of values.
func Suggest(prefix string, values ...string) *mcp.CompleteResult {
	out := []string{}
	p := strings.ToLower(prefix)
	for _, v := range values {
		if strings.HasPrefix(strings.ToLower(v), p) {
			out = append(out, v)
		}
	}
	return &mcp.CompleteResult{Completion: mcp.CompleteResultCompletion{
		Values: out, Total: mcp.Ptr(int64(len(out))), HasMore: mcp.Ptr(false),
	}}
}
