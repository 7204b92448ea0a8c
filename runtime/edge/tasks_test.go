package edge_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpx-dev/mcpx/generated/mcp"
	"github.com/mcpx-dev/mcpx/runtime/edge"
	"github.com/mcpx-dev/mcpx/runtime/jsonrpc"
	"github.com/mcpx-dev/mcpx/runtime/server"
	"github.com/mcpx-dev/mcpx/runtime/tasks"
	"github.com/mcpx-dev/mcpx/testkit/closedworld"
)

// taskNSTools is a namespace whose tools exercise every task rule: each
// declares its execution.taskSupport, and the slow ones wait for their
// context or a pause well past the test edge's windows.
type taskToolsNS struct {
	fakeNS
	ran       atomic.Int32  // calls of must
	cancelled chan struct{} // closed when slow sees its context end
}

const (
	testEager = 200 * time.Millisecond
	testAfter = 500 * time.Millisecond
	pastAll   = time.Second // longer than either window
)

func (n *taskToolsNS) ListTools(context.Context) ([]mcp.Tool, error) {
	tool := func(name string, support mcp.TaskSupport) mcp.Tool {
		t := mcp.Tool{Name: name, InputSchema: json.RawMessage(`{"type":"object"}`)}
		if support != "" {
			t.Execution = &mcp.ToolExecution{TaskSupport: support}
		}
		return t
	}
	return []mcp.Tool{
		tool("quick", mcp.TaskSupportOptional), tool("slow", mcp.TaskSupportOptional), tool("must", mcp.TaskSupportRequired),
		tool("plain", ""), tool("never", mcp.TaskSupportForbidden), tool("tool_error", mcp.TaskSupportOptional),
		tool("rpc_error", mcp.TaskSupportOptional), tool("asks_early", mcp.TaskSupportOptional), tool("asks_late", mcp.TaskSupportOptional),
		tool("asks_legacy", mcp.TaskSupportOptional), tool("asks_two_legacy", mcp.TaskSupportOptional),
	}, nil
}

func text(s string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.ContentBlock{{Value: &mcp.TextContent{Text: s}}}}
}

func taskQuestion(msg string) mcp.InputRequest {
	return mcp.InputRequest{Value: &mcp.ElicitRequest{Params: mcp.ElicitRequestParams{Value: &mcp.ElicitRequestFormParams{
		Message: msg, RequestedSchema: json.RawMessage(`{"type":"object","properties":{"ok":{"type":"boolean"}}}`)}}}}
}

// missing returns the InputRequired for the keys p has no answer for.
func missing(p *mcp.CallToolRequestParams, keys ...string) error {
	reqs := map[string]mcp.InputRequest{}
	for _, k := range keys {
		if _, ok := p.InputResponses[k]; !ok {
			reqs[k] = taskQuestion("answer " + k)
		}
	}
	if len(reqs) == 0 {
		return nil
	}
	return &server.InputRequired{Result: &mcp.InputRequiredResult{InputRequests: reqs, RequestState: "state-" + p.Name}, Err: errors.New("needs input")}
}

func pause(ctx context.Context, d time.Duration) error {
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(d):
		return nil
	}
}

func (n *taskToolsNS) CallTool(ctx context.Context, p *mcp.CallToolRequestParams) (*mcp.CallToolResult, error) {
	switch p.Name {
	case "quick":
		return text("quick"), nil
	case "slow":
		<-ctx.Done()
		close(n.cancelled)
		return nil, ctx.Err()
	case "must":
		n.ran.Add(1)
		return text("must"), pause(ctx, pastAll)
	case "plain", "never":
		return text(p.Name), pause(ctx, pastAll)
	case "tool_error":
		if err := pause(ctx, pastAll); err != nil {
			return nil, err
		}
		return &mcp.CallToolResult{Content: []mcp.ContentBlock{{Value: &mcp.TextContent{Text: "broke"}}}, IsError: mcp.Ptr(true)}, nil
	case "rpc_error":
		if err := pause(ctx, pastAll); err != nil {
			return nil, err
		}
		return nil, jsonrpc.Errorf(jsonrpc.InternalError, map[string]string{"why": "test"}, "rpc_error broke")
	case "asks_early":
		if err := missing(p, "q"); err != nil {
			return nil, err
		}
		return text("early answered"), nil
	case "asks_legacy":
		r, err := server.Ask(ctx, mcp.MethodElicitationCreate, &mcp.ElicitRequestParams{Value: &mcp.ElicitRequestFormParams{
			Message: "ok?", RequestedSchema: json.RawMessage(`{"type":"object","properties":{"ok":{"type":"boolean"}}}`)}})
		if err != nil {
			return nil, err
		}
		return text("legacy answered " + string(r.(*mcp.ElicitResult).Action)), nil
	case "asks_two_legacy": // two questions at once, each answered on its own
		var wg sync.WaitGroup
		var mu sync.Mutex
		var actions []string
		for _, q := range []string{"one?", "two?"} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				r, err := server.Ask(ctx, mcp.MethodElicitationCreate, &mcp.ElicitRequestParams{Value: &mcp.ElicitRequestFormParams{
					Message: q, RequestedSchema: json.RawMessage(`{"type":"object","properties":{"ok":{"type":"boolean"}}}`)}})
				mu.Lock()
				defer mu.Unlock()
				if err != nil {
					actions = append(actions, err.Error())
					return
				}
				actions = append(actions, string(r.(*mcp.ElicitResult).Action))
			}()
		}
		wg.Wait()
		return text(fmt.Sprintf("two answered %d", len(actions))), nil
	case "asks_late":
		if err := pause(ctx, pastAll); err != nil {
			return nil, err
		}
		if err := missing(p, "a", "b"); err != nil {
			return nil, err
		}
		if p.RequestState != "state-asks_late" {
			return nil, fmt.Errorf("the retry lost the requestState: %q", p.RequestState)
		}
		return text(fmt.Sprintf("late answered %d", len(p.InputResponses))), nil
	}
	return n.fakeNS.CallTool(ctx, p)
}

const (
	extCaps        = `{"extensions":{"io.modelcontextprotocol/tasks":{}}}`
	extElicitCaps  = `{"elicitation":{},"extensions":{"io.modelcontextprotocol/tasks":{}}}`
	plainModernCap = `{}`
)

func metaWith(caps string) string {
	return `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":` + caps + `}`
}

type taskClient struct {
	*client
	ns *taskToolsNS
}

func newTaskClient(t *testing.T) *taskClient {
	ns := &taskToolsNS{cancelled: make(chan struct{})}
	c := newClient(t)
	c.e = &edge.Edge{Server: &server.Server{NS: ns, Info: mcp.Implementation{Name: "mcpx-test", Version: "0.0.1"}},
		Tasks: edge.TaskOptions{Runner: &tasks.Runner{}, Eager: testEager, After: testAfter}}
	return &taskClient{client: c, ns: ns}
}

func (c *taskClient) call(caps, name, extra string) edge.Reply {
	c.t.Helper()
	return c.do(mcp.MethodToolsCall, `{`+metaWith(caps)+`,"name":"`+name+`","arguments":{}`+extra+`}`)
}

func (c *taskClient) taskDo(method, caps, id, extra string) edge.Reply {
	c.t.Helper()
	return c.do(method, `{`+metaWith(caps)+`,"taskId":"`+id+`"`+extra+`}`)
}

// valid checks a 2026-07-28 result closed-world against def.
func valid(t *testing.T, def string, r edge.Reply) {
	t.Helper()
	v, err := closedworld.Default()
	if err != nil {
		t.Fatal(err)
	}
	if err := v.Validate("2026-07-28", def, r.Msg.Result); err != nil {
		t.Errorf("%s %s:\n%v", def, r.Msg.Result, err)
	}
}

// handle checks r is a flat task handle and returns its id.
func handle(t *testing.T, r edge.Reply) string {
	t.Helper()
	res := result(t, r)
	if res["resultType"] != "task" || res["taskId"] == nil || res["task"] != nil || res["ttl"] != nil || res["pollInterval"] != nil {
		t.Fatalf("want a flat task handle, got %s", r.Msg.Result)
	}
	if _, ok := res["ttlMs"].(float64); !ok {
		t.Fatalf("handle without integer ttlMs: %s", r.Msg.Result)
	}
	valid(t, "CreateTaskResult", r)
	return res["taskId"].(string)
}

// until polls tasks/get until the task reaches one of statuses.
func (c *taskClient) until(id string, statuses ...string) map[string]any {
	c.t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		r := c.taskDo(mcp.MethodTasksGet, extCaps, id, "")
		res := result(c.t, r)
		for _, s := range statuses {
			if res["status"] == s {
				if res["resultType"] != "complete" {
					c.t.Errorf("tasks/get resultType %v, want complete", res["resultType"])
				}
				valid(c.t, "GetTaskResult", r)
				return res
			}
		}
		if time.Now().After(deadline) {
			c.t.Fatalf("task %s still %v, want %v", id, res["status"], statuses)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestTaskRequiredWithoutExtension: a required tool from a client that did
// not declare the extension on the request is -32021 naming it in
// data.requiredCapabilities, HTTP 400, before the tool runs.
func TestTaskRequiredWithoutExtension(t *testing.T) {
	c := newTaskClient(t)
	r := c.call(plainModernCap, "must", "")
	e := rpcError(t, r)
	var data struct {
		RequiredCapabilities struct {
			Extensions map[string]json.RawMessage
		}
	}
	_ = json.Unmarshal(e.Data, &data)
	if e.Code != jsonrpc.MissingRequiredClientCapability || r.Status != http.StatusBadRequest || data.RequiredCapabilities.Extensions["io.modelcontextprotocol/tasks"] == nil {
		t.Fatalf("got %d %s data %s status %d", e.Code, e.Message, e.Data, r.Status)
	}
	if n := c.ns.ran.Load(); n != 0 {
		t.Fatalf("the tool ran %d times", n)
	}
	// With the extension it runs, as a task (it outlasts the window).
	id := handle(t, c.call(extCaps, "must", ""))
	c.until(id, "completed")
	if n := c.ns.ran.Load(); n != 1 {
		t.Fatalf("the tool ran %d times, want 1", n)
	}
}

// TestTaskEagerWindow: an optional tool that finishes within the window is
// answered directly (resultType complete, no taskId); one that does not
// becomes a task whose tasks/get resolves at once and, once done, inlines
// the result (resultType complete inside and out, no related-task).
func TestTaskEagerWindow(t *testing.T) {
	c := newTaskClient(t)
	res := result(t, c.call(extCaps, "quick", ""))
	if res["resultType"] != "complete" || res["taskId"] != nil {
		t.Fatalf("quick: %v", res)
	}
	id := handle(t, c.call(extCaps, "must", ""))
	got := result(t, c.taskDo(mcp.MethodTasksGet, extCaps, id, "")) // at once: durable before the handle
	if got["taskId"] != id || got["status"] != "working" || got["result"] != nil {
		t.Fatalf("tasks/get right after the handle: %v", got)
	}
	done := c.until(id, "completed")
	inner, _ := done["result"].(map[string]any)
	if inner == nil || inner["resultType"] != "complete" || inner["content"] == nil {
		t.Fatalf("completed task: %v", done)
	}
	if meta, _ := inner["_meta"].(map[string]any); meta != nil && meta["io.modelcontextprotocol/related-task"] != nil {
		t.Fatalf("related-task on the inlined result: %v", meta)
	}
}

// TestTaskOutcomes: a tool result with isError is completed (with the
// result), a JSON-RPC error is failed with that error and no result.
func TestTaskOutcomes(t *testing.T) {
	c := newTaskClient(t)
	done := c.until(handle(t, c.call(extCaps, "tool_error", "")), "completed", "failed")
	if inner, _ := done["result"].(map[string]any); done["status"] != "completed" || inner == nil || inner["isError"] != true {
		t.Fatalf("isError: %v", done)
	}
	failed := c.until(handle(t, c.call(extCaps, "rpc_error", "")), "completed", "failed")
	e, _ := failed["error"].(map[string]any)
	if failed["status"] != "failed" || e == nil || e["code"] != float64(jsonrpc.InternalError) || e["message"] != "rpc_error broke" || failed["result"] != nil {
		t.Fatalf("JSON-RPC error: %v", failed)
	}
}

// TestTaskNotDeclaredOrForbidden: without the extension an optional tool
// runs inline however long it takes; a forbidden one never becomes a task;
// a tool that declares nothing becomes one only past the longer window,
// and never for a client that can answer questions inline.
func TestTaskNotDeclaredOrForbidden(t *testing.T) {
	c := newTaskClient(t)
	for _, tc := range []struct{ caps, tool string }{
		{plainModernCap, "tool_error"}, {extCaps, "never"}, {extElicitCaps, "plain"},
	} {
		if res := result(t, c.call(tc.caps, tc.tool, "")); res["resultType"] != "complete" || res["taskId"] != nil {
			t.Errorf("%s with %s: %v", tc.tool, tc.caps, res)
		}
	}
	handle(t, c.call(extCaps, "plain", "")) // pastAll > testAfter
}

// TestTaskQuestions: a question within the window is put inline
// (input_required, no task); one after it parks the task in
// input_required with the questions on tasks/get; tasks/update answers
// key by key (answered keys leave at once, unknown keys are ignored, each
// acknowledged with an empty result), and with every key answered the
// call runs again with the answers and its requestState and completes.
func TestTaskQuestions(t *testing.T) {
	c := newTaskClient(t)
	res := result(t, c.call(extElicitCaps, "asks_early", ""))
	if res["resultType"] != "input_required" || res["taskId"] != nil {
		t.Fatalf("early question: %v", res)
	}
	id := handle(t, c.call(extElicitCaps, "asks_late", ""))
	parked := c.until(id, "input_required")
	reqs, _ := parked["inputRequests"].(map[string]any)
	if len(reqs) != 2 {
		t.Fatalf("inputRequests: %v", parked)
	}
	var keys []string
	for k, v := range reqs {
		keys = append(keys, k)
		if q, _ := v.(map[string]any); q["method"] != "elicitation/create" {
			t.Fatalf("inputRequests[%s] = %v", k, v)
		}
	}
	ack := c.taskDo(mcp.MethodTasksUpdate, extCaps, id, `,"inputResponses":{"`+keys[0]+`":{"action":"accept","content":{"ok":true}},"nobody-asked":{"action":"accept"}}`)
	if a := result(t, ack); a["resultType"] != "complete" || len(a) != 2 { // resultType and _meta only
		t.Fatalf("tasks/update ack: %v", a)
	}
	valid(t, "UpdateTaskResult", ack)
	still := c.until(id, "input_required")
	left, _ := still["inputRequests"].(map[string]any)
	if _, ok := left[keys[1]]; len(left) != 1 || !ok {
		t.Fatalf("after a partial update: %v", still)
	}
	result(t, c.taskDo(mcp.MethodTasksUpdate, extCaps, id, `,"inputResponses":{"`+keys[1]+`":{"action":"accept","content":{"ok":true}}}`))
	done := c.until(id, "completed", "failed")
	inner, _ := done["result"].(map[string]any)
	if done["status"] != "completed" || !strings.Contains(fmt.Sprint(inner["content"]), "late answered 2") {
		t.Fatalf("after every answer: %v", done)
	}
}

// TestTaskCancel: tasks/cancel acknowledges with an empty result, ends the
// call's context, and the task reads cancelled; cancelling it again (now
// terminal) is acknowledged too; an unknown id is -32602.
func TestTaskCancel(t *testing.T) {
	c := newTaskClient(t)
	id := handle(t, c.call(extCaps, "slow", ""))
	ack := c.taskDo(mcp.MethodTasksCancel, extCaps, id, "")
	if a := result(t, ack); a["resultType"] != "complete" || a["taskId"] != nil || a["status"] != nil {
		t.Fatalf("cancel ack: %v", a)
	}
	valid(t, "CancelTaskResult", ack)
	select {
	case <-c.ns.cancelled:
	case <-time.After(5 * time.Second):
		t.Fatal("the call behind the task was not cancelled")
	}
	c.until(id, "cancelled")
	if a := result(t, c.taskDo(mcp.MethodTasksCancel, extCaps, id, "")); a["resultType"] != "complete" {
		t.Fatalf("cancel of a terminal task: %v", a)
	}
	if e := rpcError(t, c.taskDo(mcp.MethodTasksCancel, extCaps, "no-such-task", "")); e.Code != jsonrpc.InvalidParams {
		t.Fatalf("unknown id: %d %s", e.Code, e.Message)
	}
}

// TestTaskMethodsModern: without the extension on the request tasks/get,
// tasks/update and tasks/cancel are -32021; tasks/list and tasks/result
// are -32601 (HTTP 404) to a 2026-07-28 client; an unknown id on tasks/get
// is -32602.
func TestTaskMethodsModern(t *testing.T) {
	c := newTaskClient(t)
	id := handle(t, c.call(extCaps, "must", ""))
	for _, m := range []string{mcp.MethodTasksGet, mcp.MethodTasksUpdate, mcp.MethodTasksCancel} {
		extra := ""
		if m == mcp.MethodTasksUpdate {
			extra = `,"inputResponses":{}`
		}
		r := c.taskDo(m, plainModernCap, id, extra)
		if e := rpcError(t, r); e.Code != jsonrpc.MissingRequiredClientCapability || r.Status != http.StatusBadRequest {
			t.Errorf("%s without the extension: %d %s", m, e.Code, e.Message)
		}
	}
	for _, m := range []string{mcp.MethodTasksList, mcp.MethodTasksResult} {
		r := c.taskDo(m, extCaps, id, "")
		if e := rpcError(t, r); e.Code != jsonrpc.MethodNotFound || r.Status != http.StatusNotFound {
			t.Errorf("%s: %d %s status %d", m, e.Code, e.Message, r.Status)
		}
	}
	if e := rpcError(t, c.taskDo(mcp.MethodTasksGet, extCaps, "tasks-nonexistent", "")); e.Code != jsonrpc.InvalidParams {
		t.Errorf("unknown id: %d %s", e.Code, e.Message)
	}
}

// TestTaskExtensionAdvertised: server/discover declares the extension
// under capabilities.extensions and no core tasks capability; a
// 2025-11-25 initialize declares the core one and no extensions.
func TestTaskExtensionAdvertised(t *testing.T) {
	c := newTaskClient(t)
	res := result(t, c.do(mcp.MethodServerDiscover, `{`+modernMeta+`}`))
	caps, _ := res["capabilities"].(map[string]any)
	ext, _ := caps["extensions"].(map[string]any)
	if ext["io.modelcontextprotocol/tasks"] == nil || caps["tasks"] != nil {
		t.Fatalf("discover capabilities: %v", caps)
	}
	l := newTaskClient(t)
	r := l.do("initialize", `{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}`)
	var init struct{ Capabilities map[string]json.RawMessage }
	_ = json.Unmarshal(r.Msg.Result, &init)
	if init.Capabilities["tasks"] == nil || init.Capabilities["extensions"] != nil {
		t.Fatalf("2025-11-25 capabilities: %s", r.Msg.Result)
	}
	old := newTaskClient(t)
	r = old.do("initialize", `{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}`)
	init.Capabilities = nil
	_ = json.Unmarshal(r.Msg.Result, &init)
	if init.Capabilities["tasks"] != nil {
		t.Fatalf("2025-06-18 capabilities: %s", r.Msg.Result)
	}
}

// TestTaskStoreFull: with the store full no task is evicted: a
// 2026-07-28 call that would become a task is answered when it ends, and
// a 2025-11-25 client asking for a task is told the store is full.
func TestTaskStoreFull(t *testing.T) {
	c := newTaskClient(t)
	c.e.Tasks.Runner = &tasks.Runner{Store: &tasks.Memory{Max: 1}}
	first := handle(t, c.call(extCaps, "slow", ""))
	res := result(t, c.call(extCaps, "must", ""))
	if res["resultType"] != "complete" || res["taskId"] != nil {
		t.Fatalf("a call past the window with the store full: %v", res)
	}
	if got := result(t, c.taskDo(mcp.MethodTasksGet, extCaps, first, "")); got["status"] != "working" {
		t.Fatalf("the live task: %v", got)
	}
	l := &taskClient{client: newClient(t), ns: c.ns}
	l.e = c.e
	l.initialize("2025-11-25")
	e := rpcError(t, l.do(mcp.MethodToolsCall, `{"name":"must","arguments":{},"task":{}}`))
	if e.Code != jsonrpc.InternalError || !strings.Contains(e.Message, "full") {
		t.Fatalf("a 2025-11-25 task with the store full: %d %s", e.Code, e.Message)
	}
	// The slow task would otherwise run on past the test (goleak in TestMain).
	c.taskDo(mcp.MethodTasksCancel, extCaps, first, "")
	select {
	case <-c.ns.cancelled:
	case <-time.After(time.Minute):
		t.Fatal("the cancelled task's call did not end")
	}
}

// TestTaskListenUndeclared: a subscriptions/listen asking for task
// notifications (taskIds, or the extension schema's tasksStatus) without
// the extension on the request is -32021 before any stream opens; with
// it, the listen is acknowledged.
func TestTaskListenUndeclared(t *testing.T) {
	c := newTaskClient(t)
	for _, f := range []string{`"taskIds":["t1"]`, `"tasksStatus":["t1"]`} {
		r := c.do(mcp.MethodSubscriptionsListen, `{`+modernMeta+`,"notifications":{`+f+`}}`)
		if e := rpcError(t, r); e.Code != jsonrpc.MissingRequiredClientCapability || r.Status != http.StatusBadRequest {
			t.Errorf("listen with %s: %d %s", f, e.Code, e.Message)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	acked := make(chan *jsonrpc.Message, 1)
	done := make(chan struct{})
	go func() {
		defer close(done)
		m := &jsonrpc.Message{JSONRPC: "2.0", ID: json.RawMessage(`"L"`), Method: mcp.MethodSubscriptionsListen,
			Params: json.RawMessage(`{` + metaWith(extCaps) + `,"notifications":{"taskIds":["t1"]}}`)}
		c.e.Handle(ctx, new(edge.Session), edge.In{Msg: m}, func(m *jsonrpc.Message) { acked <- m })
	}()
	select {
	case m := <-acked:
		if m.Method != mcp.MethodNotificationsSubscriptionsAcknowledged {
			t.Fatalf("with the extension: %s", m.Method)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no acknowledgement")
	}
	cancel()
	<-done
}
