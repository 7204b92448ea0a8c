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

	// Call sends a request in hub types and returns its hub result: the
	// generated mcp.<Method> functions (mcp.ListTools, mcp.CallTool, ...)
	// call through it, and the gateway forwards every routed method with
	// it. A method the upstream's revision lacks is a -32601
	// *jsonrpc.Error whose message names the upstream and its revision.
	mcp.Caller

	// Changes delivers the upstream's list_changed notifications, by method
	// name ("notifications/tools/list_changed", ...), and a synthetic
	// "down" / "up" when the upstream becomes unreachable or reachable
	// again. It is never closed before Close.
	Changes() <-chan string
	// Close stops the upstream (its process, its connection).
	Close() error
}
