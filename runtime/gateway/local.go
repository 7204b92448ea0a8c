package gateway

import (
	"context"

	"github.com/mcpx-dev/mcpx/generated/mcp"
	"github.com/mcpx-dev/mcpx/runtime/server"
)

// Local makes a namespace that lives in mcpx (the tools mcpx makes itself
// from an OpenAPI document or a command line) an [Upstream], so that it is
// named, listed, routed and converted exactly as an MCP server is: calls
// reach ns through the same generated dispatch the server uses. Its lists
// never change while it runs; a reload replaces it.
func Local(name string, ns server.Namespace) Upstream {
	// A server answers the list methods whole (one page) and paginates
	// nothing the gateway has to follow.
	return &local{name: name, ns: ns, srv: &server.Server{NS: ns, PageSize: 1 << 20}, changes: make(chan string)}
}

type local struct {
	name    string
	ns      server.Namespace
	srv     *server.Server
	changes chan string
}

func (l *local) Name() string { return l.name }

func (l *local) Capabilities(context.Context) (mcp.ServerCapabilities, error) {
	return l.ns.Capabilities(), nil
}

// Call answers as a server serving the namespace does.
func (l *local) Call(ctx context.Context, method string, params any) (any, error) {
	return l.srv.Handle(ctx, method, params)
}

func (l *local) Changes() <-chan string { return l.changes }

func (l *local) Close() error { return nil }

// AsksByRequest is false: a local namespace asks its questions through
// the request's own context (server.Ask, input_required), never by a
// request of its own to be parked.
func (l *local) AsksByRequest() bool { return false }
