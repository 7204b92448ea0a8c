package server

import "context"

// A legacy client's notifications/roots/list_changed says its roots
// changed: whoever answered roots/list from it should ask again. The edge
// tells the namespace which client it was; the calls that client made
// carry the same token, so a namespace can tell the upstreams they used.

// RootsWatcher is implemented by a namespace that passes a client's
// roots change on (the gateway, to its legacy upstreams). RootsChanged
// must not block: the transport's reader calls it.
type RootsWatcher interface {
	RootsChanged(client uint64)
}

type clientKey struct{}

// WithClient returns ctx naming the legacy client session a request comes
// from, by a token of the edge's (never 0).
func WithClient(ctx context.Context, client uint64) context.Context {
	return context.WithValue(ctx, clientKey{}, client)
}

// Client is the token of the legacy client session ctx's request comes
// from, or 0 (a 2026-07-28 request, which has no session, or a context
// the edge did not make).
func Client(ctx context.Context) uint64 {
	n, _ := ctx.Value(clientKey{}).(uint64)
	return n
}
