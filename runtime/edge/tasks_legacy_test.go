package edge_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mcpx-dev/mcpx/generated/mcp"
	"github.com/mcpx-dev/mcpx/runtime/edge"
	"github.com/mcpx-dev/mcpx/runtime/jsonrpc"
	"github.com/mcpx-dev/mcpx/runtime/transport/streamhttp"
	"github.com/mcpx-dev/mcpx/testkit/closedworld"
)

func validLegacy(t *testing.T, def string, raw json.RawMessage) {
	t.Helper()
	v, err := closedworld.Default()
	if err != nil {
		t.Fatal(err)
	}
	if err := v.Validate("2025-11-25", def, raw); err != nil {
		t.Errorf("%s %s:\n%v", def, raw, err)
	}
}

// TestLegacyTaskLifecycle (2025-11-25, client-directed): a task field on
// tools/call returns {task} at once, in that revision's spelling (ttl,
// pollInterval); tasks/get has no payload; the blocking tasks/result
// answers what the call would have, tagged related-task; tasks/list
// lists it; cancelling a finished task is -32602, a running one answers
// the task, cancelled. A call without the task field is answered
// directly, however long it takes.
func TestLegacyTaskLifecycle(t *testing.T) {
	c := newTaskClient(t)
	c.initialize("2025-11-25")
	start := time.Now()
	r := c.do(mcp.MethodToolsCall, `{"name":"must","arguments":{},"task":{"ttl":60000}}`)
	if took := time.Since(start); took > pastAll/2 {
		t.Fatalf("the {task} answer waited %v for the call", took)
	}
	res := result(t, r)
	validLegacy(t, "CreateTaskResult", r.Msg.Result)
	task, _ := res["task"].(map[string]any)
	if task == nil || task["ttl"] != float64(60000) || task["status"] != "working" || res["resultType"] != nil || task["ttlMs"] != nil {
		t.Fatalf("{task}: %s", r.Msg.Result)
	}
	id := task["taskId"].(string)
	g := c.do(mcp.MethodTasksGet, `{"taskId":"`+id+`"}`)
	validLegacy(t, "GetTaskResult", g.Msg.Result)
	if got := result(t, g); got["taskId"] != id || got["result"] != nil {
		t.Fatalf("tasks/get: %v", got)
	}
	p := c.do(mcp.MethodTasksResult, `{"taskId":"`+id+`"}`)
	payload := result(t, p)
	meta, _ := payload["_meta"].(map[string]any)
	rt, _ := meta["io.modelcontextprotocol/related-task"].(map[string]any)
	if rt["taskId"] != id || payload["content"] == nil || time.Since(start) < pastAll {
		t.Fatalf("tasks/result (after %v): %s", time.Since(start), p.Msg.Result)
	}
	l := c.do(mcp.MethodTasksList, `{}`)
	validLegacy(t, "ListTasksResult", l.Msg.Result)
	if list, _ := result(t, l)["tasks"].([]any); len(list) != 1 {
		t.Fatalf("tasks/list: %s", l.Msg.Result)
	}
	if e := rpcError(t, c.do(mcp.MethodTasksCancel, `{"taskId":"`+id+`"}`)); e.Code != jsonrpc.InvalidParams {
		t.Fatalf("cancel of a completed task: %d %s", e.Code, e.Message)
	}
	slow := result(t, c.do(mcp.MethodToolsCall, `{"name":"slow","arguments":{},"task":{}}`))["task"].(map[string]any)
	cr := c.do(mcp.MethodTasksCancel, `{"taskId":"`+slow["taskId"].(string)+`"}`)
	validLegacy(t, "CancelTaskResult", cr.Msg.Result)
	if got := result(t, cr); got["status"] != "cancelled" {
		t.Fatalf("cancel of a running task: %v", got)
	}
	if got := result(t, c.do(mcp.MethodToolsCall, `{"name":"must","arguments":{}}`)); got["task"] != nil || got["content"] == nil {
		t.Fatalf("a call without task: %v", got)
	}
}

// httpSession is one legacy client over Streamable HTTP.
type httpSession struct {
	t   *testing.T
	url string
	id  string
	n   int
}

func (s *httpSession) post(method, params string) *jsonrpc.Message {
	s.t.Helper()
	s.n++
	body := `{"jsonrpc":"2.0","id":` + strconv.Itoa(s.n) + `,"method":"` + method + `","params":` + params + `}`
	req, _ := http.NewRequest(http.MethodPost, s.url, bytes.NewBufferString(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if s.id != "" {
		req.Header.Set("Mcp-Session-Id", s.id)
		req.Header.Set("MCP-Protocol-Version", "2025-11-25")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		s.t.Fatal(err)
	}
	defer resp.Body.Close()
	if id := resp.Header.Get("Mcp-Session-Id"); id != "" {
		s.id = id
	}
	raw, _ := io.ReadAll(resp.Body)
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		// The response is the last data line of the stream.
		sc := bufio.NewScanner(bytes.NewReader(raw))
		for sc.Scan() {
			if line := sc.Text(); strings.HasPrefix(line, "data:") {
				raw = []byte(strings.TrimSpace(strings.TrimPrefix(line, "data:")))
			}
		}
	}
	var m jsonrpc.Message
	if err := json.Unmarshal(raw, &m); err != nil {
		s.t.Fatalf("%s: %v in %q", method, err, raw)
	}
	return &m
}

// TestLegacyTaskIsolationHTTP: a task started on one legacy session is
// that session's: another session cannot list it, and gets not-found
// (-32602) for its id on tasks/get, tasks/result and tasks/cancel, while
// the owner reads it.
func TestLegacyTaskIsolationHTTP(t *testing.T) {
	c := newTaskClient(t)
	h := streamhttp.New(c.e, streamhttp.Options{})
	srv := httptest.NewServer(h)
	defer srv.Close()
	defer h.Close()
	url := srv.URL + "/mcp"
	alice, bob := &httpSession{t: t, url: url}, &httpSession{t: t, url: url}
	for _, s := range []*httpSession{alice, bob} {
		m := s.post("initialize", `{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}`)
		if m.Error != nil || s.id == "" {
			t.Fatalf("initialize: %+v, session %q", m.Error, s.id)
		}
	}
	m := alice.post(mcp.MethodToolsCall, `{"name":"slow","arguments":{},"task":{}}`)
	var created struct{ Task struct{ TaskID string } }
	if m.Error != nil || json.Unmarshal(m.Result, &created) != nil || created.Task.TaskID == "" {
		t.Fatalf("alice's task: %+v %s", m.Error, m.Result)
	}
	id := created.Task.TaskID
	if m := bob.post(mcp.MethodTasksList, `{}`); m.Error != nil || strings.Contains(string(m.Result), id) {
		t.Fatalf("bob's tasks/list: %+v %s", m.Error, m.Result)
	}
	for _, method := range []string{mcp.MethodTasksGet, mcp.MethodTasksResult, mcp.MethodTasksCancel} {
		if m := bob.post(method, `{"taskId":"`+id+`"}`); m.Error == nil || m.Error.Code != jsonrpc.InvalidParams {
			t.Errorf("bob's %s of alice's task: %+v %s", method, m.Error, m.Result)
		}
	}
	if m := alice.post(mcp.MethodTasksList, `{}`); m.Error != nil || !strings.Contains(string(m.Result), id) {
		t.Fatalf("alice's tasks/list: %+v %s", m.Error, m.Result)
	}
	if m := alice.post(mcp.MethodTasksCancel, `{"taskId":"`+id+`"}`); m.Error != nil || !strings.Contains(string(m.Result), `"cancelled"`) {
		t.Fatalf("alice's cancel: %+v %s", m.Error, m.Result)
	}
}

// TestLegacyTaskStreamQuestions: a 2025-11-25 task's question goes on the
// session's unasked stream tagged with related-task (the call's own
// stream ended with {task}); the answer reaches the call, and each status
// change (input_required while the question waits, working again, then
// completed) is told there as notifications/tasks/status, closed-world
// valid.
func TestLegacyTaskStreamQuestions(t *testing.T) {
	c := newTaskClient(t)
	r := c.do("initialize", `{"protocolVersion":"2025-11-25","capabilities":{"elicitation":{}},"clientInfo":{"name":"t","version":"1"}}`)
	if r.Msg.Error != nil {
		t.Fatal(r.Msg.Error)
	}
	got := make(chan *jsonrpc.Message, 16)
	defer c.e.Attach(c.sess, func(m *jsonrpc.Message) { got <- m })()
	res := result(t, c.do(mcp.MethodToolsCall, `{"name":"asks_legacy","arguments":{},"task":{}}`))
	id := res["task"].(map[string]any)["taskId"].(string)
	var statuses []string
	deadline := time.After(5 * time.Second)
	for done := false; !done; {
		select {
		case m := <-got:
			switch {
			case m.IsRequest():
				var p struct {
					Meta map[string]struct{ TaskID string } `json:"_meta"`
				}
				_ = json.Unmarshal(m.Params, &p)
				if m.Method != mcp.MethodElicitationCreate || p.Meta["io.modelcontextprotocol/related-task"].TaskID != id {
					t.Fatalf("question on the stream: %s %s", m.Method, m.Params)
				}
				c.e.Handle(context.Background(), c.sess, edge.In{Msg: &jsonrpc.Message{JSONRPC: "2.0", ID: m.ID, Result: json.RawMessage(`{"action":"accept","content":{"ok":true}}`)}}, nil)
			case m.Method == mcp.MethodNotificationsTasksStatus:
				validLegacy(t, "TaskStatusNotification", mustMarshal(t, m))
				var p struct{ TaskID, Status string }
				_ = json.Unmarshal(m.Params, &p)
				if p.TaskID == id {
					statuses = append(statuses, p.Status)
					done = p.Status == "completed" || p.Status == "failed"
				}
			}
		case <-deadline:
			t.Fatalf("no end; statuses %v", statuses)
		}
	}
	if want := []string{"input_required", "working", "completed"}; len(statuses) < 3 || !slices.Equal(statuses[len(statuses)-3:], want) {
		t.Fatalf("statuses %v, want them to end %v", statuses, want)
	}
	payload := result(t, c.do(mcp.MethodTasksResult, `{"taskId":"`+id+`"}`))
	if !strings.Contains(fmt.Sprint(payload["content"]), "legacy answered accept") {
		t.Fatalf("tasks/result: %v", payload)
	}
}

// TestLegacyTaskTwoQuestions: a 2025-11-25 task asking two questions at
// once stays input_required until both are answered: after the first
// answer tasks/get still says input_required (before, the first answer
// set it working while the second waited), after the second the task
// completes.
func TestLegacyTaskTwoQuestions(t *testing.T) {
	c := newTaskClient(t)
	if r := c.do("initialize", `{"protocolVersion":"2025-11-25","capabilities":{"elicitation":{}},"clientInfo":{"name":"t","version":"1"}}`); r.Msg.Error != nil {
		t.Fatal(r.Msg.Error)
	}
	got := make(chan *jsonrpc.Message, 16)
	defer c.e.Attach(c.sess, func(m *jsonrpc.Message) { got <- m })()
	res := result(t, c.do(mcp.MethodToolsCall, `{"name":"asks_two_legacy","arguments":{},"task":{}}`))
	id := res["task"].(map[string]any)["taskId"].(string)
	var questions []*jsonrpc.Message
	for deadline := time.After(5 * time.Second); len(questions) < 2; {
		select {
		case m := <-got:
			if m.IsRequest() && m.Method == mcp.MethodElicitationCreate {
				questions = append(questions, m)
			}
		case <-deadline:
			t.Fatalf("%d questions reached the client, want 2", len(questions))
		}
	}
	status := func() string {
		var g struct{ Status string }
		_ = json.Unmarshal(c.do(mcp.MethodTasksGet, `{"taskId":"`+id+`"}`).Msg.Result, &g)
		return g.Status
	}
	answer := func(m *jsonrpc.Message) {
		c.e.Handle(context.Background(), c.sess, edge.In{Msg: &jsonrpc.Message{JSONRPC: "2.0", ID: m.ID, Result: json.RawMessage(`{"action":"accept","content":{"ok":true}}`)}}, nil)
	}
	if s := status(); s != "input_required" {
		t.Fatalf("with two questions out: %s, want input_required", s)
	}
	answer(questions[0])
	// The call hears the answer in its own time: watch a while.
	for end := time.Now().Add(500 * time.Millisecond); time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
		if s := status(); s != "input_required" {
			t.Fatalf("with one question still out: %s, want input_required", s)
		}
	}
	answer(questions[1])
	payload := result(t, c.do(mcp.MethodTasksResult, `{"taskId":"`+id+`"}`))
	if !strings.Contains(fmt.Sprint(payload["content"]), "two answered 2") {
		t.Fatalf("tasks/result: %v", payload)
	}
}

func mustMarshal(t *testing.T, v any) json.RawMessage {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestTaskMcpNameHTTP: over Streamable HTTP, tasks/get's Mcp-Name mirrors
// params.taskId: a contradicting one is -32020 (HTTP 400), a matching one
// or none is served.
func TestTaskMcpNameHTTP(t *testing.T) {
	c := newTaskClient(t)
	h := streamhttp.New(c.e, streamhttp.Options{})
	srv := httptest.NewServer(h)
	defer srv.Close()
	defer h.Close()
	send := func(method, name, params string) (int, *jsonrpc.Message) {
		t.Helper()
		req, _ := http.NewRequest(http.MethodPost, srv.URL+"/mcp", bytes.NewBufferString(`{"jsonrpc":"2.0","id":1,"method":"`+method+`","params":`+params+`}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("MCP-Protocol-Version", "2026-07-28")
		req.Header.Set("Mcp-Method", method)
		if name != "" {
			req.Header.Set("Mcp-Name", name)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		raw, _ := io.ReadAll(resp.Body)
		if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
			sc := bufio.NewScanner(bytes.NewReader(raw))
			for sc.Scan() {
				if line := sc.Text(); strings.HasPrefix(line, "data:") {
					raw = []byte(strings.TrimSpace(strings.TrimPrefix(line, "data:")))
				}
			}
		}
		var m jsonrpc.Message
		if err := json.Unmarshal(raw, &m); err != nil {
			t.Fatalf("%s: %v in %q", method, err, raw)
		}
		return resp.StatusCode, &m
	}
	_, m := send(mcp.MethodToolsCall, "must", `{`+metaWith(extCaps)+`,"name":"must","arguments":{}}`)
	var h2 struct{ TaskID string }
	if m.Error != nil || json.Unmarshal(m.Result, &h2) != nil || h2.TaskID == "" {
		t.Fatalf("task: %+v %s", m.Error, m.Result)
	}
	get := `{` + metaWith(extCaps) + `,"taskId":"` + h2.TaskID + `"}`
	if status, m := send(mcp.MethodTasksGet, "someone-else", get); status != http.StatusBadRequest || m.Error == nil || m.Error.Code != jsonrpc.HeaderMismatch {
		t.Fatalf("contradicting Mcp-Name: %d %+v", status, m.Error)
	}
	for _, name := range []string{h2.TaskID, ""} {
		if status, m := send(mcp.MethodTasksGet, name, get); status != http.StatusOK || m.Error != nil {
			t.Fatalf("Mcp-Name %q: %d %+v", name, status, m.Error)
		}
	}
}

// TestTaskNoFlavour: a client of a revision without tasks (2025-06-18)
// calling a tool that supports them, even one that requires them, is
// answered when the call ends; a 2026-07-28 client's legacy task member
// on a sync-only tool is ignored (SEP-2663: MUST).
func TestTaskNoFlavour(t *testing.T) {
	c := newTaskClient(t)
	c.initialize("2025-06-18")
	r := c.do(mcp.MethodToolsCall, `{"name":"must","arguments":{},"task":{"ttl":1000}}`)
	if res := result(t, r); res["task"] != nil || res["content"] == nil {
		t.Fatalf("2025-06-18: %s", r.Msg.Result)
	}
	m := newTaskClient(t)
	res := result(t, m.call(extCaps, "never", `,"task":{"ttl":60000}`))
	if res["resultType"] != "complete" || res["taskId"] != nil {
		t.Fatalf("2026-07-28 with a task member: %v", res)
	}
}

// TestLegacyTaskQuestionsNotRelayed: a 2025-11-25 task's question goes on
// the session's own stream, never on its relay to another replica's
// (Edge.AttachRelay: the answer would land on any replica, not where the
// question waits), whichever of the two the edge finds first; with the
// relay alone the question is held, while the task's status still goes
// through it.
func TestLegacyTaskQuestionsNotRelayed(t *testing.T) {
	c := newTaskClient(t)
	if r := c.do("initialize", `{"protocolVersion":"2025-11-25","capabilities":{"elicitation":{}},"clientInfo":{"name":"t","version":"1"}}`); r.Msg.Error != nil {
		t.Fatal(r.Msg.Error)
	}
	relayed := make(chan *jsonrpc.Message, 64)
	defer c.e.AttachRelay(c.sess, func(m *jsonrpc.Message) { relayed <- m })()
	own := make(chan *jsonrpc.Message, 64)
	detach := c.e.Attach(c.sess, func(m *jsonrpc.Message) { own <- m })
	for range 8 { // the listeners are found in no fixed order
		c.do(mcp.MethodToolsCall, `{"name":"asks_legacy","arguments":{},"task":{}}`)
		for asked := false; !asked; {
			select {
			case m := <-own:
				if asked = m.IsRequest(); asked {
					c.e.Handle(context.Background(), c.sess, edge.In{Msg: &jsonrpc.Message{JSONRPC: "2.0", ID: m.ID, Result: json.RawMessage(`{"action":"accept","content":{"ok":true}}`)}}, nil)
				}
			case m := <-relayed:
				if m.IsRequest() {
					t.Fatalf("the question went to the relay: %s", m.Method)
				}
			case <-time.After(5 * time.Second):
				t.Fatal("no question on the session's own stream")
			}
		}
	}
	detach()
	res := result(t, c.do(mcp.MethodToolsCall, `{"name":"asks_legacy","arguments":{},"task":{}}`))
	id := res["task"].(map[string]any)["taskId"].(string)
	defer c.do(mcp.MethodTasksCancel, `{"taskId":"`+id+`"}`) // its question never answered
	for deadline := time.After(5 * time.Second); ; {
		select {
		case m := <-relayed:
			if m.IsRequest() {
				t.Fatalf("the question went to the relay: %s", m.Method)
			}
			if m.Method == mcp.MethodNotificationsTasksStatus && strings.Contains(string(m.Params), `"input_required"`) {
				return // told through the relay; the question held here
			}
		case <-deadline:
			t.Fatal("the relay was not told the task waits for input")
		}
	}
}
