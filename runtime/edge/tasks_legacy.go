package edge

import (
	"encoding/json"
	"sync"

	"github.com/mcpx-dev/mcpx/generated/mcp"
	"github.com/mcpx-dev/mcpx/runtime/jsonrpc"
	"github.com/mcpx-dev/mcpx/runtime/tasks"
)

// A 2025-11-25 task outlives the tools/call that started it, and with it
// the call's response stream. What the task says to its client after
// that (its questions, their cancellations, progress on the call's token,
// notifications/tasks/status) goes by its route (taskRoute), each request
// and progress notification tagged with related-task. The 2025-11-25
// tasks page (basic/utilities/tasks.mdx) says where:
//
//	"Servers can handle this by enqueueing messages to the client to
//	side-channel task-related messages alongside other responses."
//	"clients SHOULD expect messages to be delivered on any SSE stream,
//	including the HTTP GET stream. One possible approach is maintaining
//	an SSE stream on `tasks/result` (see notes on the `input_required`
//	status)."
//	"When the requestor encounters the `input_required` status, it
//	SHOULD preemptively call `tasks/result`."
//	"All requests, notifications, and responses related to a task MUST
//	include the `io.modelcontextprotocol/related-task` key in their
//	`_meta` field"
//
// and its progress page: "the `progressToken` provided in the original
// request MUST continue to be used for progress notifications throughout
// the task's lifetime" and "MUST stop after the task reaches a terminal
// status".
//
// So: on the stream of a tasks/result the client has open for the task
// (the latest, if several); else on the session's unasked stream (the
// Streamable HTTP GET stream, stdio's output), which the page says the
// client should expect them on; else a question is held until the client
// opens a tasks/result (the task shows input_required meanwhile, which
// tells it to), while progress, having nowhere to go, is dropped. Nothing
// goes once the task has ended.

// taskSessions maps a legacy task's id to its route, per edge.
type taskSessions struct {
	once sync.Once
	m    sync.Map // task id -> *taskRoute
}

func (e *Edge) taskSessions() *taskSessions {
	ts := &e.tasks.sessions
	ts.once.Do(func() {
		e.runner().OnChange(func(rec *tasks.Record) {
			e.taskChanged(rec)
			e.listenTaskChanged(rec) // 2026-07-28 listens (listentasks.go)
			e.publishTask(rec)       // and the other replicas' (clustertasks.go)
		})
	})
	return ts
}

// taskRoute is where a legacy task's messages to its client go.
type taskRoute struct {
	e       *Edge
	sess    *Session
	related json.RawMessage // the related-task value

	mu      sync.Mutex
	results []*Sink            // the task's open tasks/result streams, latest last
	held    []*jsonrpc.Message // questions waiting for a stream
	ended   bool               // the task is terminal: nothing more goes
}

// maxHeld bounds the questions a route holds: a session has no more
// waiting at once (MaxPendingAsks).
const maxHeld = MaxPendingAsks

// newTaskRoute makes and registers the route of the legacy task id,
// started on sess.
func (e *Edge) newTaskRoute(sess *Session, id string) *taskRoute {
	r := &taskRoute{e: e, sess: sess, related: mustJSON(mcp.MetaRelatedTask{TaskID: id})}
	e.taskSessions().m.Store(id, r)
	return r
}

// route is the task's route; nil for a task that is not a live legacy one.
func (e *Edge) route(id string) *taskRoute {
	if v, ok := e.taskSessions().m.Load(id); ok {
		return v.(*taskRoute)
	}
	return nil
}

// taskChanged tells a legacy task's client of its new status; a terminal
// one ends its route (after that notification: progress MUST stop).
func (e *Edge) taskChanged(rec *tasks.Record) {
	r := e.route(rec.ID)
	if r == nil {
		return
	}
	h := taskHandle(rec)
	r.notify(mcp.MethodNotificationsTasksStatus, &mcp.TaskStatusNotificationParams{
		TaskID: h.TaskID, Status: h.Status, StatusMessage: h.StatusMessage, CreatedAt: h.CreatedAt,
		LastUpdatedAt: h.LastUpdatedAt, TTLMs: h.TTLMs, PollIntervalMs: h.PollIntervalMs,
	})
	if rec.Terminal() {
		r.mu.Lock()
		r.ended, r.held = true, nil
		r.mu.Unlock()
		e.taskSessions().m.Delete(rec.ID)
	}
}

// notify sends a notification of mcpx's own about the task (its status)
// the way the task's messages go, in the session's revision.
func (r *taskRoute) notify(method string, params any) {
	rev := r.sess.Revision()
	if rev == "" {
		return
	}
	(&requestNotifier{e: r.e, rev: rev, sink: r.send}).Notify(method, params)
}

// send is the task's call's sink: the route of what the call sends its
// client. Log messages, which belonged to the tools/call, go nowhere.
func (r *taskRoute) send(m *jsonrpc.Message) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.ended {
		return
	}
	switch {
	case m.IsRequest():
		m = tagged(m, r.related)
		if !r.deliver(m) {
			if len(r.held) >= maxHeld {
				return // the question times out unanswered (ask.go)
			}
			r.held = append(r.held, m)
		}
	case m.Method == mcp.MethodNotificationsCancelled:
		if r.unhold(m) {
			return // never sent: the client need not hear it is withdrawn
		}
		r.deliver(m)
	case m.Method == mcp.MethodNotificationsProgress:
		r.deliver(tagged(m, r.related))
	case m.Method == mcp.MethodNotificationsTasksStatus:
		r.deliver(m) // the page: SHOULD NOT carry related-task
	}
}

// deliver hands m to the latest tasks/result stream, else the session's
// stream, reporting false when there is neither. r.mu is held: sinks do
// not wait on their clients.
func (r *taskRoute) deliver(m *jsonrpc.Message) bool {
	if n := len(r.results); n > 0 {
		(*r.results[n-1])(m)
		return true
	}
	for _, l := range r.e.sessionStreams(r.sess, m.IsRequest()) {
		l.mu.Lock()
		closed := l.closed
		if !closed {
			l.sink(m)
		}
		l.mu.Unlock()
		if !closed {
			return true
		}
	}
	return false
}

// unhold drops the held question a notifications/cancelled withdraws,
// reporting whether there was one.
func (r *taskRoute) unhold(m *jsonrpc.Message) bool {
	var p struct {
		RequestID json.RawMessage `json:"requestId"`
	}
	if json.Unmarshal(m.Params, &p) != nil {
		return false
	}
	for i, q := range r.held {
		if string(q.ID) == string(p.RequestID) {
			r.held = append(r.held[:i], r.held[i+1:]...)
			return true
		}
	}
	return false
}

// resultStream makes the stream of c, a tasks/result for the legacy task
// id, the task's route while c waits, sending it the questions held for
// one first; the function returned ends that (before c is answered). A
// tasks/result without a stream (no SSE, stdio without a sink) changes
// nothing.
func (e *Edge) resultStream(c *call, id string) func() {
	r := e.route(id)
	if r == nil || c.sink == nil {
		return func() {}
	}
	sink := &c.sink // its own entry, found again by address
	r.mu.Lock()
	r.results = append(r.results, sink)
	held := r.held
	r.held = nil
	for _, q := range held {
		(*sink)(q)
	}
	r.mu.Unlock()
	return func() {
		r.mu.Lock()
		defer r.mu.Unlock()
		for i, s := range r.results {
			if s == sink {
				r.results = append(r.results[:i], r.results[i+1:]...)
				return
			}
		}
	}
}

// tagged is request m with _meta["io.modelcontextprotocol/related-task"].
func tagged(m *jsonrpc.Message, related json.RawMessage) *jsonrpc.Message {
	var params map[string]json.RawMessage
	if json.Unmarshal(m.Params, &params) != nil || params == nil {
		params = map[string]json.RawMessage{}
	}
	var meta map[string]json.RawMessage
	if raw, ok := params["_meta"]; !ok || json.Unmarshal(raw, &meta) != nil || meta == nil {
		meta = map[string]json.RawMessage{}
	}
	meta[mcp.MetaKeyRelatedTask] = related
	params["_meta"] = mustJSON(meta)
	cp := *m
	cp.Params = mustJSON(params)
	return &cp
}
