package gatewaytest

// Upstream tasks (issue 13, bridging): an upstream that answers tools/call
// with a task, of either flavour, is followed by mcpx inside the call, so
// that a client of any revision gets the plain result or error, its
// questions, its progress, and the upstream gets tasks/cancel when the
// client gives up.
//
// The upstream is hand-written (taskerState), a 2025-11-25 one (core
// tasks: the task field, {task}, blocking tasks/result, questions tagged
// related-task on its stream) or a 2026-07-28 one (the extension: a flat
// handle, tasks/get with the result inlined, inputRequests answered with
// tasks/update), over stdio (mode tasker:REV) and Streamable HTTP. Its
// tools:
//
//	slow     required  finishes after 150 ms, reporting progress first
//	fails    required  fails with the JSON-RPC error -32050 "the job failed"
//	broken   required  finishes with an isError result "it broke"
//	asks     required  asks the client's name mid-task, then greets it
//	forever  required  never finishes (until tasks/cancel)
//	opt      optional  a task only when asked for one (2025-11-25)
//	plain    none      answers at once; records a task field it should not get
//	wake     required  (2026-07-28) polls every 5 s, but says when it is done
//	nb       required  (2025-11-25) answers tasks/result before it is done
//	long     required  finishes after 2.5 s
//	steps    required  three steps 150 ms apart, then done: a statusMessage
//	                   "step N of 3" on tasks/get, and (2025-11-25) progress
//	                   N of 3 on the call's token (taskprogress_test.go)
//	pair     required  (2026-07-28) asks two names at once, then greets both
//	brief    required  never finishes, and is kept 400 ms (its ttl)
//
// Everything mcpx sends it is validated closed-world: the 2025-11-25
// schema for that flavour, and for the extension's methods the extension's
// schema (its params; their _meta as 2026-07-28 RequestParams, since the
// extension's schema lacks it: see the overlay).

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpx-dev/mcpx/runtime/config"
	"github.com/mcpx-dev/mcpx/runtime/gateway"
	"github.com/mcpx-dev/mcpx/runtime/host"
	"github.com/mcpx-dev/mcpx/testkit/closedworld"
	"github.com/mcpx-dev/mcpx/testkit/wiretest"
)

// taskerTools are the tasker's tools and their taskSupport ("" none).
var taskerTools = map[string]string{
	"slow": "required", "fails": "required", "broken": "required", "asks": "required",
	"forever": "required", "opt": "optional", "plain": "", "wake": "required", "nb": "required",
	"long": "required", "steps": "required", "pair": "required", "brief": "required",
}

// taskerState is the task-making upstream's logic. handle takes one
// message from mcpx and returns what answers it at once; what happens
// later (a task finishing, its question, progress) goes out through send,
// with route naming the request whose stream it belongs on (a blocked
// tasks/result; "" for none).
type taskerState struct {
	rev  string
	send func(m askerMsg, route string)

	mu    sync.Mutex
	tasks map[string]*upTask
	seq   int
	log   []string // "call TOOL task=…", "cancel ID", "update ID KEYS", "cancelled REQ"
}

type upTask struct {
	id, tool string
	status   string
	token    json.RawMessage
	result   any // completed: the tool result
	errObj   any // failed: the JSON-RPC error
	poll     int
	waiters  []string // 2025-11-25: blocked tasks/result ids
	question askerMsg // 2025-11-25: to send once a tasks/result waits
	qid      string
	asking   map[string]any    // 2026-07-28: the outstanding inputRequests
	message  string            // its statusMessage, when it has one
	names    map[string]string // 2026-07-28: the names answered, by key
	ttl      int               // ms; 0: 60000
}

const (
	taskerPoll  = 50 // ms
	askNameText = "Your name?"
)

func newTaskerState(rev string) *taskerState {
	return &taskerState{rev: rev, tasks: map[string]*upTask{}, send: func(askerMsg, string) {}}
}

func (s *taskerState) modern() bool { return s.rev == "2026-07-28" }

func (s *taskerState) note(f string, args ...any) { s.log = append(s.log, fmt.Sprintf(f, args...)) }

// logged is what the upstream has seen so far.
func (s *taskerState) logged() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.log)
}

// object is t as a task object of the upstream's flavour.
func (s *taskerState) object(t *upTask) map[string]any {
	o := map[string]any{"taskId": t.id, "status": t.status, "createdAt": "2026-01-01T00:00:00Z", "lastUpdatedAt": "2026-01-01T00:00:01Z"}
	if t.message != "" {
		o["statusMessage"] = t.message
	}
	ttl := t.ttl
	if ttl == 0 {
		ttl = 60000
	}
	if s.modern() {
		o["ttlMs"], o["pollIntervalMs"] = ttl, t.poll
		switch t.status {
		case "completed":
			o["result"] = t.result
		case "failed":
			o["error"] = t.errObj
		case "input_required":
			o["inputRequests"] = t.asking
		}
		return o
	}
	o["ttl"], o["pollInterval"] = ttl, t.poll
	return o
}

func toolText(s string, isError bool) map[string]any {
	r := map[string]any{"content": []any{map[string]any{"type": "text", "text": s}}}
	if isError {
		r["isError"] = true
	}
	return r
}

// later runs f on the state after d.
func (s *taskerState) later(d time.Duration, f func()) {
	time.AfterFunc(d, func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		f()
	})
}

// finish ends t with a result or an error, answering the tasks/result
// requests that wait for it. s.mu is held.
func (s *taskerState) finish(t *upTask, result, errObj any) {
	if t.status == "cancelled" {
		return
	}
	t.status, t.result, t.errObj = "completed", result, errObj
	if errObj != nil || t.tool == "broken" && !s.modern() {
		t.status = "failed" // 2025-11-25: an isError result is a failed task too
	}
	for _, w := range t.waiters {
		s.send(s.payload(t, json.RawMessage(w)), w)
	}
	t.waiters = nil
	if t.tool == "wake" {
		s.send(askerMsg{"jsonrpc": "2.0", "method": "notifications/tasks/status", "params": s.object(t)}, "")
	}
}

// payload is the answer to tasks/result id for the finished t.
func (s *taskerState) payload(t *upTask, id json.RawMessage) askerMsg {
	if t.errObj != nil {
		return askerMsg{"jsonrpc": "2.0", "id": id, "error": t.errObj}
	}
	r := map[string]any{"_meta": map[string]any{"io.modelcontextprotocol/related-task": map[string]any{"taskId": t.id}}}
	for k, v := range t.result.(map[string]any) {
		r[k] = v
	}
	return askerMsg{"jsonrpc": "2.0", "id": id, "result": r}
}

func (s *taskerState) route(t *upTask) string {
	if len(t.waiters) == 0 {
		return ""
	}
	return t.waiters[len(t.waiters)-1]
}

// start runs t's tool.
func (s *taskerState) start(t *upTask) {
	switch t.tool {
	case "slow", "nb":
		s.later(150*time.Millisecond, func() {
			if t.token != nil {
				s.send(askerMsg{"jsonrpc": "2.0", "method": "notifications/progress", "params": map[string]any{"progressToken": t.token, "progress": 1, "total": 2, "message": "half way"}}, s.route(t))
			}
			s.finish(t, toolText(t.tool+" done", false), nil)
		})
	case "steps":
		for i := 1; i <= 3; i++ {
			s.later(time.Duration(i)*150*time.Millisecond, func() {
				t.message = fmt.Sprintf("step %d of 3", i)
				if !s.modern() && t.token != nil {
					s.send(askerMsg{"jsonrpc": "2.0", "method": "notifications/progress", "params": map[string]any{"progressToken": t.token, "progress": i, "total": 3, "message": t.message}}, s.route(t))
				}
			})
		}
		s.later(600*time.Millisecond, func() { s.finish(t, toolText("steps done", false), nil) })
	case "long":
		s.later(2500*time.Millisecond, func() { s.finish(t, toolText("long done", false), nil) })
	case "fails":
		s.later(50*time.Millisecond, func() { s.finish(t, nil, map[string]any{"code": -32050, "message": "the job failed"}) })
	case "broken":
		s.later(50*time.Millisecond, func() { s.finish(t, toolText("it broke", true), nil) })
	case "opt":
		s.later(50*time.Millisecond, func() { s.finish(t, toolText("opt as a task", false), nil) })
	case "wake":
		t.poll = 5000
		s.later(100*time.Millisecond, func() { s.finish(t, toolText("woken", false), nil) })
	case "brief": // tasks_limit_test.go
	case "pair": // tasks_rounds_test.go
		s.later(50*time.Millisecond, func() {
			t.status, t.asking = "input_required", pairQuestions()
		})
	case "asks":
		q := map[string]any{"message": askNameText, "requestedSchema": map[string]any{"type": "object", "properties": map[string]any{"name": map[string]any{"type": "string"}}}}
		s.later(50*time.Millisecond, func() {
			t.status = "input_required"
			if s.modern() {
				t.asking = map[string]any{"name_q": map[string]any{"method": "elicitation/create", "params": q}}
				return
			}
			s.seq++
			t.qid = fmt.Sprintf(`"up-elicitation/create-%d"`, s.seq)
			q["_meta"] = map[string]any{"io.modelcontextprotocol/related-task": map[string]any{"taskId": t.id}}
			t.question = askerMsg{"jsonrpc": "2.0", "id": json.RawMessage(t.qid), "method": "elicitation/create", "params": q}
			if r := s.route(t); r != "" {
				s.send(t.question, r)
				t.question = nil
			}
		})
	}
}

// elicitedName is the name in an elicitation answer, "" when none was given.
func elicitedName(raw json.RawMessage) string {
	var r struct {
		Action  string            `json:"action"`
		Content map[string]string `json:"content"`
	}
	if json.Unmarshal(raw, &r) != nil || r.Action != "accept" {
		return ""
	}
	return r.Content["name"]
}

func (s *taskerState) handle(line []byte) []askerMsg {
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params struct {
			Name           string                     `json:"name"`
			TaskID         string                     `json:"taskId"`
			Task           json.RawMessage            `json:"task"`
			RequestID      json.RawMessage            `json:"requestId"`
			InputResponses map[string]json.RawMessage `json:"inputResponses"`
			Meta           struct {
				ProgressToken json.RawMessage `json:"progressToken"`
				Caps          struct {
					Extensions map[string]json.RawMessage `json:"extensions"`
				} `json:"io.modelcontextprotocol/clientCapabilities"`
			} `json:"_meta"`
		} `json:"params"`
		Result json.RawMessage `json:"result"`
	}
	if json.Unmarshal(line, &m) != nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	reply := func(result any) []askerMsg { return []askerMsg{{"jsonrpc": "2.0", "id": m.ID, "result": result}} }
	refuse := func(code int, msg string) []askerMsg {
		return []askerMsg{{"jsonrpc": "2.0", "id": m.ID, "error": map[string]any{"code": code, "message": msg}}}
	}
	complete := func(r map[string]any) map[string]any {
		if s.modern() {
			r["resultType"] = "complete"
		}
		return r
	}
	t := s.tasks[m.Params.TaskID]
	_, declared := m.Params.Meta.Caps.Extensions["io.modelcontextprotocol/tasks"]
	switch {
	case m.Method == "" && m.ID != nil: // mcpx answers a question
		for _, t := range s.tasks {
			if t.qid == string(m.ID) {
				s.note("answer %s %s", t.id, m.Result)
				t.status = "working"
				s.finish(t, toolText("Hello, "+elicitedName(m.Result)+"!", false), nil)
			}
		}
		return nil
	case m.Method == "notifications/cancelled":
		s.note("cancelled %s", m.Params.RequestID)
		return nil
	case m.ID == nil:
		return nil
	case m.Method == "server/discover" && s.modern():
		return reply(json.RawMessage(discoverResult("tasker", `{"tools":{},"extensions":{"io.modelcontextprotocol/tasks":{}}}`)))
	case m.Method == "server/discover":
		return refuse(-32601, "no server/discover here")
	case m.Method == "initialize":
		return reply(map[string]any{"protocolVersion": s.rev, "serverInfo": map[string]any{"name": "tasker", "version": "1"},
			"capabilities": map[string]any{"tools": map[string]any{}, "tasks": map[string]any{"list": map[string]any{}, "cancel": map[string]any{}, "requests": map[string]any{"tools": map[string]any{"call": map[string]any{}}}}}})
	case m.Method == "tools/list":
		var tools []any
		for n, support := range taskerTools {
			tool := map[string]any{"name": n, "inputSchema": map[string]any{"type": "object"}}
			if support != "" {
				tool["execution"] = map[string]any{"taskSupport": support}
			}
			tools = append(tools, tool)
		}
		r := map[string]any{"tools": tools}
		if s.modern() {
			r["ttlMs"], r["cacheScope"] = 0, "private"
		}
		return reply(complete(r))
	case m.Method == "tools/call":
		support, known := taskerTools[m.Params.Name]
		if !known {
			return refuse(-32602, "no tool "+m.Params.Name)
		}
		s.note("call %s task=%s extension=%v", m.Params.Name, m.Params.Task, declared)
		asTask := support == "required" || support == "optional" && m.Params.Task != nil
		if s.modern() {
			asTask = support != "" && declared
			if support == "required" && !declared {
				return []askerMsg{{"jsonrpc": "2.0", "id": m.ID, "error": map[string]any{"code": -32021, "message": "this tool needs the tasks extension",
					"data": map[string]any{"requiredCapabilities": map[string]any{"extensions": map[string]any{"io.modelcontextprotocol/tasks": map[string]any{}}}}}}}
			}
		}
		if !asTask {
			if !s.modern() && support == "required" {
				return refuse(-32601, m.Params.Name+" must be called as a task")
			}
			return reply(complete(toolText(m.Params.Name+" plain", false)))
		}
		s.seq++
		t := &upTask{id: fmt.Sprintf("up-task-%d", s.seq), tool: m.Params.Name, status: "working", token: m.Params.Meta.ProgressToken, poll: taskerPoll}
		if t.tool == "brief" {
			t.ttl = 400
		}
		s.tasks[t.id] = t
		s.start(t)
		if s.modern() {
			o := s.object(t)
			o["resultType"] = "task"
			return reply(o)
		}
		return reply(map[string]any{"task": s.object(t)})
	case strings.HasPrefix(m.Method, "tasks/") && s.modern() && !declared:
		return refuse(-32021, m.Method+" needs the tasks extension")
	case strings.HasPrefix(m.Method, "tasks/") && t == nil:
		return refuse(-32602, "no task "+m.Params.TaskID)
	case m.Method == "tasks/get":
		return reply(complete(s.object(t)))
	case m.Method == "tasks/result" && !s.modern():
		switch {
		case t.status == "completed" || t.status == "failed":
			return []askerMsg{s.payload(t, m.ID)}
		case t.tool == "nb":
			return refuse(-32602, "task "+t.id+" is not finished")
		}
		t.waiters = append(t.waiters, string(m.ID))
		if t.question != nil {
			s.send(t.question, string(m.ID))
			t.question = nil
		}
		return nil
	case m.Method == "tasks/update" && s.modern():
		var keys []string
		for k, v := range m.Params.InputResponses {
			keys = append(keys, k)
			if _, ok := t.asking[k]; ok {
				delete(t.asking, k)
				if t.names == nil {
					t.names = map[string]string{}
				}
				t.names[k] = elicitedName(v)
			}
		}
		// Done once every question is answered (a partial update leaves
		// the others outstanding).
		if t.status == "input_required" && len(t.asking) == 0 && len(t.names) > 0 {
			t.status = "working"
			greeting := "Hello, " + t.names["name_q"] + "!"
			if t.tool == "pair" {
				greeting = "Hello, " + t.names["first_q"] + " and " + t.names["second_q"] + "!"
			}
			s.finish(t, toolText(greeting, false), nil)
		}
		slices.Sort(keys)
		s.note("update %s %s", t.id, strings.Join(keys, ","))
		return reply(complete(map[string]any{}))
	case m.Method == "tasks/cancel":
		s.note("cancel %s", t.id)
		if t.status != "completed" && t.status != "failed" {
			t.status = "cancelled"
		}
		if s.modern() {
			return reply(complete(map[string]any{}))
		}
		return reply(s.object(t))
	}
	return refuse(-32601, "no "+m.Method+" here")
}

// serveTasker is the tasker on stdio (mode tasker:REV).
func serveTasker(rev string) int {
	s := newTaskerState(rev)
	var mu sync.Mutex
	out := bufio.NewWriter(os.Stdout)
	write := func(m askerMsg) {
		b, _ := json.Marshal(m)
		mu.Lock()
		defer mu.Unlock()
		out.Write(append(b, '\n'))
		out.Flush()
	}
	// What happens later is written in the order it happened (progress
	// before the answer), by one goroutine: the reader never waits on it.
	later := make(chan askerMsg, 64)
	go func() {
		for m := range later {
			write(m)
		}
	}()
	s.send = func(m askerMsg, _ string) { later <- m }
	sc := bufio.NewScanner(recordedStdin(nil))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		for _, m := range s.handle(sc.Bytes()) {
			write(m)
		}
	}
	return 0
}

// taskerHTTP is the tasker over Streamable HTTP: tasks/result is answered
// with an SSE stream, which carries the task's questions and progress and
// then its answer; every other request with JSON. It returns the endpoint,
// what mcpx POSTed (with the Mcp-Name header of each), and the state.
func taskerHTTP(t *testing.T, rev string) (string, func() []taskerPost, *taskerState) {
	s := newTaskerState(rev)
	var mu sync.Mutex
	var posts []taskerPost
	streams := map[string]chan askerMsg{}
	s.send = func(m askerMsg, route string) {
		mu.Lock()
		ch := streams[route]
		mu.Unlock()
		if ch != nil {
			select {
			case ch <- m:
			default:
			}
		}
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			w.WriteHeader(http.StatusMethodNotAllowed)
			return
		}
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		posts = append(posts, taskerPost{body: string(body), name: r.Header.Get("Mcp-Name"), method: r.Header.Get("Mcp-Method")})
		mu.Unlock()
		var head struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		json.Unmarshal(body, &head)
		if head.Method == "" || head.ID == nil {
			s.handle(body)
			w.WriteHeader(http.StatusAccepted)
			return
		}
		if head.Method != "tasks/result" {
			w.Header().Set("Content-Type", "application/json")
			b, _ := json.Marshal(s.handle(body)[0])
			w.Write(b)
			return
		}
		ch := make(chan askerMsg, 16)
		mu.Lock()
		streams[string(head.ID)] = ch
		mu.Unlock()
		defer func() {
			mu.Lock()
			delete(streams, string(head.ID))
			mu.Unlock()
		}()
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		w.(http.Flusher).Flush()
		for _, m := range s.handle(body) {
			ch <- m
		}
		for {
			select {
			case m := <-ch:
				b, _ := json.Marshal(m)
				fmt.Fprintf(w, "event: message\ndata: %s\n\n", b)
				w.(http.Flusher).Flush()
				if m["method"] == nil {
					return // the answer
				}
			case <-r.Context().Done():
				return
			case <-time.After(60 * time.Second):
				return
			}
		}
	}))
	t.Cleanup(srv.Close)
	return srv.URL, func() []taskerPost {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(posts)
	}, s
}

// taskerPost is one message mcpx POSTed the HTTP tasker.
type taskerPost struct{ body, name, method string }

// taskerUp is the tasker a test's gateway fronts as "up".
type taskerUp struct {
	rev, transport string
	record         string              // stdio: where its stdin is recorded
	posts          func() []taskerPost // http
	state          *taskerState        // http: the state itself
}

// sent is every message mcpx sent the tasker so far.
func (u *taskerUp) sent(t *testing.T) []string {
	if u.posts == nil {
		return readRecords(t, u.record)
	}
	var out []string
	for _, p := range u.posts() {
		out = append(out, p.body)
	}
	return out
}

// seen is what mcpx's messages made the tasker log: over HTTP its own
// log; over stdio the same facts read back from what mcpx sent it.
func (u *taskerUp) seen(t *testing.T) []string {
	if u.state != nil {
		return u.state.logged()
	}
	s := newTaskerState(u.rev)
	for _, line := range u.sent(t) {
		s.handle([]byte(line))
	}
	return s.logged()
}

// waitSeen waits up to 5 s for the tasker to have seen a line starting
// with prefix, and reports whether it did.
func (u *taskerUp) waitSeen(t *testing.T, prefix string) bool {
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		for _, l := range u.seen(t) {
			if strings.HasPrefix(l, prefix) {
				return true
			}
		}
	}
	return false
}

// taskerGateway builds, as `mcpx serve` does, a gateway fronting a tasker
// of rev over transport as "up"; the test's end validates what mcpx sent
// it closed-world.
func taskerGateway(t *testing.T, transport, rev string) (*gateway.Gateway, *taskerUp) {
	t.Helper()
	return taskerGatewayTimeout(t, transport, rev, "30s")
}

// taskerGatewayTimeout is taskerGateway with the upstream's call timeout.
func taskerGatewayTimeout(t *testing.T, transport, rev, timeout string) (*gateway.Gateway, *taskerUp) {
	t.Helper()
	return taskerGatewayWith(t, transport, rev, map[string]any{"timeout": timeout})
}

// taskerGatewayWith is taskerGateway with the upstream's mcpx block.
func taskerGatewayWith(t *testing.T, transport, rev string, mcpx map[string]any) (*gateway.Gateway, *taskerUp) {
	t.Helper()
	u := &taskerUp{rev: rev, transport: transport}
	var entry map[string]any
	if transport == "http" {
		url, posts, state := taskerHTTP(t, rev)
		u.posts, u.state = posts, state
		entry = map[string]any{"url": url, "mcpx": mcpx}
	} else {
		u.record = filepath.Join(t.TempDir(), "up.in")
		entry = map[string]any{"command": os.Args[0], "mcpx": mcpx,
			"env": map[string]string{envUpstream: "tasker:" + rev, envRecord: u.record, "GORACE": strings.TrimSpace(os.Getenv("GORACE") + " atexit_sleep_ms=0")}}
	}
	data, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{"up": entry}})
	cfg, err := config.Parse("tasks.json", data, func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatalf("config.Parse: %v\n%s", err, data)
	}
	logs, log := logBuffer()
	gw, err := host.Gateway(context.Background(), cfg, serverInfo, log)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		gw.Close()
		checkTaskWire(t, u)
		checkAnswersToUpstream(t, askUpstream{ns: "up", rev: rev, http: false}, u.sent(t))
		wiretest.CheckLog(t, "mcpx (gateway)", logs)
	})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := gw.Ready(ctx); err != nil {
		t.Fatalf("gateway Ready: %v\n%s", err, logs.String())
	}
	return gw, u
}

// checkTaskWire validates closed-world every message mcpx sent u: a
// 2026-07-28 tasks/* request against the extension's schema (its _meta as
// RequestParams), everything else as checkToUpstream does; no request id
// is used twice; over HTTP, Mcp-Name on a 2026-07-28 tasks/* request is
// its taskId.
func checkTaskWire(t *testing.T, u *taskerUp) {
	t.Helper()
	v, err := closedworld.Default()
	if err != nil {
		t.Fatalf("closed-world validator: %v (run `make schemas`)", err)
	}
	recs := u.sent(t)
	var names []string
	if u.posts != nil {
		for _, p := range u.posts() {
			names = append(names, p.name)
		}
	}
	ids := map[string]bool{}
	for i, line := range recs {
		var f wiretest.Frame
		if err := json.Unmarshal([]byte(line), &f); err != nil {
			t.Errorf("mcpx sent the upstream a message that is not JSON: %s", line)
			continue
		}
		if f.IsRequest() {
			if ids[wiretest.IDKey(f.ID)] {
				t.Errorf("mcpx used request id %s twice: %s", f.ID, line)
			}
			ids[wiretest.IDKey(f.ID)] = true
		}
		ext := map[string]string{"tasks/get": "GetTaskRequest", "tasks/update": "UpdateTaskRequest", "tasks/cancel": "CancelTaskRequest"}[f.Method]
		if u.rev != "2026-07-28" || ext == "" {
			if rev, err := checkToUpstream(v, u.rev, []byte(line)); err != nil {
				t.Errorf("mcpx sent the upstream (checked at %s):\n%s\n%v", rev, line, err)
			}
			continue
		}
		var params map[string]json.RawMessage
		if err := json.Unmarshal(f.Params, &params); err != nil {
			t.Errorf("%s without params: %s", f.Method, line)
			continue
		}
		meta, _ := json.Marshal(map[string]json.RawMessage{"_meta": params["_meta"]})
		delete(params, "_meta")
		framed, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": f.ID, "method": f.Method, "params": params})
		if err := v.Validate("2026-07-28", ext, framed); err != nil {
			t.Errorf("mcpx sent the upstream %s, not valid by the tasks extension: %v", line, err)
		}
		if err := v.Validate("2026-07-28", "RequestParams", meta); err != nil {
			t.Errorf("mcpx sent the upstream %s, whose _meta is not valid: %v", line, err)
		}
		var p struct {
			TaskID string `json:"taskId"`
		}
		json.Unmarshal(f.Params, &p)
		if names != nil && names[i] != p.TaskID {
			t.Errorf("%s for task %q carried Mcp-Name %q, want the taskId", f.Method, p.TaskID, names[i])
		}
	}
	t.Logf("upstream (%s, %s): %d messages from mcpx closed-world validated", u.rev, u.transport, len(recs))
}

// taskClient is one client of a test's gateway calling the tasker's
// tools, and what it got, said in one line: the text, "isError: TEXT",
// or "error CODE: MESSAGE".
type taskClient struct {
	rev  string
	call func(tool string) string
}

// legacyTaskClient is an asking legacy client (elicitation declared) of
// rev over transport tr.
func legacyTaskClient(t *testing.T, gw *gateway.Gateway, tr, rev string) taskClient {
	c := b3Client(t, gw, tr, rev, `{"elicitation":{}}`)
	return taskClient{rev: rev, call: func(tool string) string {
		return oneLine(b3Call(c, tool).final)
	}}
}

// modernTaskClient is the 2026-07-28 client of mrtr_test.go (elicitation
// form declared); a question comes back input_required and is answered
// "Ada" on the retry.
func modernTaskClient(t *testing.T, gw *gateway.Gateway, tr string) taskClient {
	c := newModernClient(t, gw, tr)
	return taskClient{rev: "2026-07-28", call: func(tool string) string {
		a := c.call(tool, "", "")
		for round := 0; a.Result != nil && a.Result.ResultType == "input_required" && round < 3; round++ {
			st := ""
			if a.Result.RequestState != nil {
				st = *a.Result.RequestState
			}
			var keys []string
			for k := range a.Result.InputRequests {
				keys = append(keys, k)
			}
			if len(keys) != 1 {
				return "asked " + a.raw
			}
			a = c.call(tool, st, `{"`+keys[0]+`":{"action":"accept","content":{"name":"Ada"}}}`)
		}
		var f wiretest.Frame
		json.Unmarshal([]byte(a.raw), &f)
		return oneLine(f)
	}}
}

// oneLine is a final response in one line (see taskClient).
func oneLine(f wiretest.Frame) string {
	if f.Error != nil {
		var e struct {
			Code    int64  `json:"code"`
			Message string `json:"message"`
		}
		json.Unmarshal(f.Error, &e)
		return fmt.Sprintf("error %d: %s", e.Code, e.Message)
	}
	var r struct {
		ResultType string                  `json:"resultType"`
		Content    []struct{ Text string } `json:"content"`
		IsError    bool                    `json:"isError"`
		Task       json.RawMessage         `json:"task"`
	}
	if json.Unmarshal(f.Result, &r) != nil || len(r.Content) != 1 || r.Task != nil || r.ResultType != "" && r.ResultType != "complete" {
		return "not a tool result: " + string(f.Result)
	}
	if r.IsError {
		return "isError: " + r.Content[0].Text
	}
	return r.Content[0].Text
}

// taskMatrix runs f for a tasker of each flavour over each transport,
// with a 2025-06-18, a 2025-11-25 and a 2026-07-28 client over the same
// transport.
func taskMatrix(t *testing.T, f func(t *testing.T, u *taskerUp, clients []taskClient)) {
	for _, rev := range []string{"2025-11-25", "2026-07-28"} {
		for _, tr := range []string{"stdio", "http"} {
			t.Run(rev+" upstream over "+tr, func(t *testing.T) {
				gw, u := taskerGateway(t, tr, rev)
				f(t, u, []taskClient{
					legacyTaskClient(t, gw, tr, "2025-06-18"),
					legacyTaskClient(t, gw, tr, "2025-11-25"),
					modernTaskClient(t, gw, tr),
				})
			})
		}
	}
}

// TestUpstreamTaskResult: a tool the upstream runs as a task (required,
// so a 2025-11-25 upstream gets the task field, and refuses the call
// without it) answers every client with its result, as a plain call; a
// task that fails answers with its JSON-RPC error, and one whose result
// isError with that result, never a task handle or an empty result.
func TestUpstreamTaskResult(t *testing.T) {
	taskMatrix(t, func(t *testing.T, u *taskerUp, clients []taskClient) {
		for _, c := range clients {
			if c.rev == "2026-07-28" {
				// A 2026-07-28 client that did not declare the extension is
				// refused a tool that runs only as a task, before anything
				// runs, as the extension says (-32021): by mcpx when the
				// tool is listed "required" (a 2025-11-25 upstream's
				// execution reaches the hub, and so does a 2026-07-28
				// upstream's, read by edge/uptoolexec.go), else by the
				// upstream, which is not told the extension for such a
				// client.
				for _, tool := range []string{"up__slow", "up__broken", "up__fails"} {
					if got := c.call(tool); !strings.HasPrefix(got, "error -32021") {
						t.Errorf("%s client: %s answered %q, want -32021", c.rev, tool, got)
					}
				}
				if got := c.call("up__plain"); got != "plain plain" {
					t.Errorf("%s client: up__plain answered %q", c.rev, got)
				}
				continue
			}
			for tool, want := range map[string]string{
				"up__slow":   "slow done",
				"up__broken": "isError: it broke",
				"up__plain":  "plain plain",
			} {
				if got := c.call(tool); got != want {
					t.Errorf("%s client: %s answered %q, want %q", c.rev, tool, got, want)
				}
			}
			got := c.call("up__fails")
			if !strings.HasPrefix(got, "error ") || !strings.Contains(got, "the job failed") {
				t.Errorf("%s client: up__fails answered %q, want the task's error (the job failed)", c.rev, got)
			}
		}
		undeclared := 0
		for _, l := range u.seen(t) {
			if strings.HasPrefix(l, "call plain task={") {
				t.Errorf("a tool that declares no task support was called with the task field: %s", l)
			}
			if u.rev == "2025-11-25" && strings.HasPrefix(l, "call slow task= ") {
				t.Errorf("a required tool was called without the task field: %s", l)
			}
			if u.rev == "2026-07-28" && strings.HasPrefix(l, "call ") && !strings.HasSuffix(l, "extension=true") {
				undeclared++
			}
		}
		// Only the 2026-07-28 client's call of up__plain (it declared no
		// extension) goes without it: mcpx refused its three calls of
		// required tools itself; the legacy clients' carry it.
		if u.rev == "2026-07-28" && undeclared != 1 {
			t.Errorf("%d tools/call without the tasks extension, want the 2026-07-28 client's 1 (up__plain)", undeclared)
		}
	})
}

// TestUpstreamTaskAsks: a task that asks the client's name mid-task (a
// 2025-11-25 upstream: an elicitation tagged related-task, on the
// tasks/result stream or stdio; 2026-07-28: inputRequests on tasks/get)
// puts the question to each client in its own way (a request, or an
// input_required round), and the answer reaches the task, whose result
// answers the call.
func TestUpstreamTaskAsks(t *testing.T) {
	taskMatrix(t, func(t *testing.T, u *taskerUp, clients []taskClient) {
		for _, c := range clients {
			if c.rev == "2026-07-28" {
				// Refused without the extension (-32021), as
				// TestUpstreamTaskResult says.
				if got := c.call("up__asks"); !strings.HasPrefix(got, "error -32021") {
					t.Errorf("%s client: up__asks answered %q, want -32021", c.rev, got)
				}
				continue
			}
			if got := c.call("up__asks"); got != "Hello, Ada!" {
				t.Errorf("%s client: up__asks answered %q, want the greeting of the name it gave", c.rev, got)
			}
		}
		if u.rev == "2026-07-28" {
			n := 0
			for _, l := range u.seen(t) {
				if strings.HasPrefix(l, "update ") {
					n++
					if !strings.HasSuffix(l, " name_q") {
						t.Errorf("tasks/update answered other keys than the one asked: %s", l)
					}
				}
			}
			if n != len(clients)-1 { // the 2026-07-28 client is refused (-32021)
				t.Errorf("the upstream got %d tasks/update, want one per legacy client (%d)", n, len(clients)-1)
			}
		}
	})
}

// TestUpstreamTaskQuestionUntagged: the question a 2025-11-25 task asks
// reaches the client without the upstream's related-task (the client
// never hears of the upstream's task).
func TestUpstreamTaskQuestionUntagged(t *testing.T) {
	for _, tr := range []string{"stdio", "http"} {
		t.Run(tr, func(t *testing.T) {
			gw, _ := taskerGateway(t, tr, "2025-11-25")
			c := b3Client(t, gw, tr, "2025-11-25", `{"elicitation":{}}`)
			a := b3Call(c, "up__asks")
			if got := oneLine(a.final); got != "Hello, Ada!" {
				t.Fatalf("up__asks answered %q", got)
			}
			if !strings.Contains(a.wire, askNameText) || strings.Contains(a.wire, "up-task-") {
				t.Errorf("the client got (want the question, without the upstream's task id):\n%s", a.wire)
			}
		})
	}
}

// TestUpstreamTaskCancelled: a client that cancels its call while the
// upstream's task runs has the upstream get tasks/cancel for that task.
func TestUpstreamTaskCancelled(t *testing.T) {
	for _, rev := range []string{"2025-11-25", "2026-07-28"} {
		for _, tr := range []string{"stdio", "http"} {
			t.Run(rev+" upstream over "+tr, func(t *testing.T) {
				gw, u := taskerGateway(t, tr, rev)
				c := b3Client(t, gw, tr, "2025-11-25", `{}`)
				// Over stdio the client sends notifications/cancelled;
				// over HTTP it gives up on the request.
				var cancel func()
				if tr == "stdio" {
					s := b3Start(t, c, "up__forever")
					cancel = s.cancel
				} else {
					ctx, stop := context.WithCancel(t.Context())
					defer stop()
					cancel = stop
					go func() {
						resp, err := postJSON(ctx, c.hc, c.endpoint, map[string]string{"Mcp-Session-Id": c.sid, "MCP-Protocol-Version": c.rev},
							`{"jsonrpc":"2.0","id":99,"method":"tools/call","params":{"name":"up__forever","arguments":{}}}`)
						if err == nil {
							io.Copy(io.Discard, resp.Body)
							resp.Body.Close()
						}
					}()
				}
				if !u.waitSeen(t, "call forever") {
					t.Fatal("the upstream never got the call")
				}
				time.Sleep(100 * time.Millisecond) // being followed
				cancel()
				if !u.waitSeen(t, "cancel up-task-") {
					t.Errorf("the upstream got no tasks/cancel after the client cancelled; it saw %q", u.seen(t))
				}
			})
		}
	}
}

// TestUpstreamTaskRequiredCallable: a 2025-11-25 upstream's tool listed
// taskSupport "required" is callable through mcpx (it is called with the
// task field), by a client that knows nothing of tasks.
func TestUpstreamTaskRequiredCallable(t *testing.T) {
	for _, tr := range []string{"stdio", "http"} {
		t.Run(tr, func(t *testing.T) {
			gw, u := taskerGateway(t, tr, "2025-11-25")
			c := legacyTaskClient(t, gw, tr, "2025-06-18")
			if got := c.call("up__slow"); got != "slow done" {
				t.Errorf("up__slow answered %q, want its result", got)
			}
			if !slices.Contains(u.seen(t), "call slow task={} extension=false") {
				t.Errorf("the upstream saw %q, want the call with an empty task field", u.seen(t))
			}
		})
	}
}

// TestUpstreamTaskOptional: an optional tool of a 2025-11-25 upstream is
// called as a plain call, whether or not the client asked for a task: a
// client that asks gets mcpx's own task (edge/tasks.go), the call behind
// it runs inline upstream, and the client's task field is never passed
// on.
func TestUpstreamTaskOptional(t *testing.T) {
	for _, tr := range []string{"stdio", "http"} {
		t.Run(tr, func(t *testing.T) {
			gw, u := taskerGateway(t, tr, "2025-11-25")
			c := b3Client(t, gw, tr, "2025-11-25", `{}`)
			if got := oneLine(b3Call(c, "up__opt").final); got != "opt plain" {
				t.Errorf("up__opt without a task field answered %q, want the plain call's result", got)
			}
			got := oneLine(b3Request(c, "tools/call", `{"name":"up__opt","arguments":{},"task":{"ttl":60000}}`).final)
			if !strings.Contains(got, `"task":{`) {
				t.Errorf("up__opt with a task field answered %q, want mcpx's task handle", got)
			}
			deadline := time.Now().Add(5 * time.Second)
			for len(u.seen(t)) < 2 && time.Now().Before(deadline) {
				time.Sleep(20 * time.Millisecond)
			}
			seen := u.seen(t)
			if len(seen) != 2 || seen[0] != "call opt task= extension=false" || seen[1] != "call opt task= extension=false" {
				t.Errorf("the upstream saw %q, want two plain calls", seen)
			}
		})
	}
}

// TestUpstreamTaskProgress: progress the upstream reports during its task
// (on the call's progressToken) reaches the client's own token.
func TestUpstreamTaskProgress(t *testing.T) {
	for _, tc := range []struct{ rev, tr string }{{"2025-11-25", "stdio"}, {"2025-11-25", "http"}, {"2026-07-28", "stdio"}} {
		t.Run(tc.rev+" upstream over "+tc.tr, func(t *testing.T) {
			gw, _ := taskerGateway(t, tc.tr, tc.rev)
			c := b3Client(t, gw, tc.tr, "2025-06-18", `{}`)
			a := b3Request(c, "tools/call", `{"name":"up__slow","arguments":{},"_meta":{"progressToken":"client-tok"}}`)
			if got := oneLine(a.final); got != "slow done" {
				t.Errorf("up__slow answered %q", got)
			}
			if !strings.Contains(a.wire, `"notifications/progress"`) || !strings.Contains(a.wire, `"progressToken":"client-tok"`) || !strings.Contains(a.wire, "half way") {
				t.Errorf("the client got no progress on its token:\n%s", a.wire)
			}
		})
	}
}

// TestUpstreamTaskStatusWakes: a notifications/tasks/status from the
// upstream wakes mcpx's poller (the task polls every 5 s, it is done after
// 100 ms), and is not forwarded to the client.
func TestUpstreamTaskStatusWakes(t *testing.T) {
	gw, _ := taskerGateway(t, "stdio", "2026-07-28")
	c := b3Client(t, gw, "stdio", "2025-11-25", `{}`)
	start := time.Now()
	a := b3Call(c, "up__wake")
	took := time.Since(start)
	if got := oneLine(a.final); got != "woken" {
		t.Errorf("up__wake answered %q", got)
	}
	if took > 3*time.Second {
		t.Errorf("up__wake took %s: the status notification did not wake the poller (poll interval 5 s)", took)
	}
	if strings.Contains(a.wire, "notifications/tasks/status") {
		t.Errorf("the upstream's status notification reached the client:\n%s", a.wire)
	}
}

// TestUpstreamTaskNonBlocking: a 2025-11-25 upstream that answers
// tasks/result with an error while its task runs is polled with tasks/get,
// and its result fetched once the task is over.
func TestUpstreamTaskNonBlocking(t *testing.T) {
	for _, tr := range []string{"stdio", "http"} {
		t.Run(tr, func(t *testing.T) {
			gw, u := taskerGateway(t, tr, "2025-11-25")
			c := legacyTaskClient(t, gw, tr, "2025-11-25")
			if got := c.call("up__nb"); got != "nb done" {
				t.Errorf("up__nb answered %q, want its result", got)
			}
			gets := 0
			for _, s := range u.sent(t) {
				if strings.Contains(s, `"method":"tasks/get"`) {
					gets++
				}
			}
			if gets == 0 {
				t.Error("the upstream was never polled with tasks/get")
			}
		})
	}
}

// TestUpstreamTaskQuestionPlacedByTask: over stdio, where nothing but its
// related-task says which call a question belongs to, the questions of
// two tasks running at once each reach the client whose call made the
// task (with two calls in flight, an untagged question is refused).
func TestUpstreamTaskQuestionPlacedByTask(t *testing.T) {
	gw, _ := taskerGateway(t, "stdio", "2025-11-25")
	var wg sync.WaitGroup
	got := make([]string, 2)
	asked := make([]int, 2)
	for i := range got {
		c := b3Client(t, gw, "stdio", "2025-11-25", `{"elicitation":{}}`)
		wg.Add(1)
		go func() {
			defer wg.Done()
			a := b3Call(c, "up__asks")
			got[i], asked[i] = oneLine(a.final), strings.Count(a.wire, askNameText)
		}()
	}
	wg.Wait()
	for i := range got {
		if got[i] != "Hello, Ada!" || asked[i] != 1 {
			t.Errorf("client %d: up__asks answered %q after %d questions, want the greeting after one", i, got[i], asked[i])
		}
	}
}

// TestUpstreamTaskOutlivesTheTimeout: a task runs past the upstream's
// call timeout (1 s; the task takes 2.5 s) and its result still
// answers the call: the timeout bounds each request about the task (a
// 2025-11-25 tasks/result that outlives it is a heartbeat: tasks/get, and
// tasks/result again), not the task.
func TestUpstreamTaskOutlivesTheTimeout(t *testing.T) {
	for _, rev := range []string{"2025-11-25", "2026-07-28"} {
		for _, tr := range []string{"stdio", "http"} {
			t.Run(rev+" upstream over "+tr, func(t *testing.T) {
				gw, u := taskerGatewayTimeout(t, tr, rev, "1s")
				c := legacyTaskClient(t, gw, tr, "2025-11-25")
				if got := c.call("up__long"); got != "long done" {
					t.Errorf("up__long answered %q, want its result", got)
				}
				if rev != "2025-11-25" {
					return
				}
				results := 0
				for _, s := range u.sent(t) {
					if strings.Contains(s, `"method":"tasks/result"`) {
						results++
					}
				}
				if results < 2 {
					t.Errorf("the upstream got %d tasks/result, want it asked again after the timeout", results)
				}
			})
		}
	}
}
