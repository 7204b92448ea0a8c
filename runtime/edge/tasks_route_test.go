package edge_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mcpx-dev/mcpx/generated/mcp"
	"github.com/mcpx-dev/mcpx/runtime/edge"
	"github.com/mcpx-dev/mcpx/runtime/jsonrpc"
	"github.com/mcpx-dev/mcpx/runtime/server"
	"github.com/mcpx-dev/mcpx/runtime/tasks"
	"github.com/mcpx-dev/mcpx/runtime/transport/stdio"
	"github.com/mcpx-dev/mcpx/runtime/transport/streamhttp"
	"github.com/mcpx-dev/mcpx/testkit/closedworld"
)

// A 2025-11-25 task's questions and progress go on the client's open
// tasks/result stream (tasks_legacy.go). routeNS's one tool, "route",
// waits for release (closed by the test, or already closed), reports
// progress 1 of 2, asks an elicitation, reports 2 of 2, and answers with
// the elicitation's action.
type routeNS struct {
	fakeNS
	release chan struct{}
}

func (n *routeNS) ListTools(context.Context) ([]mcp.Tool, error) {
	return []mcp.Tool{{Name: "route", InputSchema: json.RawMessage(`{"type":"object"}`), Execution: &mcp.ToolExecution{TaskSupport: mcp.TaskSupportOptional}},
		{Name: "late", InputSchema: json.RawMessage(`{"type":"object"}`), Execution: &mcp.ToolExecution{TaskSupport: mcp.TaskSupportOptional}}}, nil
}

func (n *routeNS) CallTool(ctx context.Context, p *mcp.CallToolRequestParams) (*mcp.CallToolResult, error) {
	if p.Name == "late" {
		// Reports progress once more after it has answered: the task
		// has ended by then.
		go func() {
			time.Sleep(100 * time.Millisecond)
			server.Progress(ctx, 2, 2, "too late")
		}()
		server.Progress(ctx, 1, 2, "in time")
		return text("late done"), nil
	}
	if p.Name != "route" {
		return n.fakeNS.CallTool(ctx, p)
	}
	select {
	case <-n.release:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	server.Progress(ctx, 1, 2, "asking")
	r, err := server.Ask(ctx, mcp.MethodElicitationCreate, &mcp.ElicitRequestParams{Value: &mcp.ElicitRequestFormParams{
		Message: "go on?", RequestedSchema: json.RawMessage(`{"type":"object","properties":{"ok":{"type":"boolean"}}}`)}})
	if err != nil {
		return nil, err
	}
	server.Progress(ctx, 2, 2, "answered")
	return text("route answered " + string(r.(*mcp.ElicitResult).Action)), nil
}

func routeEdge(release chan struct{}) *edge.Edge {
	return &edge.Edge{Server: &server.Server{NS: &routeNS{release: release}, Info: mcp.Implementation{Name: "mcpx-test", Version: "0.0.1"}},
		Tasks: edge.TaskOptions{Runner: &tasks.Runner{}}}
}

// checkLegacyFromServer validates closed-world (2025-11-25) a message
// mcpx sent its client about task id: its questions and progress carry
// related-task with the id, its status notifications do not.
func checkLegacyFromServer(t *testing.T, m *jsonrpc.Message, id string) {
	t.Helper()
	v, err := closedworld.Default()
	if err != nil {
		t.Fatal(err)
	}
	def := map[string]string{mcp.MethodElicitationCreate: "ElicitRequest", mcp.MethodNotificationsProgress: "ProgressNotification",
		mcp.MethodNotificationsTasksStatus: "TaskStatusNotification"}[m.Method]
	if def == "" {
		t.Errorf("mcpx sent the client %s: %s", m.Method, m.Params)
		return
	}
	if err := v.Validate("2025-11-25", def, mustMarshal(t, m)); err != nil {
		t.Errorf("%s %s:\n%v", def, m.Params, err)
	}
	var p struct {
		Meta map[string]struct{ TaskID string } `json:"_meta"`
	}
	_ = json.Unmarshal(m.Params, &p)
	rt, tagged := p.Meta[mcp.MetaKeyRelatedTask]
	if m.Method == mcp.MethodNotificationsTasksStatus {
		if tagged {
			t.Errorf("a status notification carries related-task (the page: SHOULD NOT): %s", m.Params)
		}
		return
	}
	if rt.TaskID != id {
		t.Errorf("%s without related-task %s: %s", m.Method, id, m.Params)
	}
}

// routeSession is a 2025-11-25 client over Streamable HTTP that reads
// SSE responses as they come.
type routeSession struct {
	*httpSession
}

// open POSTs a request (or GETs the session stream, method "") and
// returns its messages as they arrive; the channel closes with the stream.
func (s routeSession) open(ctx context.Context, method, params string) <-chan *jsonrpc.Message {
	s.t.Helper()
	var req *http.Request
	if method == "" {
		req, _ = http.NewRequestWithContext(ctx, http.MethodGet, s.url, nil)
		req.Header.Set("Accept", "text/event-stream")
	} else {
		s.n++
		body := `{"jsonrpc":"2.0","id":"r` + strconv.Itoa(s.n) + `","method":"` + method + `","params":` + params + `}`
		req, _ = http.NewRequestWithContext(ctx, http.MethodPost, s.url, bytes.NewBufferString(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
	}
	req.Header.Set("Mcp-Session-Id", s.id)
	req.Header.Set("MCP-Protocol-Version", "2025-11-25")
	out := make(chan *jsonrpc.Message, 32)
	go func() { // a stream's headers may wait for its first event
		defer close(out)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return
		}
		defer resp.Body.Close()
		if !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
			raw, _ := io.ReadAll(resp.Body)
			var m jsonrpc.Message
			if json.Unmarshal(raw, &m) == nil {
				out <- &m
			}
			return
		}
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			if line := sc.Text(); strings.HasPrefix(line, "data:") {
				var m jsonrpc.Message
				if json.Unmarshal([]byte(strings.TrimSpace(strings.TrimPrefix(line, "data:"))), &m) == nil {
					out <- &m
				}
			}
		}
	}()
	return out
}

// answer POSTs the client's answer to question q.
func (s routeSession) answer(q *jsonrpc.Message, result string) {
	s.t.Helper()
	req, _ := http.NewRequest(http.MethodPost, s.url, bytes.NewBufferString(`{"jsonrpc":"2.0","id":`+string(q.ID)+`,"result":`+result+`}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Session-Id", s.id)
	req.Header.Set("MCP-Protocol-Version", "2025-11-25")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		s.t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusAccepted {
		s.t.Fatalf("the answer was taken with HTTP %d", resp.StatusCode)
	}
}

func routeHTTP(t *testing.T, release chan struct{}) routeSession {
	e := routeEdge(release)
	h := streamhttp.New(e, streamhttp.Options{})
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	t.Cleanup(func() { h.Close() })
	s := routeSession{&httpSession{t: t, url: srv.URL + "/mcp"}}
	if m := s.post("initialize", `{"protocolVersion":"2025-11-25","capabilities":{"elicitation":{}},"clientInfo":{"name":"t","version":"1"}}`); m.Error != nil || s.id == "" {
		t.Fatalf("initialize: %+v", m.Error)
	}
	s.post(mcp.MethodNotificationsInitialized, `{}`)
	return s
}

// startRouteTask starts the route tool as a 2025-11-25 task with progress
// token "tok" and returns the task's id.
func (s routeSession) startRouteTask() string {
	s.t.Helper()
	m := s.post(mcp.MethodToolsCall, `{"name":"route","arguments":{},"task":{},"_meta":{"progressToken":"tok"}}`)
	var created struct{ Task struct{ TaskID string } }
	if m.Error != nil || json.Unmarshal(m.Result, &created) != nil || created.Task.TaskID == "" {
		s.t.Fatalf("tools/call with task: %+v %s", m.Error, m.Result)
	}
	return created.Task.TaskID
}

// followResult reads a tasks/result stream to its end, answering the
// question on it, and returns the methods of what came before the
// response (in order), the progress values on "tok", and the response.
func (s routeSession) followResult(stream <-chan *jsonrpc.Message, id string) (methods []string, progress []float64, final *jsonrpc.Message) {
	s.t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		select {
		case m, ok := <-stream:
			if !ok {
				s.t.Fatalf("the tasks/result stream ended without its response, after %v", methods)
			}
			if m.IsResponse() {
				return methods, progress, m
			}
			methods = append(methods, m.Method)
			checkLegacyFromServer(s.t, m, id)
			switch m.Method {
			case mcp.MethodElicitationCreate:
				s.answer(m, `{"action":"accept","content":{"ok":true}}`)
			case mcp.MethodNotificationsProgress:
				var p struct {
					ProgressToken json.RawMessage
					Progress      float64
				}
				_ = json.Unmarshal(m.Params, &p)
				if string(p.ProgressToken) != `"tok"` {
					s.t.Errorf("progress on token %s, want the call's \"tok\"", p.ProgressToken)
				}
				progress = append(progress, p.Progress)
			}
		case <-deadline:
			s.t.Fatalf("no tasks/result response; so far %v", methods)
		}
	}
}

func wantRouteResult(t *testing.T, final *jsonrpc.Message, id string) {
	t.Helper()
	if final.Error != nil || !strings.Contains(string(final.Result), "route answered accept") || !strings.Contains(string(final.Result), id) {
		t.Fatalf("tasks/result: %+v %s", final.Error, final.Result)
	}
	validLegacy(t, "CallToolResult", final.Result)
}

// TestLegacyTaskQuestionOnResultStream: with a tasks/result open for the
// task, the task's question and its progress (on the tools/call's token,
// tagged related-task) come on that stream, not the session's GET
// stream, which is open too; the question is answered from there and the
// task completes, answering the tasks/result. Every message is valid
// 2025-11-25.
func TestLegacyTaskQuestionOnResultStream(t *testing.T) {
	release := make(chan struct{})
	s := routeHTTP(t, release)
	ctx, stop := context.WithCancel(t.Context())
	defer stop()
	get := s.open(ctx, "", "")
	id := s.startRouteTask()
	res := s.open(ctx, mcp.MethodTasksResult, `{"taskId":"`+id+`"}`)
	time.Sleep(100 * time.Millisecond) // the tasks/result is waiting
	close(release)
	methods, progress, final := s.followResult(res, id)
	wantRouteResult(t, final, id)
	if len(progress) != 2 || progress[0] != 1 || progress[1] != 2 {
		t.Errorf("progress on the tasks/result stream %v, want [1 2]", progress)
	}
	if strings.Count(strings.Join(methods, " "), mcp.MethodElicitationCreate) != 1 {
		t.Errorf("the tasks/result stream carried %v, want the one question", methods)
	}
	stop()
	for m := range get {
		if m.Method == mcp.MethodElicitationCreate || m.Method == mcp.MethodNotificationsProgress {
			t.Errorf("the GET stream carried %s while a tasks/result was open: %s", m.Method, m.Params)
		}
	}
}

// TestLegacyTaskQuestionHeldForResult: a question asked while the client
// has neither a tasks/result nor a GET stream open waits (the task shows
// input_required) and is sent on the tasks/result the client then opens;
// answered there, the task completes. Without that, the question had no
// stream and failed the task at once.
func TestLegacyTaskQuestionHeldForResult(t *testing.T) {
	release := make(chan struct{})
	close(release)
	s := routeHTTP(t, release)
	id := s.startRouteTask()
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		g := s.post(mcp.MethodTasksGet, `{"taskId":"`+id+`"}`)
		validLegacy(t, "GetTaskResult", g.Result)
		if strings.Contains(string(g.Result), `"input_required"`) {
			break
		}
		if time.Now().After(deadline) || g.Error != nil {
			t.Fatalf("the task never waited for input: %+v %s", g.Error, g.Result)
		}
	}
	methods, progress, final := s.followResult(s.open(t.Context(), mcp.MethodTasksResult, `{"taskId":"`+id+`"}`), id)
	wantRouteResult(t, final, id)
	if len(methods) == 0 || methods[0] != mcp.MethodElicitationCreate {
		t.Errorf("the tasks/result stream carried %v, want the held question first", methods)
	}
	// Progress 1 came before any stream was open: dropped, not held.
	if len(progress) != 1 || progress[0] != 2 {
		t.Errorf("progress on the tasks/result stream %v, want [2]", progress)
	}
}

// TestLegacyTaskRouteStdio: over stdio, the one stream, the task's
// question and progress carry related-task, the answer reaches the task,
// and tasks/result answers its result.
func TestLegacyTaskRouteStdio(t *testing.T) {
	release := make(chan struct{})
	close(release)
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- stdio.Serve(context.Background(), routeEdge(release), inR, outW, stdio.Options{})
		outW.Close()
	}()
	defer func() { inW.Close(); <-done }()
	lines := make(chan *jsonrpc.Message, 64)
	go func() {
		sc := bufio.NewScanner(outR)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			var m jsonrpc.Message
			if json.Unmarshal(sc.Bytes(), &m) == nil {
				lines <- &m
			}
		}
		close(lines)
	}()
	send := func(s string) {
		if _, err := io.WriteString(inW, s+"\n"); err != nil {
			t.Fatal(err)
		}
	}
	next := func() *jsonrpc.Message {
		select {
		case m := <-lines:
			return m
		case <-time.After(10 * time.Second):
			t.Fatal("nothing from mcpx")
		}
		return nil
	}
	send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"elicitation":{}},"clientInfo":{"name":"t","version":"1"}}}`)
	if m := next(); m.Error != nil {
		t.Fatal(m.Error)
	}
	send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"route","arguments":{},"task":{},"_meta":{"progressToken":"tok"}}}`)
	var id string
	var final *jsonrpc.Message
	var progress []float64
	asked := 0
	for final == nil {
		m := next()
		switch {
		case m.IsResponse() && string(m.ID) == "2":
			var created struct{ Task struct{ TaskID string } }
			if json.Unmarshal(m.Result, &created) != nil || created.Task.TaskID == "" {
				t.Fatalf("tools/call with task: %s", m.Result)
			}
			id = created.Task.TaskID
			send(`{"jsonrpc":"2.0","id":3,"method":"tasks/result","params":{"taskId":"` + id + `"}}`)
		case m.IsResponse() && string(m.ID) == "3":
			final = m
		case m.IsResponse():
			t.Fatalf("unexpected response %s", m.ID)
		default:
			if id == "" {
				// The task may speak before its {task} answer is written:
				// its id is then read from the tag.
				var p struct {
					Meta map[string]json.RawMessage `json:"_meta"`
				}
				_ = json.Unmarshal(m.Params, &p)
				if p.Meta[mcp.MetaKeyRelatedTask] == nil && m.Method != mcp.MethodNotificationsTasksStatus {
					t.Fatalf("untagged %s before the task's id: %s", m.Method, m.Params)
				}
				var rt struct{ TaskID string }
				_ = json.Unmarshal(p.Meta[mcp.MetaKeyRelatedTask], &rt)
				id = rt.TaskID
			}
			checkLegacyFromServer(t, m, id)
			switch m.Method {
			case mcp.MethodElicitationCreate:
				asked++
				send(`{"jsonrpc":"2.0","id":` + string(m.ID) + `,"result":{"action":"accept","content":{"ok":true}}}`)
			case mcp.MethodNotificationsProgress:
				var p struct{ Progress float64 }
				_ = json.Unmarshal(m.Params, &p)
				progress = append(progress, p.Progress)
			}
		}
	}
	wantRouteResult(t, final, id)
	if asked != 1 || len(progress) != 2 || progress[0] != 1 || progress[1] != 2 {
		t.Errorf("asked %d times, progress %v; want one question and [1 2]", asked, progress)
	}
}

// TestLegacyTaskProgressStopsAtEnd: progress the call behind a 2025-11-25
// task reports after the task has ended is not sent (the progress page:
// progress for tasks MUST stop at a terminal status), while what it
// reported before reaches the session stream, tagged.
func TestLegacyTaskProgressStopsAtEnd(t *testing.T) {
	release := make(chan struct{})
	close(release)
	e := routeEdge(release)
	sess := new(edge.Session)
	do := func(method, params string) edge.Reply {
		return e.Handle(context.Background(), sess, edge.In{Msg: &jsonrpc.Message{JSONRPC: "2.0", ID: json.RawMessage(`1`), Method: method, Params: json.RawMessage(params)}, Default: edge.Headerless}, nil)
	}
	if r := do("initialize", `{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}`); r.Msg.Error != nil {
		t.Fatal(r.Msg.Error)
	}
	got := make(chan *jsonrpc.Message, 16)
	defer e.Attach(sess, func(m *jsonrpc.Message) { got <- m })()
	r := do(mcp.MethodToolsCall, `{"name":"late","arguments":{},"task":{},"_meta":{"progressToken":"tok"}}`)
	var created struct{ Task struct{ TaskID string } }
	if r.Msg.Error != nil || json.Unmarshal(r.Msg.Result, &created) != nil || created.Task.TaskID == "" {
		t.Fatalf("tools/call with task: %+v", r.Msg)
	}
	var progress []string
	ended := false
	for timeout := time.After(time.Second); ; {
		select {
		case m := <-got:
			checkLegacyFromServer(t, m, created.Task.TaskID)
			switch m.Method {
			case mcp.MethodNotificationsProgress:
				if ended {
					t.Errorf("progress after the task ended: %s", m.Params)
				}
				progress = append(progress, string(m.Params))
			case mcp.MethodNotificationsTasksStatus:
				ended = ended || strings.Contains(string(m.Params), `"completed"`)
			}
			continue
		case <-timeout:
		}
		break
	}
	if !ended || len(progress) != 1 || !strings.Contains(progress[0], "in time") {
		t.Fatalf("ended %v, progress %q; want the one in time, then the end", ended, progress)
	}
}
