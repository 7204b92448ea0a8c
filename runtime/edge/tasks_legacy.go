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
// that goes on the session's unasked stream (the Streamable HTTP GET
// stream, stdio's output), where the client can hear it:
// notifications/tasks/status on each change, and the questions the call
// asks, tagged with related-task as that revision's tasks page says.

// taskSessions maps a legacy task's id to its session, per edge.
type taskSessions struct {
	once sync.Once
	m    sync.Map // task id -> *Session
}

func (e *Edge) taskSessions() *taskSessions {
	ts := &e.tasks.sessions
	ts.once.Do(func() {
		e.runner().OnChange(func(rec *tasks.Record) {
			e.taskChanged(rec)
			e.listenTaskChanged(rec) // 2026-07-28 listens (listentasks.go)
		})
	})
	return ts
}

// taskChanged tells a legacy task's session of its new status.
func (e *Edge) taskChanged(rec *tasks.Record) {
	v, ok := e.taskSessions().m.Load(rec.ID)
	if !ok {
		return
	}
	sess := v.(*Session)
	h := taskHandle(rec)
	e.notifySession(sess, mcp.MethodNotificationsTasksStatus, &mcp.TaskStatusNotificationParams{
		TaskID: h.TaskID, Status: h.Status, StatusMessage: h.StatusMessage, CreatedAt: h.CreatedAt,
		LastUpdatedAt: h.LastUpdatedAt, TTLMs: h.TTLMs, PollIntervalMs: h.PollIntervalMs,
	})
	if rec.Terminal() {
		e.taskSessions().m.Delete(rec.ID)
	}
}

// sessionSink is where a legacy task's call sends what it sends its
// client: its questions (and their cancellations) go on the session's
// unasked stream, each question tagged with the task; its progress and
// log messages, which belonged to the tools/call, go nowhere. Nil when
// the session has no such stream: a question then fails at once rather
// than waiting for an answer that cannot come.
func (e *Edge) sessionSink(sess *Session, taskID string) Sink {
	var stream *listener
	for _, l := range e.listeners.all() {
		if l.sess == sess {
			stream = l
			break
		}
	}
	if stream == nil {
		return nil
	}
	related := mustJSON(mcp.MetaRelatedTask{TaskID: taskID})
	return func(m *jsonrpc.Message) {
		switch {
		case m.IsRequest():
			m = tagged(m, related)
		case m.Method == mcp.MethodNotificationsCancelled:
		default:
			return
		}
		stream.mu.Lock()
		stream.sink(m)
		stream.mu.Unlock()
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
