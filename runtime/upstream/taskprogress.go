package upstream

import (
	"context"
	"encoding/json"
	"math"
	"sync"

	"github.com/mcpx-dev/mcpx/generated/mcp"
	"github.com/mcpx-dev/mcpx/runtime/server"
)

// Progress of a call whose client gave a progress token comes from two
// places: the upstream's notifications/progress on mcpx's token for the
// call (a 2025-11-25 upstream keeps it valid for the task it made of the
// call, its progress page says), and, for an upstream task mcpx follows
// by polling, the task's statusMessage (the tasks extension has no
// progress for a task: its Task's statusMessage carries "Progress
// descriptions for \"working\"", and a 2026-07-28 upstream's progress
// flows only on a request's response stream, which ended with the
// handle). progressGuard joins them on the client's token: values only
// increase (the progress page: MUST), and a statusMessage is relayed only
// while the upstream reports no progress of its own, whose figures are
// the ones that mean something.
type progressGuard struct {
	mu    sync.Mutex
	inner context.Context // the call's context, with the edge's notifier
	next  server.Notifier // that notifier

	sent    bool    // some progress went to the client
	last    float64 // its value
	own     bool    // the upstream sent progress itself
	message string  // the last statusMessage relayed
}

type progressGuardKey struct{}

// guardProgress is ctx with its progress (the client gave a token) going
// through a progressGuard.
func guardProgress(ctx context.Context) context.Context {
	if server.NotifierOf(ctx) == nil {
		return ctx
	}
	g := &progressGuard{inner: ctx, next: server.NotifierOf(ctx)}
	return context.WithValue(server.WithNotifier(ctx, g), progressGuardKey{}, g)
}

func (g *progressGuard) notifier() server.Notifier {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.next
}

// retarget sends what follows to ctx's notifier, the figures so far
// still bounding it: a call's task parked apart from its request
// (parkedFollow) reports to the parker from then on.
func (g *progressGuard) retarget(ctx context.Context) {
	n := server.NotifierOf(ctx)
	if n == nil {
		return
	}
	g.mu.Lock()
	g.inner, g.next = ctx, n
	g.mu.Unlock()
}

func (g *progressGuard) ProgressToken() json.RawMessage { return g.notifier().ProgressToken() }
func (g *progressGuard) LogLevel() mcp.LoggingLevel     { return g.notifier().LogLevel() }

// Notify passes the upstream's progress on when it increases, and the
// rest as it is.
func (g *progressGuard) Notify(method string, params any) bool {
	if p, ok := params.(*mcp.ProgressNotificationParams); ok && method == mcp.MethodNotificationsProgress {
		total := 0.0
		if p.Total != nil {
			total = *p.Total
		}
		return g.send(p.Progress, total, p.Message, true)
	}
	return g.notifier().Notify(method, params)
}

// send reports progress to the client unless it would not increase;
// under the lock, so two sources cannot interleave out of order (the
// edge's sinks do not wait on their clients).
func (g *progressGuard) send(progress, total float64, message string, own bool) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.sent && progress <= g.last {
		return false
	}
	g.sent, g.last, g.own = true, progress, g.own || own
	server.Progress(g.inner, progress, total, message)
	return true
}

// describeTask relays a followed task's statusMessage, when it is new and the
// task works, as progress one step past the last: the upstream said how
// far it is in words only.
func describeTask(ctx context.Context, g *mcp.GetTaskResult) {
	pg, _ := ctx.Value(progressGuardKey{}).(*progressGuard)
	if pg == nil || g == nil || g.Status != mcp.TaskStatusWorking || g.StatusMessage == "" {
		return
	}
	pg.mu.Lock()
	if pg.own || g.StatusMessage == pg.message {
		pg.mu.Unlock()
		return
	}
	pg.message = g.StatusMessage
	next := math.Floor(pg.last) + 1
	pg.mu.Unlock()
	pg.send(next, 0, g.StatusMessage, false)
}
