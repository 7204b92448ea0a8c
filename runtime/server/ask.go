package server

import (
	"context"
	"errors"
)

// Asker puts a question (a server-to-client request: sampling/createMessage,
// elicitation/create, roots/list) to the client a request belongs to, and
// waits for its answer. The edge installs one in every handler's context.
type Asker interface {
	// Ask sends method with params (a pointer to the method's hub params
	// type) to the client and returns its result as a pointer to the hub
	// result type. A question the client cannot take (it did not declare
	// the capability, its revision has no such method or cannot carry the
	// content) fails with a *jsonrpc.Error carrying the code the
	// specification gives, without reaching the client; so does an
	// error the client answers with.
	Ask(ctx context.Context, method string, params any) (any, error)
}

type askerKey struct{}

// WithAsker returns ctx carrying a.
func WithAsker(ctx context.Context, a Asker) context.Context {
	return context.WithValue(ctx, askerKey{}, a)
}

// ErrNoAsker says the request ctx belongs to has no client that can be
// asked anything (a context the edge did not make).
var ErrNoAsker = errors.New("the request has no client to ask")

// CanAsk reports whether ctx belongs to a request with a client that can
// be asked (one the edge made), as opposed to mcpx's own work, such as
// loading an upstream's lists.
func CanAsk(ctx context.Context) bool {
	a, _ := ctx.Value(askerKey{}).(Asker)
	return a != nil
}

// Ask puts a question to the client of the request ctx belongs to; see
// [Asker]. It waits, bounded by ctx and the edge's own timeout.
func Ask(ctx context.Context, method string, params any) (any, error) {
	a, _ := ctx.Value(askerKey{}).(Asker)
	if a == nil {
		return nil, ErrNoAsker
	}
	return a.Ask(ctx, method, params)
}

// LaterNotifier is implemented by an Asker whose client can be told
// something after the request that asked has ended: a legacy session's
// unasked stream (stdio, the Streamable HTTP GET stream), or the call's
// own stream while it runs. notifications/elicitation/complete needs it.
type LaterNotifier interface {
	// Later returns the function that sends the client a notification
	// (method, hub params) in its revision, reporting whether it went; nil
	// when the client has no stream a notification could go on later (a
	// 2026-07-28 client).
	Later() func(method string, params any) bool
}

// Later is [LaterNotifier.Later] of the asker in ctx, or nil.
func Later(ctx context.Context) func(method string, params any) bool {
	if l, ok := ctx.Value(askerKey{}).(LaterNotifier); ok {
		return l.Later()
	}
	return nil
}
