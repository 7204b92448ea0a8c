package server

import "context"

type sessionKey struct{}

type clientSession struct {
	id   uint64
	done <-chan struct{}
}

// WithClientSession returns ctx saying which client session its request
// belongs to: id identifies the session (never 0, the same for every
// request of it) and done is closed when the session ends. The edge sets
// it for a legacy client's initialized session only; a 2026-07-28 client
// has no session (each request stands alone), and its requests carry none.
func WithClientSession(ctx context.Context, id uint64, done <-chan struct{}) context.Context {
	return context.WithValue(ctx, sessionKey{}, clientSession{id, done})
}

// ClientSession returns the client session of the request ctx belongs
// to, as [WithClientSession] set it; ok is false when there is none.
func ClientSession(ctx context.Context) (id uint64, done <-chan struct{}, ok bool) {
	switch s := ctx.Value(sessionKey{}).(type) {
	case clientSession:
		return s.id, s.done, true
	case *requestCtx:
		return s.r.Session, s.r.SessionDone, true
	}
	return 0, nil, false
}

// Client is the id of the client session ctx's request belongs to, or 0
// when it has none (a 2026-07-28 request, or a context the edge did not
// make).
func Client(ctx context.Context) uint64 {
	id, _, _ := ClientSession(ctx)
	return id
}
