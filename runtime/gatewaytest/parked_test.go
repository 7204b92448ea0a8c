package gatewaytest

// Bridge 2 of issue 12 (legacy upstream, 2026-07-28 client): the
// upstream's question during a tools/call answers the client's request at
// once with input_required, while the upstream's call stays parked in
// mcpx; the client's retry brings the answer, which reaches the upstream
// under its own id, and gets the call's next question or its result.
//
// The upstream is hand-written (parkerState), over stdio (mode
// parker:REV) and Streamable HTTP (the question on the call's SSE
// stream); the client is the raw 2026-07-28 client of mrtr_test.go
// (modernClient: elicitation form and roots declared, not sampling).
// Everything mcpx sends either is closed-world validated.

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
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpx-dev/mcpx/runtime/config"
	"github.com/mcpx-dev/mcpx/runtime/gateway"
	"github.com/mcpx-dev/mcpx/runtime/host"
	"github.com/mcpx-dev/mcpx/testkit/wiretest"
	gosdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// parkerQuestions are what each tool asks, in order: one (a name), two (a
// name, then a color), sample (sampling), roots (roots), url (a URL-mode
// elicitation), stubborn (a name).
var parkerQuestions = map[string][]askerMsg{
	"one": {{"method": "elicitation/create", "params": map[string]any{"message": "Your name?", "requestedSchema": map[string]any{"type": "object", "properties": map[string]any{"name": map[string]any{"type": "string"}}}}}},
	"two": {
		{"method": "elicitation/create", "params": map[string]any{"message": "Your name?", "requestedSchema": map[string]any{"type": "object", "properties": map[string]any{"name": map[string]any{"type": "string"}}}}},
		{"method": "elicitation/create", "params": map[string]any{"message": "Your color?", "requestedSchema": map[string]any{"type": "object", "properties": map[string]any{"color": map[string]any{"type": "string"}}}}},
	},
	"sample": {{"method": "sampling/createMessage", "params": map[string]any{"maxTokens": 10, "messages": []any{map[string]any{"role": "user", "content": map[string]any{"type": "text", "text": "Say hi"}}}}}},
	"roots":  {{"method": "roots/list"}},
	// url asks the user to visit a page (2025-11-25), with an id.
	"url": {{"method": "elicitation/create", "params": map[string]any{"mode": "url", "message": "Sign in", "url": "https://example.com/login", "elicitationId": "up-el-1"}}},
	// stubborn asks a name, and after an error answer gives no result:
	// its call ends only when mcpx cancels it.
	"stubborn": {{"method": "elicitation/create", "params": map[string]any{"message": "Your name?", "requestedSchema": map[string]any{"type": "object", "properties": map[string]any{"name": map[string]any{"type": "string"}}}}}},
	// progress asks a name and, once answered, reports progress on the
	// call's progressToken before its result.
	"progress": {{"method": "elicitation/create", "params": map[string]any{"message": "Your name?", "requestedSchema": map[string]any{"type": "object", "properties": map[string]any{"name": map[string]any{"type": "string"}}}}}},
}

// parkerResource is the parker's one resource; reading it asks as "one"
// does.
const parkerResource = "test://ask"

// parkerRoute is the member of a notification the parker sends that names
// the call it belongs to (its stream, over HTTP); it is removed before
// the notification is sent.
const parkerRoute = "_call"

// parkerState is the asking upstream's logic: handle takes one message
// from mcpx and returns what to send back. A call's result is its
// answers, each the raw result or "error CODE: MESSAGE", joined by " | ";
// an error answer ends the questions.
type parkerState struct {
	rev string

	mu      sync.Mutex
	waiting map[string]*parkerCall // question id -> its call
	seq     int
	log     []string // "answer ID ...", "cancelled ID"
}

type parkerCall struct {
	id      json.RawMessage
	tool    string
	prompt  bool            // a prompts/get: its result is a prompt's
	uri     string          // a resources/read: its result is contents at uri
	token   json.RawMessage // the call's progressToken, if any
	answers []string
}

func newParkerState(rev string) *parkerState {
	return &parkerState{rev: rev, waiting: map[string]*parkerCall{}}
}

// ask is call's next question, under an id checkAnswersToUpstream reads.
func (s *parkerState) ask(c *parkerCall) askerMsg {
	q := parkerQuestions[c.tool][len(c.answers)]
	s.seq++
	qid, _ := json.Marshal(fmt.Sprintf("up-%s-%d", q["method"], s.seq))
	s.waiting[string(qid)] = c
	m := askerMsg{"jsonrpc": "2.0", "id": json.RawMessage(qid)}
	for k, v := range q {
		m[k] = v
	}
	return m
}

func (s *parkerState) handle(line []byte) []askerMsg {
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params struct {
			Name      string          `json:"name"`
			URI       string          `json:"uri"`
			RequestID json.RawMessage `json:"requestId"`
			Meta      struct {
				ProgressToken json.RawMessage `json:"progressToken"`
			} `json:"_meta"`
		} `json:"params"`
		Result json.RawMessage `json:"result"`
		Error  *struct {
			Code    int64  `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if json.Unmarshal(line, &m) != nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case m.Method == "" && m.ID != nil: // mcpx answers a question
		c, ok := s.waiting[string(m.ID)]
		if !ok {
			s.log = append(s.log, "unknown answer "+string(m.ID))
			return nil
		}
		delete(s.waiting, string(m.ID))
		text := string(m.Result)
		if m.Error != nil {
			text = fmt.Sprintf("error %d: %s", m.Error.Code, m.Error.Message)
		}
		s.log = append(s.log, "answer "+string(m.ID)+" "+text)
		c.answers = append(c.answers, text)
		if m.Error == nil && len(c.answers) < len(parkerQuestions[c.tool]) {
			return []askerMsg{s.ask(c)}
		}
		if m.Error != nil && c.tool == "stubborn" {
			return nil
		}
		if c.tool == "progress" && c.token != nil {
			progress := askerMsg{"jsonrpc": "2.0", "method": "notifications/progress", parkerRoute: string(c.id), "params": map[string]any{"progressToken": c.token, "progress": 1, "total": 2}}
			return []askerMsg{progress, textResult(c.id, strings.Join(c.answers, " | "))}
		}
		if c.uri != "" {
			return []askerMsg{{"jsonrpc": "2.0", "id": c.id, "result": map[string]any{"contents": []any{map[string]any{"uri": c.uri, "mimeType": "text/plain", "text": strings.Join(c.answers, " | ")}}}}}
		}
		if c.prompt {
			return []askerMsg{{"jsonrpc": "2.0", "id": c.id, "result": map[string]any{"messages": []any{map[string]any{"role": "user", "content": map[string]any{"type": "text", "text": strings.Join(c.answers, " | ")}}}}}}
		}
		return []askerMsg{textResult(c.id, strings.Join(c.answers, " | "))}
	case m.Method == "notifications/cancelled":
		s.log = append(s.log, "cancelled "+string(m.Params.RequestID))
		return nil
	case m.ID == nil:
		return nil
	case m.Method == "initialize":
		return []askerMsg{{"jsonrpc": "2.0", "id": m.ID, "result": map[string]any{"protocolVersion": s.rev, "capabilities": map[string]any{"tools": map[string]any{}, "prompts": map[string]any{}, "resources": map[string]any{}}, "serverInfo": map[string]any{"name": "parker", "version": "1"}}}}
	case m.Method == "tools/list":
		var tools []any
		for name := range parkerQuestions {
			tools = append(tools, map[string]any{"name": name, "inputSchema": map[string]any{"type": "object"}})
		}
		return []askerMsg{{"jsonrpc": "2.0", "id": m.ID, "result": map[string]any{"tools": tools}}}
	case m.Method == "tools/call" && parkerQuestions[m.Params.Name] != nil:
		return []askerMsg{s.ask(&parkerCall{id: m.ID, tool: m.Params.Name, token: m.Params.Meta.ProgressToken})}
	case m.Method == "resources/list":
		return []askerMsg{{"jsonrpc": "2.0", "id": m.ID, "result": map[string]any{"resources": []any{map[string]any{"uri": parkerResource, "name": "ask"}}}}}
	case m.Method == "resources/templates/list":
		return []askerMsg{{"jsonrpc": "2.0", "id": m.ID, "result": map[string]any{"resourceTemplates": []any{}}}}
	case m.Method == "resources/read" && m.Params.URI == parkerResource: // asks as "one" does
		return []askerMsg{s.ask(&parkerCall{id: m.ID, tool: "one", uri: m.Params.URI})}
	case m.Method == "prompts/list":
		return []askerMsg{{"jsonrpc": "2.0", "id": m.ID, "result": map[string]any{"prompts": []any{map[string]any{"name": "greet"}}}}}
	case m.Method == "prompts/get" && m.Params.Name == "greet": // asks as "one" does
		return []askerMsg{s.ask(&parkerCall{id: m.ID, tool: "one", prompt: true})}
	}
	return []askerMsg{{"jsonrpc": "2.0", "id": m.ID, "error": map[string]any{"code": -32601, "message": "no " + m.Method + " here"}}}
}

// serveParker is the parking upstream on stdio (mode parker:REV); its
// log goes to stderr, which mcpx logs.
func serveParker(rev string) int {
	s := newParkerState(rev)
	out := bufio.NewWriter(os.Stdout)
	sc := bufio.NewScanner(recordedStdin(nil))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		for _, m := range s.handle(sc.Bytes()) {
			delete(m, parkerRoute)
			b, _ := json.Marshal(m)
			out.Write(append(b, '\n'))
		}
		if out.Flush() != nil {
			return 1
		}
	}
	return 0
}

// parkerHTTP is the parking upstream over Streamable HTTP: a tools/call
// is answered with an SSE stream that carries its questions and then its
// result; mcpx's answers are POSTed (202). It returns the endpoint, the
// bodies mcpx POSTed, and the state.
func parkerHTTP(t *testing.T, rev string) (string, func() [][]byte, *parkerState) {
	s := newParkerState(rev)
	var mu sync.Mutex
	var bodies [][]byte
	streams := map[string]chan askerMsg{} // tools/call id -> what goes on its stream
	route := func(out []askerMsg) {
		for _, m := range out {
			key := ""
			if k, ok := m[parkerRoute].(string); ok { // a notification of a call
				key = k
				delete(m, parkerRoute)
			} else if m["method"] != nil { // a question: to the stream of its call
				id, _ := json.Marshal(m["id"])
				s.mu.Lock()
				if c := s.waiting[string(id)]; c != nil {
					key = string(c.id)
				}
				s.mu.Unlock()
			} else {
				b, _ := json.Marshal(m["id"])
				key = string(b)
			}
			mu.Lock()
			ch := streams[key]
			mu.Unlock()
			if ch != nil {
				ch <- m
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
		bodies = append(bodies, body)
		mu.Unlock()
		var head struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		json.Unmarshal(body, &head)
		if head.Method == "" || head.ID == nil { // an answer, or a notification
			route(s.handle(body))
			w.WriteHeader(http.StatusAccepted)
			return
		}
		if head.Method != "tools/call" && head.Method != "prompts/get" && head.Method != "resources/read" {
			w.Header().Set("Content-Type", "application/json")
			b, _ := json.Marshal(s.handle(body)[0])
			w.Write(b)
			return
		}
		ch := make(chan askerMsg, 4)
		mu.Lock()
		streams[string(head.ID)] = ch
		mu.Unlock()
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
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
					return // the result
				}
			case <-r.Context().Done():
				return
			case <-time.After(20 * time.Second):
				return
			}
		}
	}))
	t.Cleanup(srv.Close)
	return srv.URL, func() [][]byte {
		mu.Lock()
		defer mu.Unlock()
		return append([][]byte(nil), bodies...)
	}, s
}

// parkedUpstream is one upstream of a parking gateway, and what mcpx sent it.
type parkedUpstream struct {
	ns, rev string
	http    bool
	record  string          // stdio: where its stdin is recorded
	bodies  func() [][]byte // http
}

// sent is every message mcpx sent u so far.
func (u *parkedUpstream) sent(t *testing.T) []string {
	if u.http {
		var recs []string
		for _, b := range u.bodies() {
			recs = append(recs, string(b))
		}
		return recs
	}
	return readRecords(t, u.record)
}

// cancelled reports whether mcpx sent u notifications/cancelled.
func (u *parkedUpstream) cancelled(t *testing.T) bool {
	for _, s := range u.sent(t) {
		if strings.Contains(s, `"notifications/cancelled"`) {
			return true
		}
	}
	return false
}

// parkGateway builds, as `mcpx serve` does, a gateway fronting parking
// upstreams named ns... over transport, with set applied to it before
// it serves; the test's end validates what mcpx sent them closed-world.
func parkGateway(t *testing.T, transport, rev string, set func(*gateway.Gateway), ns ...string) (*gateway.Gateway, []*parkedUpstream, *wiretest.LockedBuffer) {
	t.Helper()
	dir := t.TempDir()
	servers := map[string]any{}
	var ups []*parkedUpstream
	for _, n := range ns {
		u := &parkedUpstream{ns: n, rev: rev, http: transport == "http"}
		if u.http {
			url, bodies, _ := parkerHTTP(t, rev)
			u.bodies = bodies
			servers[n] = map[string]any{"url": url, "mcpx": map[string]any{"timeout": "30s"}}
		} else {
			u.record = filepath.Join(dir, n+".in")
			servers[n] = map[string]any{"command": os.Args[0], "mcpx": map[string]any{"timeout": "30s"},
				"env": map[string]string{envUpstream: "parker:" + rev, envRecord: u.record, "GORACE": strings.TrimSpace(os.Getenv("GORACE") + " atexit_sleep_ms=0")}}
		}
		ups = append(ups, u)
	}
	data, _ := json.Marshal(map[string]any{"mcpServers": servers})
	cfg, err := config.Parse("parked.json", data, func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatalf("config.Parse: %v\n%s", err, data)
	}
	logs, log := logBuffer()
	gw, err := host.Gateway(context.Background(), cfg, serverInfo, log)
	if err != nil {
		t.Fatal(err)
	}
	if set != nil {
		set(gw)
	}
	t.Cleanup(func() {
		gw.Close()
		for _, u := range ups {
			if !u.http {
				checkUpstreamWire(t, upstream{ns: u.ns, rev: u.rev, record: u.record})
			}
			checkAnswersToUpstream(t, askUpstream{ns: u.ns, rev: u.rev, http: u.http}, u.sent(t))
		}
		wiretest.CheckLog(t, "mcpx (gateway)", logs)
	})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := gw.Ready(ctx); err != nil {
		t.Fatalf("gateway Ready: %v\n%s", err, logs.String())
	}
	return gw, ups, logs
}

// parkedTransports runs f over Streamable HTTP (a 2025-11-25 upstream)
// and stdio (a 2025-06-18 one), the client over the same transport.
func parkedTransports(t *testing.T, set func(*gateway.Gateway), ns []string, f func(t *testing.T, c *modernClient, ups []*parkedUpstream, logs *wiretest.LockedBuffer)) {
	for _, tr := range []struct{ transport, rev string }{{"http", "2025-11-25"}, {"stdio", "2025-06-18"}} {
		t.Run(tr.transport, func(t *testing.T) {
			gw, ups, logs := parkGateway(t, tr.transport, tr.rev, set, ns...)
			f(t, newModernClient(t, gw, tr.transport), ups, logs)
		})
	}
}

// question is the one inputRequests entry of a, which must ask method.
func question(t *testing.T, a mrtrAnswer, key, method, message string) {
	t.Helper()
	var q struct {
		Method string `json:"method"`
		Params struct {
			Message       string `json:"message"`
			ElicitationID *string
		} `json:"params"`
	}
	if err := json.Unmarshal(a.Result.InputRequests[key], &q); err != nil || q.Method != method || q.Params.Message != message {
		t.Errorf("inputRequests[%s] = %s, want %s %q", key, a.Result.InputRequests[key], method, message)
	}
}

const (
	nameAdaQ1   = `{"mcpx-q1":{"action":"accept","content":{"name":"Ada"}}}`
	colorBlueQ2 = `{"mcpx-q2":{"action":"accept","content":{"color":"blue"}}}`
)

var one = []string{"up"}

// TestParkedOneQuestion: the upstream's elicitation answers the client's
// call at once with input_required; the retry's answer reaches the
// upstream, whose result answers the retry.
func TestParkedOneQuestion(t *testing.T) {
	parkedTransports(t, nil, one, func(t *testing.T, c *modernClient, ups []*parkedUpstream, _ *wiretest.LockedBuffer) {
		a := c.call("up__one", "", "")
		st := asked(t, a, true, "mcpx-q1")
		question(t, a, "mcpx-q1", "elicitation/create", "Your name?")
		got := text(c.call("up__one", st, nameAdaQ1))
		if got != `{"action":"accept","content":{"name":"Ada"}}` {
			t.Errorf("the retry was answered %q; want the upstream's result carrying the client's answer", got)
		}
	})
}

// TestParkedTwoQuestions: a second question on the same call is a second
// round, with a state of its own.
func TestParkedTwoQuestions(t *testing.T) {
	parkedTransports(t, nil, one, func(t *testing.T, c *modernClient, _ []*parkedUpstream, _ *wiretest.LockedBuffer) {
		st1 := asked(t, c.call("up__two", "", ""), true, "mcpx-q1")
		a := c.call("up__two", st1, nameAdaQ1)
		st2 := asked(t, a, true, "mcpx-q2")
		question(t, a, "mcpx-q2", "elicitation/create", "Your color?")
		if st2 == st1 {
			t.Error("the second round has the first one's requestState")
		}
		got := text(c.call("up__two", st2, colorBlueQ2))
		if got != `{"action":"accept","content":{"name":"Ada"}} | {"action":"accept","content":{"color":"blue"}}` {
			t.Errorf("the last retry was answered %q; want both answers, once each", got)
		}
	})
}

// TestParkedRoots: roots/list becomes a round too, and the client's roots
// reach the upstream.
func TestParkedRoots(t *testing.T) {
	parkedTransports(t, nil, one, func(t *testing.T, c *modernClient, _ []*parkedUpstream, _ *wiretest.LockedBuffer) {
		a := c.call("up__roots", "", "")
		st := asked(t, a, true, "mcpx-q1")
		question(t, a, "mcpx-q1", "roots/list", "")
		got := text(c.call("up__roots", st, `{"mcpx-q1":{"roots":[{"uri":"file:///work","name":"work"}]}}`))
		if got != `{"roots":[{"name":"work","uri":"file:///work"}]}` {
			t.Errorf("the retry was answered %q; want the client's roots", got)
		}
	})
}

// TestParkedUndeclared: a question the client did not declare (sampling)
// is answered to the upstream with the error the page gives, and never
// reaches the client; the call goes on to its result.
func TestParkedUndeclared(t *testing.T) {
	parkedTransports(t, nil, one, func(t *testing.T, c *modernClient, _ []*parkedUpstream, _ *wiretest.LockedBuffer) {
		got := text(c.call("up__sample", "", ""))
		if !strings.HasPrefix(got, "error -32601: ") || !strings.Contains(got, "did not declare the sampling capability") {
			t.Errorf("the call was answered %q; want the upstream's result carrying -32601 for sampling", got)
		}
	})
}

// TestParkedMissingAndInvalidResponse: a retry without the answer is
// asked again (a new round); one whose answer is not the question's
// result is -32602, and the same state then takes a valid one.
func TestParkedMissingAndInvalidResponse(t *testing.T) {
	parkedTransports(t, nil, one, func(t *testing.T, c *modernClient, _ []*parkedUpstream, _ *wiretest.LockedBuffer) {
		st1 := asked(t, c.call("up__one", "", ""), true, "mcpx-q1")
		a := c.call("up__one", st1, `{"other":{"action":"decline"}}`)
		st2 := asked(t, a, true, "mcpx-q2")
		question(t, a, "mcpx-q2", "elicitation/create", "Your name?")
		refused(t, c.call("up__one", st2, `{"mcpx-q2":{"roots":[]}}`), -32602, `inputResponses["mcpx-q2"] does not answer elicitation/create`)
		if got := text(c.call("up__one", st2, `{"mcpx-q2":{"action":"decline"}}`)); got != `{"action":"decline"}` {
			t.Errorf("the valid retry was answered %q; want the decline, delivered once", got)
		}
	})
}

// TestParkedDeadline: a parked call whose retry does not come within
// ParkTimeout is given up: the upstream's question is answered with an
// error, its call cancelled, and the late retry refused -32602.
func TestParkedDeadline(t *testing.T) {
	set := func(g *gateway.Gateway) { g.ParkTimeout = 300 * time.Millisecond }
	parkedTransports(t, set, one, func(t *testing.T, c *modernClient, ups []*parkedUpstream, _ *wiretest.LockedBuffer) {
		st := asked(t, c.call("up__stubborn", "", ""), true, "mcpx-q1")
		deadline := time.Now().Add(10 * time.Second)
		for !ups[0].cancelled(t) && time.Now().Before(deadline) {
			time.Sleep(20 * time.Millisecond)
		}
		if !ups[0].cancelled(t) {
			t.Fatalf("the upstream's call was not cancelled after the deadline; mcpx sent it:\n%s", strings.Join(ups[0].sent(t), "\n"))
		}
		answered := false
		for _, s := range ups[0].sent(t) {
			if strings.Contains(s, `"up-elicitation/create-1"`) && strings.Contains(s, `"error"`) && strings.Contains(s, "did not answer elicitation/create within 300ms") {
				answered = true
			}
		}
		if !answered {
			t.Errorf("the upstream's question was not answered with an error; mcpx sent it:\n%s", strings.Join(ups[0].sent(t), "\n"))
		}
		refused(t, c.call("up__stubborn", st, nameAdaQ1), -32602, "requestState names a parked call that expired")
	})
}

// TestParkedRetryAfterFinish: the state of a call that has finished is
// refused -32602, not delivered again.
func TestParkedRetryAfterFinish(t *testing.T) {
	parkedTransports(t, nil, one, func(t *testing.T, c *modernClient, _ []*parkedUpstream, _ *wiretest.LockedBuffer) {
		st := asked(t, c.call("up__one", "", ""), true, "mcpx-q1")
		if text(c.call("up__one", st, nameAdaQ1)) == "" {
			t.Fatal("the retry got no result")
		}
		refused(t, c.call("up__one", st, nameAdaQ1), -32602, "requestState names a parked call mcpx no longer holds (it finished, or mcpx restarted)")
	})
}

// TestParkedReplayedState: a round's state presented again, once its
// answer was delivered, is refused; the call's next round is untouched
// and the upstream gets each answer once.
func TestParkedReplayedState(t *testing.T) {
	parkedTransports(t, nil, one, func(t *testing.T, c *modernClient, _ []*parkedUpstream, _ *wiretest.LockedBuffer) {
		st1 := asked(t, c.call("up__two", "", ""), true, "mcpx-q1")
		st2 := asked(t, c.call("up__two", st1, nameAdaQ1), true, "mcpx-q2")
		refused(t, c.call("up__two", st1, nameAdaQ1), -32602, "requestState was already used")
		got := text(c.call("up__two", st2, colorBlueQ2))
		if got != `{"action":"accept","content":{"name":"Ada"}} | {"action":"accept","content":{"color":"blue"}}` {
			t.Errorf("the last retry was answered %q; want each answer once", got)
		}
	})
}

// TestParkedRetryAfterRestart: a state that opens (the same key) but
// names a call this gateway does not hold, as after a restart, is -32602
// saying so.
func TestParkedRetryAfterRestart(t *testing.T) {
	for _, tr := range []struct{ transport, rev string }{{"http", "2025-11-25"}, {"stdio", "2025-06-18"}} {
		t.Run(tr.transport, func(t *testing.T) {
			gw1, _, _ := parkGateway(t, tr.transport, tr.rev, nil, "up")
			st := asked(t, newModernClient(t, gw1, tr.transport).call("up__one", "", ""), true, "mcpx-q1")
			gw2, _, _ := parkGateway(t, tr.transport, tr.rev, func(g *gateway.Gateway) { g.States = gw1.States }, "up")
			refused(t, newModernClient(t, gw2, tr.transport).call("up__one", st, nameAdaQ1), -32602, "requestState names a parked call mcpx no longer holds")
		})
	}
}

// TestParkedLimit: past MaxParked, a question fails -32603 to the
// upstream (whose call goes on to its result); the parked call is
// unaffected.
func TestParkedLimit(t *testing.T) {
	set := func(g *gateway.Gateway) { g.MaxParked = 1 }
	parkedTransports(t, set, []string{"a", "b"}, func(t *testing.T, c *modernClient, _ []*parkedUpstream, _ *wiretest.LockedBuffer) {
		st := asked(t, c.call("a__one", "", ""), true, "mcpx-q1")
		got := text(c.call("b__one", "", ""))
		if !strings.HasPrefix(got, "error -32603: ") || !strings.Contains(got, "too many calls are parked") {
			t.Errorf("the second call was answered %q; want the upstream's result carrying -32603 for the limit", got)
		}
		if got := text(c.call("a__one", st, nameAdaQ1)); got != `{"action":"accept","content":{"name":"Ada"}}` {
			t.Errorf("the parked call's retry was answered %q", got)
		}
		// Its call over, the slot is free again.
		asked(t, c.call("b__one", "", ""), true, "mcpx-q1")
	})
}

// TestParkedStatePresentedTwiceAtOnce: the same retry sent twice at once
// (Streamable HTTP, where requests run side by side) delivers once: one
// gets the call's next round, the other -32602, and the upstream gets the
// answer once.
func TestParkedStatePresentedTwiceAtOnce(t *testing.T) {
	gw, _, _ := parkGateway(t, "http", "2025-11-25", nil, "up")
	c := newModernClient(t, gw, "http")
	st1 := asked(t, c.call("up__two", "", ""), true, "mcpx-q1")
	params := "{" + modernMeta + `,"name":"up__two","arguments":{"x":1},"requestState":` + fmt.Sprintf("%q", st1) + `,"inputResponses":` + nameAdaQ1 + "}"
	answers := make([]mrtrAnswer, 2)
	var wg sync.WaitGroup
	for i := range answers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			raw := c.send(100+i, "tools/call", "up__two", params)
			answers[i].raw = string(raw)
			if err := json.Unmarshal(raw, &answers[i]); err != nil {
				t.Errorf("%v in %s", err, raw)
			}
		}()
	}
	wg.Wait()
	if answers[0].Error != nil {
		answers[0], answers[1] = answers[1], answers[0]
	}
	st2 := asked(t, answers[0], true, "mcpx-q2")
	refused(t, answers[1], -32602, "requestState was already used")
	got := text(c.call("up__two", st2, colorBlueQ2))
	if got != `{"action":"accept","content":{"name":"Ada"}} | {"action":"accept","content":{"color":"blue"}}` {
		t.Errorf("the last retry was answered %q; want each answer once", got)
	}
}

// TestParkedGoSDKClient: the Go SDK's client, pinned to 2026-07-28 with
// elicitation and roots handlers, drives the parked rounds itself (its
// multi round-trip middleware), over Streamable HTTP and stdio: one
// question, two in sequence, and roots end in the upstream's results.
func TestParkedGoSDKClient(t *testing.T) {
	for _, tr := range []struct{ transport, rev string }{{"http", "2025-11-25"}, {"stdio", "2025-06-18"}} {
		t.Run(tr.transport, func(t *testing.T) {
			gw, _, _ := parkGateway(t, tr.transport, tr.rev, nil, "up")
			conn := goSDKTransport(t, gw, tr.transport, "2026-07-28")
			var mu sync.Mutex
			var asked []string
			cl := gosdk.NewClient(&gosdk.Implementation{Name: "parked-go-sdk", Version: "1"}, &gosdk.ClientOptions{
				ElicitationHandler: func(_ context.Context, req *gosdk.ElicitRequest) (*gosdk.ElicitResult, error) {
					mu.Lock()
					asked = append(asked, req.Params.Message)
					mu.Unlock()
					if req.Params.Message == "Your color?" {
						return &gosdk.ElicitResult{Action: "accept", Content: map[string]any{"color": "teal"}}, nil
					}
					return &gosdk.ElicitResult{Action: "accept", Content: map[string]any{"name": "Ada"}}, nil
				},
			})
			cl.AddRoots(&gosdk.Root{URI: "file:///work", Name: "work"})
			cs, err := cl.Connect(t.Context(), conn, &gosdk.ClientSessionOptions{ProtocolVersion: "2026-07-28"})
			if err != nil {
				t.Fatalf("go-sdk Connect: %v", err)
			}
			defer cs.Close()
			goSDKCallTexts(t, cs, map[string]string{
				"up__one":   `{"action":"accept","content":{"name":"Ada"}}`,
				"up__two":   `{"action":"accept","content":{"name":"Ada"}} | {"action":"accept","content":{"color":"teal"}}`,
				"up__roots": `{"roots":[{"name":"work","uri":"file:///work"}]}`,
			})
			if len(asked) != 3 {
				t.Errorf("the client was asked %q, want three questions", asked)
			}
		})
	}
}

// TestParkedURLElicitation: a 2025-11-25 upstream's URL-mode elicitation
// reaches a 2026-07-28 client that declared elicitation.url without its
// elicitationId (2026-07-28 has none), and the client's answer reaches
// the upstream; one that declared only form mode is not asked, and the
// upstream gets -32602.
func TestParkedURLElicitation(t *testing.T) {
	for _, tr := range []string{"http", "stdio"} {
		t.Run(tr, func(t *testing.T) {
			gw, _, _ := parkGateway(t, tr, "2025-11-25", nil, "up")
			c := newModernClient(t, gw, tr)
			meta := strings.Replace(modernMeta, `"elicitation":{"form":{}}`, `"elicitation":{"url":{}}`, 1)
			send := func(id int, extra string) mrtrAnswer {
				raw := c.send(id, "tools/call", "up__url", "{"+meta+`,"name":"up__url","arguments":{"x":1}`+extra+"}")
				a := mrtrAnswer{raw: string(raw)}
				if err := json.Unmarshal(raw, &a); err != nil {
					t.Fatalf("%v in %s", err, raw)
				}
				return a
			}
			a := send(1, "")
			st := asked(t, a, true, "mcpx-q1")
			if q := string(a.Result.InputRequests["mcpx-q1"]); !strings.Contains(q, `"mode":"url"`) || !strings.Contains(q, `"url":"https://example.com/login"`) || strings.Contains(q, "elicitationId") || strings.Contains(q, "up-el-1") {
				t.Errorf("inputRequests[mcpx-q1] = %s; want the URL request without the upstream's elicitationId", q)
			}
			b := send(2, fmt.Sprintf(`,"requestState":%q,"inputResponses":{"mcpx-q1":{"action":"accept"}}`, st))
			if got := text(b); got != `{"action":"accept"}` {
				t.Errorf("the retry was answered %s; want the upstream's result carrying the accept", b.raw)
			}
			got := text(c.call("up__url", "", "")) // form mode only
			if !strings.HasPrefix(got, "error -32602: ") || !strings.Contains(got, "did not declare elicitation.url") {
				t.Errorf("a form-only client's call was answered %q; want the upstream's result carrying -32602", got)
			}
		})
	}
}

// TestParkedPromptsGet: prompts/get parks too (the MRTR page allows
// input_required on it), and the retry gets the prompt.
func TestParkedPromptsGet(t *testing.T) {
	parkedTransports(t, nil, one, func(t *testing.T, c *modernClient, _ []*parkedUpstream, _ *wiretest.LockedBuffer) {
		a := c.request("prompts/get", "name", "up__greet", "", "")
		st := asked(t, a, true, "mcpx-q1")
		question(t, a, "mcpx-q1", "elicitation/create", "Your name?")
		b := c.request("prompts/get", "name", "up__greet", st, nameAdaQ1)
		if b.Result == nil || len(b.Result.Messages) != 1 || b.Result.Messages[0].Content.Text != `{"action":"accept","content":{"name":"Ada"}}` {
			t.Errorf("the retry was answered %s; want the prompt carrying the client's answer", b.raw)
		}
	})
}

// sendParams sends method with params whole (its _meta of the test's
// choosing) and returns the answer.
func (c *modernClient) sendParams(method, route, params string) mrtrAnswer {
	c.t.Helper()
	c.id++
	raw := c.send(c.id, method, route, params)
	a := mrtrAnswer{raw: string(raw)}
	if err := json.Unmarshal(raw, &a); err != nil {
		c.t.Fatalf("%s: %v in %s", method, err, raw)
	}
	return a
}

// TestParkedSampling: a client that declared sampling is asked the
// upstream's sampling/createMessage through input_required, and its
// answer reaches the upstream as a result of the upstream's revision
// (closed-world checked when the test ends).
func TestParkedSampling(t *testing.T) {
	meta := strings.Replace(modernMeta, `"roots":{}`, `"roots":{},"sampling":{}`, 1)
	parkedTransports(t, nil, one, func(t *testing.T, c *modernClient, _ []*parkedUpstream, _ *wiretest.LockedBuffer) {
		params := "{" + meta + `,"name":"up__sample","arguments":{"x":1}`
		a := c.sendParams("tools/call", "up__sample", params+"}")
		st := asked(t, a, true, "mcpx-q1")
		question(t, a, "mcpx-q1", "sampling/createMessage", "")
		if q := string(a.Result.InputRequests["mcpx-q1"]); !strings.Contains(q, `"maxTokens":10`) || !strings.Contains(q, `"text":"Say hi"`) {
			t.Errorf("inputRequests[mcpx-q1] = %s; want the upstream's sampling request", q)
		}
		got := text(c.sendParams("tools/call", "up__sample", params+fmt.Sprintf(`,"requestState":%q,"inputResponses":{"mcpx-q1":{"role":"assistant","content":{"type":"text","text":"hi"},"model":"test-model","stopReason":"endTurn"}}}`, st)))
		var res struct {
			Role       string `json:"role"`
			Model      string `json:"model"`
			StopReason string `json:"stopReason"`
			Content    struct {
				Type, Text string
			} `json:"content"`
		}
		if err := json.Unmarshal([]byte(got), &res); err != nil || res.Role != "assistant" || res.Model != "test-model" || res.StopReason != "endTurn" || res.Content.Type != "text" || res.Content.Text != "hi" {
			t.Errorf("the retry was answered %q; want the upstream's result carrying the client's sampling result (one text block)", got)
		}
	})
}

// TestParkedResourceRead: resources/read parks too (the MRTR page allows
// input_required on it): the upstream's question during a read answers
// the client's read with input_required, and the retry gets the contents.
func TestParkedResourceRead(t *testing.T) {
	uri := "mcpx://up/" + parkerResource
	parkedTransports(t, nil, one, func(t *testing.T, c *modernClient, _ []*parkedUpstream, _ *wiretest.LockedBuffer) {
		a := c.request("resources/read", "uri", uri, "", "")
		st := asked(t, a, true, "mcpx-q1")
		question(t, a, "mcpx-q1", "elicitation/create", "Your name?")
		b := c.request("resources/read", "uri", uri, st, nameAdaQ1)
		if b.Result == nil || len(b.Result.Contents) != 1 || b.Result.Contents[0].Text != `{"action":"accept","content":{"name":"Ada"}}` || !strings.Contains(b.raw, `"uri":"`+uri+`"`) {
			t.Errorf("the retry was answered %s; want the contents at %s carrying the client's answer", b.raw, uri)
		}
	})
}

// TestParkedProgressReachesTheRetry: progress the upstream reports after
// the answer, while the retry waits, goes to the retry under the retry's
// progressToken; the first request, answered already, gets none. (It
// failed about one run in ten before the request waiting on a parked call
// was attached before the call started and before the answer was handed
// on: progress then found no one waiting and was dropped.)
func TestParkedProgressReachesTheRetry(t *testing.T) {
	withToken := func(tok string) string {
		return strings.Replace(modernMeta, `"_meta":{`, `"_meta":{"progressToken":"`+tok+`",`, 1)
	}
	parkedTransports(t, nil, one, func(t *testing.T, c *modernClient, ups []*parkedUpstream, _ *wiretest.LockedBuffer) {
		defer func() {
			if t.Failed() {
				t.Logf("mcpx sent the upstream:\n%s", strings.Join(ups[0].sent(t), "\n"))
			}
		}()
		tail := `,"name":"up__progress","arguments":{"x":1}`
		st := asked(t, c.sendParams("tools/call", "up__progress", "{"+withToken("first")+tail+"}"), true, "mcpx-q1")
		got := text(c.sendParams("tools/call", "up__progress", "{"+withToken("retry")+tail+fmt.Sprintf(`,"requestState":%q,"inputResponses":%s}`, st, nameAdaQ1)))
		if got != `{"action":"accept","content":{"name":"Ada"}}` {
			t.Errorf("the retry was answered %q; want the upstream's result", got)
		}
		var tokens []string
		for _, m := range receivedMessages(c) {
			if m.Method != "notifications/progress" {
				continue
			}
			var p struct {
				ProgressToken json.RawMessage `json:"progressToken"`
			}
			json.Unmarshal(m.Params, &p)
			tokens = append(tokens, string(p.ProgressToken))
		}
		if len(tokens) != 1 || tokens[0] != `"retry"` {
			t.Errorf("the client got progress with tokens %v; want one, the retry's (\"retry\")", tokens)
		}
	})
}

// receivedMessages is every JSON-RPC message c received so far, from SSE
// bodies and stdio lines alike.
func receivedMessages(c *modernClient) []wiretest.Frame {
	c.mu.Lock()
	all := c.got.String()
	c.mu.Unlock()
	var out []wiretest.Frame
	for i := strings.Index(all, `{"jsonrpc"`); i >= 0; {
		var f wiretest.Frame
		if json.NewDecoder(strings.NewReader(all[i:])).Decode(&f) == nil {
			out = append(out, f)
		}
		j := strings.Index(all[i+1:], `{"jsonrpc"`)
		if j < 0 {
			break
		}
		i += 1 + j
	}
	return out
}
