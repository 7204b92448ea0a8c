package server

import (
	"context"
	"encoding/json"
	"time"

	"github.com/mcpx-dev/mcpx/generated/mcp"
)

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

// TaskInput is the client's own task (mcpx's, of the 2026-07-28 tasks
// extension) a call runs behind, on which the call may pose questions
// directly: its client reads them all at once as the task's inputRequests
// on tasks/get and answers them key by key with tasks/update. An
// upstream's task that asks several questions at once is relayed through
// it as one round, each answer handed on as it comes (partial
// fulfillment), instead of one input_required round per question.
type TaskInput interface {
	// Pose adds qs (hub InputRequests, by keys unique over the caller's
	// life) to the task's outstanding questions and returns without
	// waiting; answered is given each answer (a hub InputResponse as the
	// client wrote it) once, as it comes, from any goroutine. A question
	// the client did not declare it can take is refused with the
	// *jsonrpc.Error the specification gives, and none of qs is posed.
	Pose(ctx context.Context, qs map[string]mcp.InputRequest, answered func(key string, resp json.RawMessage)) error
	// Withdraw takes keys posed and not answered off the task (the
	// caller no longer needs their answers).
	Withdraw(ctx context.Context, keys []string)
}

type taskInputKey struct{}

// WithTaskInput returns ctx whose call may find, through of, the task it
// runs behind (see TaskInputOf).
func WithTaskInput(ctx context.Context, of func(ctx context.Context) TaskInput) context.Context {
	return context.WithValue(ctx, taskInputKey{}, of)
}

// TaskInputOf is the client's task the call of ctx runs behind, or nil
// when it runs behind none that takes questions this way (a legacy
// client, a 2026-07-28 call answered inline). It may wait, bounded by
// ctx, for the edge to decide whether the call is a task (after
// UpstreamTask it does at once). Each call returns a TaskInput of its
// own, whose keys do not meet another's.
func TaskInputOf(ctx context.Context) TaskInput {
	if of, _ := ctx.Value(taskInputKey{}).(func(context.Context) TaskInput); of != nil {
		return of(ctx)
	}
	return nil
}

type followLimitKey struct{}

// WithFollowLimit returns ctx saying how long the call may wait on an
// upstream's task it follows: the time to live of the client's task (its
// answer has nowhere to go after that), or for a call behind no task the
// time a task would be kept (the client is held no longer than a task of
// its would be).
func WithFollowLimit(ctx context.Context, d time.Duration) context.Context {
	return context.WithValue(ctx, followLimitKey{}, d)
}

// FollowLimit is the limit WithFollowLimit set, or 0 for none.
func FollowLimit(ctx context.Context) time.Duration {
	switch v := ctx.Value(followLimitKey{}).(type) {
	case time.Duration:
		return v
	case *requestCtx:
		return v.r.FollowLimit
	}
	return 0
}

// TaskParker runs the follow of an upstream's task apart from the client
// request whose call the upstream made a task (the gateway's parked
// calls, for a 2026-07-28 client: a task's question parks the call and
// answers the request with it). A call whose upstream may make a task
// but asks nothing otherwise can so be made in the request's goroutine,
// parked only when a task comes, rather than parked from its start.
type TaskParker interface {
	// ParkTask runs follow (given the context the follow is to run in,
	// which the client's request does not end) and returns the request's
	// answer: the call's result, or its first question. follow is run
	// once, and ParkTask is called at most once per call.
	ParkTask(ctx context.Context, follow func(ctx context.Context) (any, error)) (any, error)
}

type taskParkerKey struct{}

// WithTaskParker returns ctx whose call's upstream task, if it makes one,
// is followed through p.
func WithTaskParker(ctx context.Context, p TaskParker) context.Context {
	return context.WithValue(ctx, taskParkerKey{}, p)
}

// TaskParkerOf is the TaskParker of ctx's call, or nil: the task is then
// followed in the call.
func TaskParkerOf(ctx context.Context) TaskParker {
	p, _ := ctx.Value(taskParkerKey{}).(TaskParker)
	return p
}
