package server

import (
	"context"
	"sync"

	"github.com/mcpx-dev/mcpx/generated/mcp"
)

type relayedCapsKey struct{}

// WithRelayedCapabilities returns ctx carrying what a gateway may declare
// to a 2026-07-28 upstream on behalf of the request's client: the client's
// capabilities limited to the questions mcpx can relay to that client's
// revision (the edge decides, see edge.relayable). caps is read the first
// time an upstream request is built.
func WithRelayedCapabilities(ctx context.Context, caps func() *mcp.ClientCapabilities) context.Context {
	return context.WithValue(ctx, relayedCapsKey{}, sync.OnceValue(caps))
}

// RelayedCapabilities returns what WithRelayedCapabilities installed, or
// nil when ctx belongs to no client's request (mcpx's own requests: the
// list loads a gateway shares between clients), which declares nothing.
func RelayedCapabilities(ctx context.Context) *mcp.ClientCapabilities {
	switch v := ctx.Value(relayedCapsKey{}).(type) {
	case func() *mcp.ClientCapabilities:
		return v()
	case *requestCtx:
		return v.relayedCapabilities()
	}
	return nil
}
