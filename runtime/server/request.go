package server

import (
	"context"
	"sync"
	"time"

	"github.com/mcpx-dev/mcpx/generated/mcp"
)

// Request is what the edge tells a namespace about one request: what
// [WithTakesInputRequired], [WithNotifier], [WithClientCapabilities],
// [WithAsker], [WithClientSession], [WithRelayedCapabilities] and
// [WithFollowLimit] would each say, and the request's [ResultLane], given
// at once. [WithRequest] carries it in one context frame
// instead of seven (each a frame of its own, two of them with closures),
// which every lookup of a handler's context below the edge walks.
type Request struct {
	TakesInputRequired bool
	Notifier           Notifier // nil: none
	Asker              Asker    // nil: none
	// Session and SessionDone are the client session, as
	// WithClientSession gives them; Session 0 is none.
	Session     uint64
	SessionDone <-chan struct{}
	// Caps reads the capabilities the client declared, and those a
	// gateway may declare upstream on its behalf; each is asked at most
	// once, the first time a handler needs it. nil: nothing declared, and
	// no client to declare for.
	Caps RequestCaps
	// FollowLimit is what WithFollowLimit would say; 0: the parent's.
	FollowLimit time.Duration
	// Lane is the request's [ResultLane]; nil: none.
	Lane ResultLane
}

// RequestCaps reads a request's capabilities for [Request].
type RequestCaps interface {
	// ClientCapabilities is what the client declared (see
	// WithClientCapabilities).
	ClientCapabilities() *mcp.ClientCapabilities
	// RelayedCapabilities is what may be declared upstream for the client
	// that declared declared (see WithRelayedCapabilities).
	RelayedCapabilities(declared *mcp.ClientCapabilities) *mcp.ClientCapabilities
}

// WithRequest returns ctx carrying r, as the functions [Request]
// names would, applied in that order: a value set on the result by any of
// them afterwards is the one read, as with context values.
func WithRequest(ctx context.Context, r Request) context.Context {
	return &requestCtx{Context: ctx, r: r}
}

// requestCtx is a context answering for the keys of a Request.
type requestCtx struct {
	context.Context
	r Request

	capsOnce, relayedOnce sync.Once
	caps, relayed         *mcp.ClientCapabilities
}

func (c *requestCtx) Value(key any) any {
	switch key.(type) {
	case takesInputKey:
		return c.r.TakesInputRequired
	case notifierKey:
		return c.r.Notifier
	case askerKey:
		return c.r.Asker
	case sessionKey:
		if c.r.Session != 0 {
			return c
		}
	case followLimitKey:
		if c.r.FollowLimit != 0 {
			return c
		}
	case resultLaneKey:
		if c.r.Lane != nil {
			return c.r.Lane
		}
	case clientCapsKey, relayedCapsKey:
		if c.r.Caps != nil {
			return c
		}
	}
	return c.Context.Value(key)
}

func (c *requestCtx) clientCapabilities() *mcp.ClientCapabilities {
	c.capsOnce.Do(func() { c.caps = c.r.Caps.ClientCapabilities() })
	return c.caps
}

func (c *requestCtx) relayedCapabilities() *mcp.ClientCapabilities {
	c.relayedOnce.Do(func() { c.relayed = c.r.Caps.RelayedCapabilities(ClientCapabilities(c)) })
	return c.relayed
}
