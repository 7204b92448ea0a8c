package edge_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpx-dev/mcpx/generated/mcp"
	"github.com/mcpx-dev/mcpx/runtime/auth"
	"github.com/mcpx-dev/mcpx/runtime/edge"
	"github.com/mcpx-dev/mcpx/runtime/jsonrpc"
	"github.com/mcpx-dev/mcpx/testkit/closedworld"
)

// heldListen is a listen held by the edge (HandleHeld), with what its
// stream received.
type heldListen struct {
	t    *testing.T
	mu   sync.Mutex
	got  []*jsonrpc.Message
	stop func(error)
	done chan edge.Reply
}

func listenHeld(t *testing.T, e *edge.Edge, ctx context.Context, id, filter string) *heldListen {
	t.Helper()
	h := &heldListen{t: t, done: make(chan edge.Reply, 1)}
	m := &jsonrpc.Message{JSONRPC: "2.0", ID: json.RawMessage(`"` + id + `"`), Method: mcp.MethodSubscriptionsListen,
		Params: json.RawMessage(`{` + metaWith(extCaps) + `,"notifications":` + filter + `}`)}
	rep, stop := e.HandleHeld(ctx, new(edge.Session), edge.In{Msg: m}, func(n *jsonrpc.Message) {
		h.mu.Lock()
		h.got = append(h.got, n)
		h.mu.Unlock()
	}, func(r edge.Reply) { h.done <- r })
	if stop == nil {
		t.Fatalf("listen %s was not held: %+v", id, rep.Msg)
	}
	h.stop = stop
	t.Cleanup(func() { stop(edge.ErrClientGone) })
	return h
}

// next waits for the i-th message the listen's stream received.
func (h *heldListen) next(i int) *jsonrpc.Message {
	h.t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		h.mu.Lock()
		if len(h.got) > i {
			m := h.got[i]
			h.mu.Unlock()
			return m
		}
		h.mu.Unlock()
		if time.Now().After(deadline) {
			h.t.Fatalf("message %d of the listen never came", i)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func (h *heldListen) count() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.got)
}

// validMsg checks a whole message closed-world against def; without its
// _meta for a TaskStatusNotification, whose schema admits none
// (listentasks.go says why mcpx tags it all the same).
func validMsg(t *testing.T, def string, m *jsonrpc.Message) {
	t.Helper()
	v, err := closedworld.Default()
	if err != nil {
		t.Fatal(err)
	}
	var p map[string]json.RawMessage
	json.Unmarshal(m.Params, &p)
	switch def {
	case "TaskStatusNotification":
		delete(p, "_meta")
		m = jsonrpc.Notification(m.Method, mustJSON(p))
	case "SubscriptionsAcknowledgedNotification":
		// The extension's member of the filter is its own definition,
		// not declared in the core filter: checked apart.
		var f map[string]json.RawMessage
		json.Unmarshal(p["notifications"], &f)
		if ts, ok := f["tasksStatus"]; ok {
			if err := v.Validate("2026-07-28", "TaskSubscriptionAcknowledgedNotifications", mustJSON(map[string]json.RawMessage{"tasksStatus": ts})); err != nil {
				t.Errorf("the acknowledgement's tasksStatus %s:\n%v", ts, err)
			}
			delete(f, "tasksStatus")
			p["notifications"] = mustJSON(f)
			m = jsonrpc.Notification(m.Method, mustJSON(p))
		}
	}
	b, _ := jsonrpc.Encode(m)
	if err := v.Validate("2026-07-28", def, b); err != nil {
		t.Errorf("%s %s:\n%v", def, b, err)
	}
}

// taskStatus reads a notifications/tasks/status for the listen id.
func taskStatus(t *testing.T, m *jsonrpc.Message, listen string) map[string]any {
	t.Helper()
	if m.Method != mcp.MethodNotificationsTasksStatus {
		t.Fatalf("want notifications/tasks/status, got %s %s", m.Method, m.Params)
	}
	validMsg(t, "TaskStatusNotification", m)
	var p map[string]any
	json.Unmarshal(m.Params, &p)
	if meta, _ := p["_meta"].(map[string]any); meta["io.modelcontextprotocol/subscriptionId"] != listen {
		t.Errorf("not tagged with listen %s: %s", listen, m.Params)
	}
	return p
}

// TestListenHearsItsTasks: a listen naming task ids hears each of those
// tasks' changes as a DetailedTask (its questions while input_required,
// its result inline once completed), tagged, closed-world valid; ids it
// may not follow (unknown) are left out of the acknowledgement, which
// names the agreed ones in tasksStatus, whichever member (the page's
// taskIds, the schema's tasksStatus) asked; a second listen
// following another task hears only that one.
func TestListenHearsItsTasks(t *testing.T) {
	c := newTaskClient(t)
	late := handle(t, c.call(extElicitCaps, "asks_late", ""))
	quick := handle(t, c.call(extCaps, "tool_error", ""))
	a := listenHeld(t, c.e, context.Background(), "A", `{"taskIds":["`+late+`","no-such-task"]}`)
	b := listenHeld(t, c.e, context.Background(), "B", `{"tasksStatus":["`+quick+`"]}`)

	ack := a.next(0)
	validMsg(t, "SubscriptionsAcknowledgedNotification", ack)
	if !strings.Contains(string(ack.Params), `"tasksStatus":["`+late+`"]`) {
		t.Errorf("A's acknowledgement: %s", ack.Params)
	}
	bAck := b.next(0)
	validMsg(t, "SubscriptionsAcknowledgedNotification", bAck)
	if ack := bAck; !strings.Contains(string(ack.Params), `"tasksStatus":["`+quick+`"]`) {
		t.Errorf("B's acknowledgement: %s", ack.Params)
	}
	// The task's state now (working, or input_required already), then
	// each change.
	var p map[string]any
	i := 1
	for ; ; i++ {
		p = taskStatus(t, a.next(i), "A")
		if p["taskId"] != late {
			t.Fatalf("A heard another task: %v", p)
		}
		if p["status"] == "input_required" {
			break
		}
		if p["status"] != "working" {
			t.Fatalf("A, before asks_late asks: %v", p)
		}
	}
	if p["inputRequests"] == nil {
		t.Fatalf("A, when asks_late asks: no inputRequests: %v", p)
	}
	reqs := p["inputRequests"].(map[string]any)
	answers := map[string]any{}
	for k := range reqs {
		answers[k] = map[string]any{"action": "accept", "content": map[string]any{"ok": true}}
	}
	if r := c.taskDo(mcp.MethodTasksUpdate, extCaps, late, `,"inputResponses":`+string(mustJSON(answers))); r.Msg.Error != nil {
		t.Fatalf("tasks/update: %+v", r.Msg.Error)
	}
	var final map[string]any
	for i++; final == nil; i++ {
		if p := taskStatus(t, a.next(i), "A"); p["status"] == "completed" {
			final = p
		} else if p["status"] != "working" && p["status"] != "input_required" {
			t.Fatalf("A: %v", p)
		}
	}
	res, _ := final["result"].(map[string]any)
	if !strings.Contains(string(mustJSON(res)), "late answered") {
		t.Errorf("A's completed task without its result inline: %v", final)
	}
	// B hears its own task only: working now, then completed (isError).
	var bStatuses []string
	for i := 1; len(bStatuses) == 0 || bStatuses[len(bStatuses)-1] != "completed"; i++ {
		p := taskStatus(t, b.next(i), "B")
		if p["taskId"] != quick {
			t.Fatalf("B heard another task: %v", p)
		}
		bStatuses = append(bStatuses, p["status"].(string))
	}
	a.mu.Lock()
	for _, m := range a.got {
		if strings.Contains(string(m.Params), quick) {
			t.Errorf("A heard B's task: %s", m.Params)
		}
	}
	a.mu.Unlock()
}

// TestListenTasksOwnerRule: a listen follows only tasks its client may
// read (as tasks/get: the request's principal). Another principal's
// listen naming the task is acknowledged without it and hears nothing of
// it; the owner's own listen does.
func TestListenTasksOwnerRule(t *testing.T) {
	c := newTaskClient(t)
	alice := auth.With(context.Background(), &auth.Principal{Kind: "token", Name: "alice"})
	bob := auth.With(context.Background(), &auth.Principal{Kind: "token", Name: "bob"})
	m := &jsonrpc.Message{JSONRPC: "2.0", ID: json.RawMessage(`1`), Method: mcp.MethodToolsCall,
		Params: json.RawMessage(`{` + metaWith(extCaps) + `,"name":"tool_error","arguments":{}}`)}
	id := handle(t, c.e.Handle(alice, new(edge.Session), edge.In{Msg: m}, nil))
	other := listenHeld(t, c.e, bob, "B", `{"taskIds":["`+id+`"]}`)
	own := listenHeld(t, c.e, alice, "A", `{"taskIds":["`+id+`"]}`)
	if ack := other.next(0); !strings.Contains(string(ack.Params), `"tasksStatus":[]`) {
		t.Errorf("bob's acknowledgement names alice's task: %s", ack.Params)
	}
	if ack := own.next(0); !strings.Contains(string(ack.Params), `"tasksStatus":["`+id+`"]`) {
		t.Errorf("alice's acknowledgement: %s", ack.Params)
	}
	for i := 1; ; i++ {
		if p := taskStatus(t, own.next(i), "A"); p["status"] == "completed" {
			break
		}
	}
	if n := other.count(); n != 1 {
		t.Errorf("bob's listen received %d messages, want the acknowledgement alone", n)
	}
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

// TestListenTasksBounded: a listen follows only the tasks it may read (ids
// that name nothing are not indexed, so no task change waits on them and
// the lapse check does not read them), and naming more than 256 tasks is
// -32602 before anything is followed.
func TestListenTasksBounded(t *testing.T) {
	c := newTaskClient(t)
	ctx := context.Background()
	m := &jsonrpc.Message{JSONRPC: "2.0", ID: json.RawMessage(`1`), Method: mcp.MethodToolsCall,
		Params: json.RawMessage(`{` + metaWith(extCaps) + `,"name":"tool_error","arguments":{}}`)}
	id := handle(t, c.e.Handle(ctx, new(edge.Session), edge.In{Msg: m}, nil))
	l := listenHeld(t, c.e, ctx, "L", `{"taskIds":["nope-1","`+id+`","nope-2"]}`)
	if ack := l.next(0); !strings.Contains(string(ack.Params), `"tasksStatus":["`+id+`"]`) {
		t.Fatalf("acknowledgement: %s", ack.Params)
	}
	if n := c.e.FollowedTaskIDs(); n != 1 {
		t.Errorf("%d task ids followed, want 1 (the ids that name no task are not)", n)
	}
	defer func() { // the task's call ends with the test
		for i := 1; ; i++ {
			if p := taskStatus(t, l.next(i), "L"); p["status"] == "completed" {
				return
			}
		}
	}()

	ids := make([]string, 257)
	for i := range ids {
		ids[i] = fmt.Sprintf("%q", fmt.Sprint("t", i))
	}
	big := &jsonrpc.Message{JSONRPC: "2.0", ID: json.RawMessage(`"big"`), Method: mcp.MethodSubscriptionsListen,
		Params: json.RawMessage(`{` + metaWith(extCaps) + `,"notifications":{"taskIds":[` + strings.Join(ids, ",") + `]}}`)}
	rep, stop := c.e.HandleHeld(ctx, new(edge.Session), edge.In{Msg: big}, func(*jsonrpc.Message) {}, func(edge.Reply) {})
	if stop != nil {
		stop(edge.ErrClientGone)
		t.Fatal("a listen naming 257 tasks was held")
	}
	if rep.Msg == nil || rep.Msg.Error == nil || rep.Msg.Error.Code != jsonrpc.InvalidParams {
		t.Fatalf("a listen naming 257 tasks: %+v, want -32602", rep.Msg)
	}
	if n := c.e.FollowedTaskIDs(); n != 1 {
		t.Errorf("%d task ids followed after the refused listen, want 1", n)
	}
}
