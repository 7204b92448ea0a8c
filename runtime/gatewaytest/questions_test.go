package gatewaytest

// Bridge 1 of issue 12 (legacy upstream, legacy client): an upstream's
// elicitation/create, sampling/createMessage and roots/list during a
// tools/call reach the client whose call caused it, and the client's
// answer goes back to the upstream under the upstream's own id.
//
// The upstream is hand-written (askerState): over stdio a re-executed test
// binary (mode asker:REV), over Streamable HTTP an httptest server that
// puts the question on the call's SSE response. During tools/call it asks,
// and puts the client's answer (or error) in its tool result. The clients
// are hand-written too (askingClient), over Streamable HTTP and stdio,
// answering each kind. What mcpx sends clients and upstreams is
// closed-world validated, mcpx's answers to the upstream against the
// method's result type.

import (
	"bufio"
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

	"github.com/mcpx-dev/mcpx/generated/mcp"
	"github.com/mcpx-dev/mcpx/generated/revision"
	"github.com/mcpx-dev/mcpx/runtime/gateway"
	"github.com/mcpx-dev/mcpx/testkit/closedworld"
	"github.com/mcpx-dev/mcpx/testkit/wiretest"
)

// askerTools are the upstream's tools: each asks one question, but caps
// (answers with the capabilities mcpx declared at initialize) and hold
// (answered only once a question has been answered: a second call in
// flight).
var askerTools = []string{"elicit", "sample", "sample_audio", "roots", "caps", "hold", "elicit_url", "finish", "elicit_sep", "elicit_multi"}

// askerQuestion is what tool asks: method and params, as the upstream writes them.
func askerQuestion(tool string) (string, any) {
	switch tool {
	case "elicit":
		return "elicitation/create", map[string]any{"message": "Your name?", "requestedSchema": map[string]any{"type": "object", "properties": map[string]any{"name": map[string]any{"type": "string"}}}}
	case "sample":
		return "sampling/createMessage", map[string]any{"maxTokens": 10, "messages": []any{map[string]any{"role": "user", "content": map[string]any{"type": "text", "text": "Say hi"}}}}
	case "sample_audio":
		return "sampling/createMessage", map[string]any{"maxTokens": 10, "messages": []any{map[string]any{"role": "user", "content": map[string]any{"type": "audio", "data": "AAAA", "mimeType": "audio/wav"}}}}
	case "roots":
		return "roots/list", nil
	case "elicit_sep": // 2025-11-25: SEP-1034 defaults, SEP-1330 titled enum
		return "elicitation/create", map[string]any{"message": "Your order?", "requestedSchema": json.RawMessage(sepForm)}
	case "elicit_multi": // 2025-11-25: a SEP-1330 multi-select
		return "elicitation/create", map[string]any{"message": "Toppings?", "requestedSchema": json.RawMessage(multiForm)}
	case "elicit_url": // 2025-11-25 only; the elicitationId is added when asked
		return "elicitation/create", map[string]any{"mode": "url", "message": "Sign in", "url": "https://example.com/sign-in"}
	}
	if q, ok := moreAskerQuestions[tool]; ok { // questions_content_test.go
		return q()
	}
	return "", nil
}

// askerState is the upstream's logic, whatever its transport: handle
// takes one message from mcpx and returns the messages to send back.
type askerState struct {
	rev string

	mu      sync.Mutex
	caps    json.RawMessage            // what initialize declared
	waiting map[string]json.RawMessage // question id -> the tools/call it is for
	held    []json.RawMessage          // hold calls not answered yet
	seq     int
	urlIDs  []string // the elicitationIds of its URL-mode questions, for finish
}

func newAskerState(rev string) *askerState {
	return &askerState{rev: rev, waiting: map[string]json.RawMessage{}}
}

type askerMsg = map[string]any

func textResult(id json.RawMessage, text string) askerMsg {
	return askerMsg{"jsonrpc": "2.0", "id": id, "result": map[string]any{"content": []any{map[string]any{"type": "text", "text": text}}}}
}

func (s *askerState) handle(line []byte) []askerMsg {
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params struct {
			Name         string          `json:"name"`
			Capabilities json.RawMessage `json:"capabilities"`
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
		call, ok := s.waiting[string(m.ID)]
		if !ok {
			return nil
		}
		delete(s.waiting, string(m.ID))
		text := string(m.Result)
		if m.Error != nil {
			text = fmt.Sprintf("error %d: %s", m.Error.Code, m.Error.Message)
		}
		out := []askerMsg{textResult(call, text)}
		for _, h := range s.held {
			out = append(out, textResult(h, "held"))
		}
		s.held = nil
		return out
	case m.ID == nil:
		return nil // a notification
	case m.Method == "initialize":
		s.caps = m.Params.Capabilities
		return []askerMsg{{"jsonrpc": "2.0", "id": m.ID, "result": map[string]any{"protocolVersion": s.rev, "capabilities": map[string]any{"tools": map[string]any{}}, "serverInfo": map[string]any{"name": "asker", "version": "1"}}}}
	case m.Method == "tools/list":
		var tools []any
		for _, name := range append(askerTools, moreAskerTools()...) {
			tools = append(tools, map[string]any{"name": name, "inputSchema": map[string]any{"type": "object"}})
		}
		return []askerMsg{{"jsonrpc": "2.0", "id": m.ID, "result": map[string]any{"tools": tools}}}
	case m.Method == "tools/call" && m.Params.Name == "caps":
		return []askerMsg{textResult(m.ID, string(s.caps))}
	case m.Method == "tools/call" && m.Params.Name == "finish":
		// The URL-mode elicitations end: notifications/elicitation/complete
		// for an id it never asked with, then for each it did.
		out := []askerMsg{elicitationComplete("never-asked")}
		for _, id := range s.urlIDs {
			out = append(out, elicitationComplete(id))
		}
		s.urlIDs = nil
		return append(out, textResult(m.ID, "finished"))
	case m.Method == "tools/call" && m.Params.Name == "hold":
		s.held = append(s.held, m.ID)
		return nil
	case m.Method == "tools/call":
		method, params := askerQuestion(m.Params.Name)
		if method == "" {
			break
		}
		s.seq++
		qid, _ := json.Marshal(fmt.Sprintf("up-%s-%d", method, s.seq))
		s.waiting[string(qid)] = m.ID
		q := askerMsg{"jsonrpc": "2.0", "id": json.RawMessage(qid), "method": method}
		if p, ok := params.(map[string]any); ok && p["mode"] == "url" {
			id := fmt.Sprintf("el-%d", s.seq)
			p["elicitationId"] = id
			s.urlIDs = append(s.urlIDs, id)
		}
		if params != nil {
			q["params"] = params
		}
		return []askerMsg{q}
	}
	return []askerMsg{{"jsonrpc": "2.0", "id": m.ID, "error": map[string]any{"code": -32601, "message": "no " + m.Method + " here"}}}
}

// serveAsker is the asking upstream on stdio (mode asker:REV).
func serveAsker(rev string) int {
	s := newAskerState(rev)
	out := bufio.NewWriter(os.Stdout)
	sc := bufio.NewScanner(recordedStdin(nil))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		for _, m := range s.handle(sc.Bytes()) {
			b, _ := json.Marshal(m)
			out.Write(append(b, '\n'))
		}
		if out.Flush() != nil {
			return 1
		}
	}
	return 0
}

// askerHTTP is the asking upstream over Streamable HTTP: a tools/call that
// asks is answered with an SSE stream carrying the question, then, once
// mcpx has POSTed the answer (202), the result. It returns the endpoint and
// the bodies mcpx POSTed.
func askerHTTP(t *testing.T, rev string) (string, func() [][]byte) {
	s := newAskerState(rev)
	var mu sync.Mutex
	var bodies [][]byte
	calls := map[string]chan askerMsg{} // tools/call id -> its result
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
		out := s.handle(body)
		if head.Method == "" || head.ID == nil { // an answer, or a notification
			for _, m := range out {
				id, _ := json.Marshal(m["id"])
				mu.Lock()
				ch := calls[string(id)]
				mu.Unlock()
				if ch != nil {
					ch <- m
				}
			}
			w.WriteHeader(http.StatusAccepted)
			return
		}
		if len(out) == 1 && out[0]["method"] != nil { // a question: the call's stream
			ch := make(chan askerMsg, 1)
			mu.Lock()
			calls[string(head.ID)] = ch
			mu.Unlock()
			w.Header().Set("Content-Type", "text/event-stream")
			w.WriteHeader(http.StatusOK)
			b, _ := json.Marshal(out[0])
			fmt.Fprintf(w, "event: message\ndata: %s\n\n", b)
			w.(http.Flusher).Flush()
			select {
			case m := <-ch:
				b, _ := json.Marshal(m)
				fmt.Fprintf(w, "event: message\ndata: %s\n\n", b)
			case <-r.Context().Done():
			case <-time.After(20 * time.Second):
			}
			return
		}
		if len(out) == 0 {
			w.WriteHeader(http.StatusAccepted)
			return
		}
		if len(out) > 1 { // notifications, then the result: the call's stream
			w.Header().Set("Content-Type", "text/event-stream")
			w.WriteHeader(http.StatusOK)
			for _, m := range out {
				b, _ := json.Marshal(m)
				fmt.Fprintf(w, "event: message\ndata: %s\n\n", b)
			}
			return
		}
		w.Header().Set("Content-Type", "application/json")
		b, _ := json.Marshal(out[0])
		w.Write(b)
	}))
	t.Cleanup(srv.Close)
	return srv.URL, func() [][]byte {
		mu.Lock()
		defer mu.Unlock()
		return append([][]byte(nil), bodies...)
	}
}

// askUpstream is one asking upstream of the gateway.
type askUpstream struct {
	ns, rev string
	http    bool
	timeout string // the call timeout; "" is 30s
}

// askGateway builds, as `mcpx serve` does, a gateway fronting ups. When
// the test ends it validates everything mcpx sent them, closed-world:
// requests and notifications as checkToUpstream does, and each answer to
// a question against the result type of the question's method.
func askGateway(t *testing.T, ups ...askUpstream) (*gateway.Gateway, *wiretest.LockedBuffer) {
	t.Helper()
	gw, logs, _ := askGatewayRecords(t, ups...)
	return gw, logs
}

// askGatewayRecords is askGateway, with what mcpx has sent each upstream
// so far, by namespace (one message a record).
func askGatewayRecords(t *testing.T, ups ...askUpstream) (*gateway.Gateway, *wiretest.LockedBuffer, map[string]func() []string) {
	t.Helper()
	dir := t.TempDir()
	servers := map[string]any{}
	sent := map[string]func() []string{}
	var checks []func()
	for _, u := range ups {
		if u.timeout == "" {
			u.timeout = "30s"
		}
		if u.http {
			url, bodies := askerHTTP(t, u.rev)
			servers[u.ns] = map[string]any{"url": url, "mcpx": map[string]any{"timeout": u.timeout}}
			sent[u.ns] = func() []string {
				var recs []string
				for _, b := range bodies() {
					recs = append(recs, string(b))
				}
				return recs
			}
			checks = append(checks, func() { checkAnswersToUpstream(t, u, sent[u.ns]()) })
			continue
		}
		rec := filepath.Join(dir, u.ns+".in")
		servers[u.ns] = map[string]any{"command": os.Args[0], "mcpx": map[string]any{"timeout": u.timeout},
			"env": map[string]string{envUpstream: "asker:" + u.rev, envRecord: rec, "GORACE": strings.TrimSpace(os.Getenv("GORACE") + " atexit_sleep_ms=0")}}
		sent[u.ns] = func() []string { return readRecords(t, rec) }
		checks = append(checks, func() {
			checkUpstreamWire(t, upstream{ns: u.ns, rev: u.rev, record: rec})
			checkAnswersToUpstream(t, u, readRecords(t, rec))
		})
	}
	data, _ := json.Marshal(map[string]any{"mcpServers": servers})
	gw, logs := readyGateway(t, "questions.json", string(data), "", func() {
		for _, c := range checks {
			c()
		}
	})
	return gw, logs, sent
}

// checkAnswersToUpstream validates each response mcpx sent u to one of its
// questions (ids "up-<method>-<n>") against the method's result type in
// u's revision, closed-world; for an HTTP upstream the requests too.
func checkAnswersToUpstream(t *testing.T, u askUpstream, recs []string) {
	t.Helper()
	v, err := closedworld.Default()
	if err != nil {
		t.Fatal(err)
	}
	answers := 0
	for _, line := range recs {
		if u.http {
			if rev, err := checkToUpstream(v, u.rev, []byte(line)); err != nil {
				t.Errorf("upstream %s: mcpx sent (checked at %s):\n%s\n%v", u.ns, rev, line, err)
			}
		}
		var f wiretest.Frame
		if json.Unmarshal([]byte(line), &f) != nil || f.Method != "" || f.Result == nil {
			continue
		}
		var id string
		if json.Unmarshal(f.ID, &id) != nil || !strings.HasPrefix(id, "up-") {
			continue
		}
		method := id[len("up-"):strings.LastIndex(id, "-")]
		m, ok := revision.Lookup(mcp.Revision(u.rev)).Method(method)
		if !ok {
			t.Errorf("upstream %s: an answer to %s, which %s lacks", u.ns, method, u.rev)
			continue
		}
		answers++
		if err := v.Validate(u.rev, m.Result, f.Result); err != nil {
			t.Errorf("upstream %s: mcpx's answer to %s:\n%s\nclosed-world validator (%s %s): %v", u.ns, method, line, u.rev, m.Result, err)
		}
	}
	t.Logf("upstream %s: %d answers to its questions validated", u.ns, answers)
}

// askingClient is a hand-written legacy client, over Streamable HTTP or
// stdio, that answers every question mcpx puts to it and records them.
type askingClient struct {
	t   *testing.T
	rev string

	// HTTP
	endpoint string
	hc       *http.Client
	sid      string
	// stdio
	r     *bufio.Reader
	w     io.Writer
	lines chan []byte

	delay  time.Duration          // before each answer: a person thinking
	before func(q wiretest.Frame) // called with each question before it is answered

	mu        sync.Mutex
	questions []wiretest.Frame
	notes     []wiretest.Frame // notifications mcpx sent it (complete_test.go)
	nextID    int
}

// clientAnswer is what the client answers each kind of question.
func clientAnswer(method string) string {
	switch method {
	case "elicitation/create":
		return `{"action":"accept","content":{"name":"Ada"}}`
	case "sampling/createMessage":
		return `{"role":"assistant","content":{"type":"text","text":"sampled hi"},"model":"test-model"}`
	case "roots/list":
		return `{"roots":[{"uri":"file:///work","name":"work"}]}`
	}
	return `{}`
}

const initParams = `{"protocolVersion":%q,"capabilities":%s,"clientInfo":{"name":"asked-client","version":"9"}}`

func newHTTPAskingClient(t *testing.T, gw *gateway.Gateway, rev, caps string) *askingClient {
	c := &askingClient{t: t, rev: rev, nextID: 10}
	c.endpoint, c.hc = serveHTTP(t, gw, rev)
	resp, err := postJSON(t.Context(), c.hc, c.endpoint, nil, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":`+fmt.Sprintf(initParams, rev, caps)+`}`)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if c.sid = resp.Header.Get("Mcp-Session-Id"); c.sid == "" {
		t.Fatalf("initialize: %d, no session id", resp.StatusCode)
	}
	c.post(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	return c
}

func (c *askingClient) post(body string) *http.Response {
	c.t.Helper()
	resp, err := postJSON(c.t.Context(), c.hc, c.endpoint, map[string]string{"Mcp-Session-Id": c.sid, "MCP-Protocol-Version": c.rev}, body)
	if err != nil {
		c.t.Fatal(err)
	}
	return resp
}

func newStdioAskingClient(t *testing.T, gw *gateway.Gateway, rev, caps string) *askingClient {
	r, w := serveStdio(t, gw, rev)
	c := &askingClient{t: t, rev: rev, r: bufio.NewReader(r), w: w, lines: make(chan []byte, 64), nextID: 10}
	go func() {
		defer close(c.lines)
		for {
			line, err := c.r.ReadBytes('\n')
			if len(line) > 0 {
				c.lines <- line
			}
			if err != nil {
				return
			}
		}
	}()
	t.Cleanup(func() { w.Close() })
	fmt.Fprintf(w, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":`+initParams+"}\n", rev, caps)
	if _, ok := c.next(); !ok {
		t.Fatal("no answer to initialize")
	}
	fmt.Fprintln(w, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	return c
}

func (c *askingClient) next() (wiretest.Frame, bool) {
	select {
	case line, ok := <-c.lines:
		var f wiretest.Frame
		if !ok || json.Unmarshal(line, &f) != nil {
			return f, false
		}
		return f, true
	case <-time.After(20 * time.Second):
		return wiretest.Frame{}, false
	}
}

// call calls tool, answering the questions that come meanwhile, and
// returns the tool's text, or the JSON-RPC error as "error CODE: MESSAGE".
func (c *askingClient) call(tool string) string {
	c.t.Helper()
	c.mu.Lock()
	c.nextID++
	id := c.nextID
	c.mu.Unlock()
	req := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%q,"arguments":{}}}`, id, tool)
	var final wiretest.Frame
	if c.hc != nil {
		resp := c.post(req)
		defer resp.Body.Close()
		if !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
			b, _ := io.ReadAll(resp.Body)
			json.Unmarshal(b, &final)
		} else {
			sc := bufio.NewScanner(resp.Body)
			sc.Buffer(nil, 1<<20)
			for sc.Scan() {
				data, ok := strings.CutPrefix(sc.Text(), "data: ")
				if !ok {
					continue
				}
				var f wiretest.Frame
				json.Unmarshal([]byte(data), &f)
				if f.IsRequest() {
					c.answer(f)
					continue
				}
				if f.IsNotification() {
					c.noted(f)
					continue
				}
				if f.Method == "" {
					final = f
					break
				}
			}
		}
	} else {
		fmt.Fprintln(c.w, req)
		for {
			f, ok := c.next()
			if !ok {
				c.t.Fatalf("%s: the stdio client got no answer", tool)
			}
			if f.IsRequest() {
				c.answer(f)
				continue
			}
			if f.IsNotification() {
				c.noted(f)
				continue
			}
			if f.Method == "" && string(f.ID) == fmt.Sprint(id) {
				final = f
				break
			}
		}
	}
	if final.Error != nil {
		var e struct {
			Code    int64  `json:"code"`
			Message string `json:"message"`
		}
		json.Unmarshal(final.Error, &e)
		return fmt.Sprintf("error %d: %s", e.Code, e.Message)
	}
	var res struct {
		Content []struct{ Text string } `json:"content"`
	}
	if json.Unmarshal(final.Result, &res) != nil || len(res.Content) != 1 {
		c.t.Fatalf("%s: no tool result: %+v", tool, final)
	}
	return res.Content[0].Text
}

// answer answers one question from mcpx, as this client answers that kind.
func (c *askingClient) answer(q wiretest.Frame) {
	c.mu.Lock()
	c.questions = append(c.questions, q)
	c.mu.Unlock()
	time.Sleep(c.delay)
	if c.before != nil {
		c.before(q)
	}
	answer := clientAnswer(q.Method)
	if strings.Contains(string(q.Params), `"mode":"url"`) {
		answer = `{"action":"accept"}` // out of band: no content
	}
	body := fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":%s}`, q.ID, answer)
	if c.hc != nil {
		resp := c.post(body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusAccepted {
			c.t.Errorf("POSTing the answer to %s: %d, want 202", q.Method, resp.StatusCode)
		}
		return
	}
	fmt.Fprintln(c.w, body)
}

func (c *askingClient) asked() []wiretest.Frame {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]wiretest.Frame(nil), c.questions...)
}

const declaresAll = `{"sampling":{},"elicitation":{},"roots":{"listChanged":true}}`

// TestQuestionsReachTheClientWhoseCallAsked — bridge 1: an upstream's
// elicitation/create (form), sampling/createMessage and roots/list during
// tools/call reach the legacy client that made the call, over Streamable
// HTTP (on the call's SSE response; the answer POSTed, 202) and stdio,
// from a stdio (2025-06-18) and an HTTP (2025-11-25) upstream, each with
// a fresh id of mcpx's; the client's answer reaches the upstream under
// the upstream's own id, in its revision (the upstream puts it in its
// tool result).
func TestQuestionsReachTheClientWhoseCallAsked(t *testing.T) {
	gw, _ := askGateway(t, askUpstream{ns: "s", rev: "2025-06-18"}, askUpstream{ns: "h", rev: "2025-11-25", http: true})
	want := map[string]string{"elicit": `"name":"Ada"`, "sample": `"text":"sampled hi"`, "roots": `"uri":"file:///work"`}
	methods := map[string]string{"elicit": "elicitation/create", "sample": "sampling/createMessage", "roots": "roots/list"}
	for _, tr := range []string{"http", "stdio"} {
		for _, rev := range []string{"2025-06-18", "2025-11-25"} {
			t.Run(tr+"/"+rev, func(t *testing.T) {
				var c *askingClient
				if tr == "http" {
					c = newHTTPAskingClient(t, gw, rev, declaresAll)
				} else {
					c = newStdioAskingClient(t, gw, rev, declaresAll)
				}
				for _, ns := range []string{"s", "h"} {
					for _, tool := range []string{"elicit", "sample", "roots"} {
						n := len(c.asked())
						if got := c.call(ns + "__" + tool); !strings.Contains(got, want[tool]) {
							t.Errorf("%s__%s: the upstream's tool said %q, want the client's answer (%s)", ns, tool, got, want[tool])
						}
						q := c.asked()
						if len(q) != n+1 || q[n].Method != methods[tool] {
							t.Errorf("%s__%s: the client was asked %+v, want one %s", ns, tool, q[n:], methods[tool])
							continue
						}
						if id := string(q[n].ID); !strings.HasPrefix(id, `"mcpx-q-`) {
							t.Errorf("%s__%s: the question's id is %s, not one of mcpx's own", ns, tool, id)
						}
					}
				}
			})
		}
	}
}

// TestUpstreamInitializedWithWhatMcpxRelays: a legacy upstream is
// initialized declaring sampling, elicitation with form and url, and roots
// with listChanged. initialize is written in the revision mcpx offers (the
// newest legacy one, which names the elicitation modes) whatever the
// upstream then answers with, so every upstream gets the same.
func TestUpstreamInitializedWithWhatMcpxRelays(t *testing.T) {
	gw, _ := askGateway(t, askUpstream{ns: "s", rev: "2025-06-18"}, askUpstream{ns: "h", rev: "2025-11-25", http: true}, askUpstream{ns: "o", rev: "2024-11-05"})
	c := newHTTPAskingClient(t, gw, "2025-11-25", declaresAll)
	for ns, want := range map[string]string{
		"s": `{"elicitation":{"form":{},"url":{}},"roots":{"listChanged":true},"sampling":{}}`,
		"h": `{"elicitation":{"form":{},"url":{}},"roots":{"listChanged":true},"sampling":{}}`,
		"o": `{"elicitation":{"form":{},"url":{}},"roots":{"listChanged":true},"sampling":{}}`,
	} {
		if got := c.call(ns + "__caps"); got != want {
			t.Errorf("upstream %s was initialized with capabilities %s, want %s", ns, got, want)
		}
	}
}

// TestQuestionTheClientDidNotDeclare: a client that declared none of the
// capabilities is never asked; the upstream gets the specification's
// error (roots page: -32601; sampling and elicitation missing altogether:
// -32601) naming the client, and mcpx logs the upstream and the client.
func TestQuestionTheClientDidNotDeclare(t *testing.T) {
	gw, logs := askGateway(t, askUpstream{ns: "s", rev: "2025-06-18"}, askUpstream{ns: "h", rev: "2025-11-25", http: true})
	for _, tr := range []string{"http", "stdio"} {
		t.Run(tr, func(t *testing.T) {
			var c *askingClient
			if tr == "http" {
				c = newHTTPAskingClient(t, gw, "2025-11-25", `{}`)
			} else {
				c = newStdioAskingClient(t, gw, "2025-06-18", `{}`)
			}
			for _, ns := range []string{"s", "h"} {
				for tool, cap := range map[string]string{"elicit": "elicitation", "sample": "sampling", "roots": "roots"} {
					got := c.call(ns + "__" + tool)
					if !strings.HasPrefix(got, "error -32601: ") || !strings.Contains(got, "did not declare the "+cap+" capability") || !strings.Contains(got, "asked-client 9") {
						t.Errorf("%s__%s: the upstream got %q, want -32601 naming the client and %s", ns, tool, got, cap)
					}
				}
			}
			if q := c.asked(); len(q) > 0 {
				t.Errorf("the client was asked %+v", q)
			}
		})
	}
	for _, ns := range []string{"s", "h"} {
		line := fmt.Sprintf(`upstream=%s method=roots/list code=-32601`, ns)
		if !strings.Contains(logs.String(), line) || !strings.Contains(logs.String(), "asked-client 9") {
			t.Errorf("mcpx's log does not say upstream %s's question was refused for the client:\n%s", ns, logs.String())
		}
	}
}

// TestQuestionContentTheClientCannotCarry: audio in a sampling request
// from a 2025-06-18 upstream cannot be written for a 2024-11-05 client:
// the upstream gets -32602 saying so, the client is not asked.
func TestQuestionContentTheClientCannotCarry(t *testing.T) {
	gw, _ := askGateway(t, askUpstream{ns: "s", rev: "2025-06-18"})
	for _, tr := range []string{"http", "stdio"} {
		t.Run(tr, func(t *testing.T) {
			var c *askingClient
			if tr == "http" {
				c = newHTTPAskingClient(t, gw, "2024-11-05", `{"sampling":{}}`)
			} else {
				c = newStdioAskingClient(t, gw, "2024-11-05", `{"sampling":{}}`)
			}
			got := c.call("s__sample_audio")
			if !strings.HasPrefix(got, "error -32602: ") || !strings.Contains(got, "AudioContent has no 2024-11-05 form") {
				t.Errorf("the upstream got %q, want -32602 naming the audio content", got)
			}
			if got := c.call("s__sample"); !strings.Contains(got, "sampled hi") {
				t.Errorf("text sampling to the same client: %q", got)
			}
			if q := c.asked(); len(q) != 1 {
				t.Errorf("the client was asked %d questions, want the text one only", len(q))
			}
		})
	}
}

// TestQuestionThatCannotBePlaced: with two calls in flight on one stdio
// upstream, a question names neither: the upstream gets -32603 saying
// why, mcpx logs it, and neither client is asked.
func TestQuestionThatCannotBePlaced(t *testing.T) {
	gw, logs := askGateway(t, askUpstream{ns: "s", rev: "2025-06-18"})
	a := newHTTPAskingClient(t, gw, "2025-11-25", declaresAll)
	b := newHTTPAskingClient(t, gw, "2025-11-25", declaresAll)
	held := make(chan string, 1)
	go func() { held <- a.call("s__hold") }()
	time.Sleep(300 * time.Millisecond) // the hold call is in flight upstream
	got := b.call("s__elicit")
	if !strings.HasPrefix(got, "error -32603: ") || !strings.Contains(got, "several calls are in flight") {
		t.Errorf("the upstream got %q, want -32603 saying the question cannot be placed", got)
	}
	if h := <-held; h != "held" {
		t.Errorf("the held call: %q", h)
	}
	if len(a.asked())+len(b.asked()) > 0 {
		t.Errorf("a client was asked: %+v %+v", a.asked(), b.asked())
	}
	if !strings.Contains(logs.String(), `msg="upstream request not relayed to a client" upstream=s method=elicitation/create`) {
		t.Errorf("mcpx did not log the unplaceable question:\n%s", logs.String())
	}
}

// TestQuestionPausesTheCallTimeout: while a question waits for the
// client's answer, the upstream call's timeout does not run: a client
// that answers after three times the timeout still gets the result, and
// the timeout starts again from the answer.
func TestQuestionPausesTheCallTimeout(t *testing.T) {
	gw, _ := askGateway(t, askUpstream{ns: "s", rev: "2025-06-18", timeout: "500ms"}, askUpstream{ns: "h", rev: "2025-11-25", http: true, timeout: "500ms"})
	c := newHTTPAskingClient(t, gw, "2025-11-25", declaresAll)
	c.delay = 1500 * time.Millisecond
	for _, ns := range []string{"s", "h"} {
		if got := c.call(ns + "__elicit"); !strings.Contains(got, `"name":"Ada"`) {
			t.Errorf("%s__elicit answered after 1.5s with a 500ms timeout: %q", ns, got)
		}
	}
}

// TestAnswerFromAnotherSessionIsIgnored: a response is matched to the
// question of its own session only. Client B POSTs an answer carrying the
// id of a question put to client A, on B's session: 202, and it reaches
// nobody; A's own answer is the one the upstream gets.
func TestAnswerFromAnotherSessionIsIgnored(t *testing.T) {
	gw, _ := askGateway(t, askUpstream{ns: "h", rev: "2025-11-25", http: true})
	a := newHTTPAskingClient(t, gw, "2025-11-25", declaresAll)
	b := newHTTPAskingClient(t, gw, "2025-11-25", declaresAll)
	a.before = func(q wiretest.Frame) {
		resp := b.post(fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"action":"accept","content":{"name":"Mallory"}}}`, q.ID))
		resp.Body.Close()
		if resp.StatusCode != http.StatusAccepted {
			t.Errorf("B's stray answer: %d, want 202", resp.StatusCode)
		}
	}
	if got := a.call("h__elicit"); !strings.Contains(got, `"name":"Ada"`) || strings.Contains(got, "Mallory") {
		t.Errorf("the upstream got %q, want A's answer only", got)
	}
}
