package server

import "context"

type sessionKey struct{}

type clientSession struct {
	id   any
	done <-chan struct{}
}

// WithClientSession returns ctx saying which client session its request
// belongs to: id identifies the session (comparable, the same for every
// request of it) and done is closed when the session ends. The edge sets
// it for a legacy client's initialized session only; a 2026-07-28 client
// has no session (each request stands alone), and its requests carry none.
func WithClientSession(ctx context.Context, id any, done <-chan struct{}) context.Context {
	return context.WithValue(ctx, sessionKey{}, clientSession{id, done})
}

// ClientSession returns the client session of the request ctx belongs
// to, as [WithClientSession] set it; ok is false when there is none.
func ClientSession(ctx context.Context) (id any, done <-chan struct{}, ok bool) {
	s, ok := ctx.Value(sessionKey{}).(clientSession)
	return s.id, s.done, ok
}
