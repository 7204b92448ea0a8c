package edge

import (
	"context"
	"encoding/json"
	"sync"
	"time"

	"github.com/mcpx-dev/mcpx/generated/mcp"
	"github.com/mcpx-dev/mcpx/runtime/jsonrpc"
	"github.com/mcpx-dev/mcpx/runtime/tasks"
)

// Task status notifications on a 2026-07-28 listen stream (the tasks
// extension, SEP-2663): a listen that names task ids in its filter, from
// a client that declared the extension on it (listenTasks: -32021
// otherwise), hears each change of those of mcpx's own tasks it may read
// (the owner rule of tasks/get: the request's principal), tagged with the
// listen id, each a complete DetailedTask as tasks/get would answer at
// that moment.
//
// The extension's two documents name things differently: its page says
// notifications/tasks and a filter member taskIds, its schema (which mcpx
// generates from and validates against) notifications/tasks/status and
// tasksStatus. mcpx reads either member and answers in the schema's
// names: the acknowledgement's tasksStatus, notifications/tasks/status.
// The schema's TaskStatusNotification admits no _meta (its status
// branches close the params), while the page's type is NotificationParams
// & Task and every notification on a listen stream carries the listen id
// in _meta: mcpx tags them, as the page's type allows.
//
// Right after the acknowledgement each agreed task's current state is
// sent: a change between the listen's arrival and its registration would
// otherwise go unheard, and a client subscribing to a task that has
// already ended learns of it.

// maxListenTasks bounds the tasks one listen follows: each is indexed,
// read at the acknowledgement and checked for a lapsed lease every third
// of the lease (clustertasks.go).
const maxListenTasks = 256

// askedTasks is the task ids a listen's filter names (once each); more
// than maxListenTasks is -32602.
func (c *call) askedTasks() (ids []string, err error) {
	var p struct {
		Notifications map[string]json.RawMessage `json:"notifications"`
	}
	if json.Unmarshal(c.raw, &p) != nil {
		return nil, nil
	}
	seen := map[string]bool{}
	for _, k := range []string{"taskIds", "tasksStatus"} {
		var list []string
		if v, ok := p.Notifications[k]; !ok || json.Unmarshal(v, &list) != nil || len(list) == 0 {
			continue
		}
		for _, id := range list {
			if !seen[id] {
				seen[id] = true
				ids = append(ids, id)
			}
		}
		if len(ids) > maxListenTasks {
			return nil, jsonrpc.Errorf(jsonrpc.InvalidParams, nil, "a subscriptions/listen follows at most %d tasks; this one names more: open several", maxListenTasks)
		}
	}
	return ids, nil
}

// agreeTasksWait bounds the reads of a listen's tasks at its start.
const agreeTasksWait = 5 * time.Second

// taskListens indexes the listens following a task, by task id.
type taskListens struct {
	once sync.Once
	mu   sync.Mutex
	m    map[string]map[*listener]bool
	// watching: lapseWatch runs (clustertasks.go).
	watching bool
}

func (e *Edge) taskListens() *taskListens {
	tl := &e.tasks.listens
	tl.once.Do(func() { e.taskSessions() }) // the runner's changes reach taskChanged
	return tl
}

// followTasks registers l for ids and returns its removal. The caller
// holds l.mu, so a change meanwhile waits for l.tasks.
func (e *Edge) followTasks(l *listener, ids []string) func() {
	tl := e.taskListens()
	tl.mu.Lock()
	defer tl.mu.Unlock()
	if tl.m == nil {
		tl.m = map[string]map[*listener]bool{}
	}
	for _, id := range ids {
		if tl.m[id] == nil {
			tl.m[id] = map[*listener]bool{}
		}
		tl.m[id][l] = true
	}
	e.watchLapses(tl) // a lease that lapses changes no runner (clustertasks.go)
	return func() {
		tl.mu.Lock()
		defer tl.mu.Unlock()
		for _, id := range ids {
			delete(tl.m[id], l)
			if len(tl.m[id]) == 0 {
				delete(tl.m, id)
			}
		}
	}
}

// agreeTasks is the part of asked the listen may follow: the tasks that
// exist and that c's client may read (as tasks/get), with their records.
// The reads are bounded in time: a held listen's context never ends.
func (e *Edge) agreeTasks(c *call, asked []string) (agreed []string, recs []*tasks.Record) {
	ctx, cancel := context.WithTimeout(c.ctx, agreeTasksWait)
	defer cancel()
	for _, id := range asked {
		rec, err := e.runner().Get(ctx, id, c.owner())
		if err != nil {
			// Left out of the acknowledgement, which names what is
			// honoured (an unknown, expired or someone else's task).
			continue
		}
		agreed = append(agreed, id)
		recs = append(recs, rec)
	}
	return agreed, recs
}

// listenTaskChanged tells the listens following rec's task of its state.
func (e *Edge) listenTaskChanged(rec *tasks.Record) {
	tl := &e.tasks.listens
	tl.mu.Lock()
	ls := make([]*listener, 0, len(tl.m[rec.ID]))
	for l := range tl.m[rec.ID] {
		ls = append(ls, l)
	}
	tl.mu.Unlock()
	for _, l := range ls {
		l.mu.Lock()
		if !l.closed && l.tasks[rec.ID] {
			e.notifyTask(l, rec)
		}
		l.mu.Unlock()
	}
}

// notifyTask sends l notifications/tasks/status for rec: the task as
// tasks/get answers it in l's revision, tagged with the listen id. l.mu
// is held. A task's end is told once: heard from this replica's runner,
// another replica's (over the bus) or the lapse check, whichever first.
func (e *Edge) notifyTask(l *listener, rec *tasks.Record) {
	if rec.Terminal() {
		l.tasks[rec.ID] = false
	}
	g, err := e.detailed(l.rev, rec)
	if err != nil {
		e.log().Error("a task status notification cannot be written", "task", rec.ID, "err", err)
		return
	}
	p := &mcp.TaskStatusNotificationParams{
		Meta:   mcp.Meta{mcp.MetaKeySubscriptionID: l.subID},
		TaskID: g.TaskID, Status: g.Status, StatusMessage: g.StatusMessage, CreatedAt: g.CreatedAt,
		LastUpdatedAt: g.LastUpdatedAt, TTLMs: g.TTLMs, PollIntervalMs: g.PollIntervalMs,
		Result: g.Result, Error: g.Error,
	}
	if len(g.InputRequests) > 0 {
		p.InputRequests = make(map[string]mcp.TaskStatusNotificationParamsInputRequestsValue, len(g.InputRequests))
		for k, q := range g.InputRequests {
			p.InputRequests[k] = mcp.TaskStatusNotificationParamsInputRequestsValue{Method: q.Method, Params: q.Params}
		}
	}
	n := &requestNotifier{e: e, rev: l.rev, sink: l.sink}
	n.Notify(mcp.MethodNotificationsTasksStatus, p)
}

// withTasksAcked is sink with the listen's acknowledgement naming the
// agreed task ids in tasksStatus (the extension's member, which the
// hub's filter has not).
func withTasksAcked(sink Sink, agreed []string) Sink {
	return func(m *jsonrpc.Message) {
		var p map[string]json.RawMessage
		var f map[string]json.RawMessage
		if json.Unmarshal(m.Params, &p) == nil && json.Unmarshal(p["notifications"], &f) == nil {
			if f == nil {
				f = map[string]json.RawMessage{}
			}
			if agreed == nil {
				agreed = []string{}
			}
			f["tasksStatus"] = mustJSON(agreed)
			p["notifications"] = mustJSON(f)
			m = jsonrpc.Notification(m.Method, mustJSON(p))
		}
		sink(m)
	}
}
