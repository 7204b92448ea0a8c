// Package gateway is a server.Namespace made of upstream MCP servers: each
// configured server is a namespace whose tools and prompts get a prefix and
// whose resources live under mcpx://<namespace>/, merged into one list.
package gateway

import (
	"context"

	"github.com/mcpx-dev/mcpx/generated/mcp"
)

// Upstream is one upstream MCP server as the gateway sees it: hub types in
// and out, whatever revision the server speaks (the upstream client
// converts at the edge). Implementations connect on first use or ahead of
// it, and must be safe for concurrent use.
//
// Errors: a JSON-RPC error the upstream answered is returned as a
// *jsonrpc.Error with the upstream's code and message (so -32002 and
// -32602 on resources/read can be recognised); a failure to reach or run
// the upstream (not started, crashed, timed out) is any other error, whose
// text names the upstream. Each method honours ctx: when it is cancelled
// the request is cancelled upstream too.
//
// A handler's ctx carries the client's server.Notifier: the upstream
// client forwards the upstream's progress (and log messages) for the
// request through server.Progress and server.Log.
type Upstream interface {
	// Name is the namespace, from the config.
	Name() string
	// Capabilities are what the upstream declared (connecting if needed).
	Capabilities(ctx context.Context) (mcp.ServerCapabilities, error)

	ListTools(ctx context.Context, cursor string) (*mcp.ListToolsResult, error)
	CallTool(ctx context.Context, p *mcp.CallToolRequestParams) (*mcp.CallToolResult, error)
	ListResources(ctx context.Context, cursor string) (*mcp.ListResourcesResult, error)
	ListResourceTemplates(ctx context.Context, cursor string) (*mcp.ListResourceTemplatesResult, error)
	ReadResource(ctx context.Context, p *mcp.ReadResourceRequestParams) (*mcp.ReadResourceResult, error)
	ListPrompts(ctx context.Context, cursor string) (*mcp.ListPromptsResult, error)
	GetPrompt(ctx context.Context, p *mcp.GetPromptRequestParams) (*mcp.GetPromptResult, error)
	Complete(ctx context.Context, p *mcp.CompleteRequestParams) (*mcp.CompleteResult, error)

	// Changes delivers the upstream's list_changed notifications, by method
	// name ("notifications/tools/list_changed", ...), and a synthetic
	// "down" / "up" when the upstream becomes unreachable or reachable
	// again. It is never closed before Close.
	Changes() <-chan string
	// Close stops the upstream (its process, its connection).
	Close() error
}
