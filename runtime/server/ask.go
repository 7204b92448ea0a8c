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

// Ask puts a question to the client of the request ctx belongs to; see
// [Asker]. It waits, bounded by ctx and the edge's own timeout.
func Ask(ctx context.Context, method string, params any) (any, error) {
	a, _ := ctx.Value(askerKey{}).(Asker)
	if a == nil {
		return nil, ErrNoAsker
	}
	return a.Ask(ctx, method, params)
}
