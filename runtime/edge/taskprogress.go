package edge

import (
	"context"
	"encoding/json"
	"strconv"
	"sync/atomic"

	"github.com/mcpx-dev/mcpx/generated/mcp"
	"github.com/mcpx-dev/mcpx/runtime/jsonrpc"
)

// taskGate closes a detached call's own stream once the call is a task
// (tasks.go, detached); what the call sends after that goes to then, if
// set.
type taskGate struct {
	closed atomic.Bool
	after  atomic.Pointer[Sink]
}

func (g *taskGate) Load() bool   { return g.closed.Load() }
func (g *taskGate) Store(v bool) { g.closed.Store(v) }
func (g *taskGate) then(s Sink)  { g.after.Store(&s) }
func (g *taskGate) later() Sink {
	if s := g.after.Load(); s != nil {
		return *s
	}
	return nil
}

// describing is where a 2026-07-28 call that became task id sends its
// progress: no stream carries it any more (2026-07-28 progress flows "only
// on the response stream of the request they relate to", which ended
// with the handle, and the tasks extension gives a task none), so what it
// reports becomes the task's statusMessage (the extension's Task:
// "Progress descriptions for \"working\""), read on tasks/get and told to
// those who hear the task's changes. Everything else it sends is dropped,
// as before.
func (e *Edge) describing(ctx context.Context, id string) Sink {
	ctx = context.WithoutCancel(ctx)
	return func(m *jsonrpc.Message) {
		if m.Method != mcp.MethodNotificationsProgress {
			return
		}
		var p struct {
			Progress float64  `json:"progress"`
			Total    *float64 `json:"total"`
			Message  string   `json:"message"`
		}
		if json.Unmarshal(m.Params, &p) != nil {
			return
		}
		msg := p.Message
		if msg == "" { // a bare figure still says how far it is
			msg = "progress " + strconv.FormatFloat(p.Progress, 'g', -1, 64)
			if p.Total != nil {
				msg += " of " + strconv.FormatFloat(*p.Total, 'g', -1, 64)
			}
		}
		e.runner().Describe(ctx, id, msg)
	}
}
