package server

import "context"

type upstreamTaskKey struct{}

// WithUpstreamTask returns ctx whose call is told, through f, when the
// upstream behind it made the call a task of its own (the edge then makes
// it mcpx's task for a client that takes tasks, instead of waiting for a
// window the upstream has already outlasted).
func WithUpstreamTask(ctx context.Context, f func()) context.Context {
	return context.WithValue(ctx, upstreamTaskKey{}, f)
}

// UpstreamTask tells the call of ctx that its upstream answered with a
// task; nothing without WithUpstreamTask.
func UpstreamTask(ctx context.Context) {
	if f, _ := ctx.Value(upstreamTaskKey{}).(func()); f != nil {
		f()
	}
}

// DeclaresTasksExtension reports whether the client of ctx declared the
// 2026-07-28 tasks extension on its request.
func DeclaresTasksExtension(ctx context.Context) bool {
	_, ok := Extension(ClientCapabilities(ctx).Extensions, TasksExtension)
	return ok
}
