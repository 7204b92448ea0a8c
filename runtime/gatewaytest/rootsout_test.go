package gatewaytest

// Questions an upstream asks outside any call (issue 12): roots/list
// right after initialized, or on its standalone GET stream, when no call
// of a client runs on it. mcpx answers roots/list for the one client
// session using the upstream (from what that session answered before, or
// by asking it through a call of its still connecting), refuses it with
// -32603 and a logged reason otherwise, and never answers elicitation or
// sampling outside a call.

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpx-dev/mcpx/testkit/wiretest"
)

// lateAsker is a hand-written 2025-11-25 Streamable HTTP upstream with a
// session, which asks on its GET stream: roots/list once the stream
// opens (right after initialized, as server-everything does), and
// whatever ask_later names, askLaterDelay after that tool has answered. late_answers waits for n answers to its GET-stream
// questions and lists them; roots asks roots/list in the call, on its
// response stream.
type lateAsker struct {
	url string

	mu      sync.Mutex
	get     chan []byte     // questions for the GET stream
	answers []string        // answers to them, in order: result or "error CODE: MSG"
	waiting map[string]bool // ids of GET-stream questions asked
	inCall  map[string]chan string
	seq     int
	changed chan struct{} // signalled on each answer
}

// askLaterDelay is how long after ask_later's answer its question goes:
// its call has ended by then at mcpx.
const askLaterDelay = 300 * time.Millisecond

func newLateAsker(t *testing.T) *lateAsker {
	u := &lateAsker{get: make(chan []byte, 16), waiting: map[string]bool{}, inCall: map[string]chan string{}, changed: make(chan struct{}, 64)}
	u.queue("roots/list", nil) // the one right after initialized
	srv := httptest.NewServer(http.HandlerFunc(u.serve))
	t.Cleanup(srv.Close)
	u.url = srv.URL
	return u
}

func (u *lateAsker) queue(method string, params any) {
	u.mu.Lock()
	u.seq++
	id := fmt.Sprintf("late-%d", u.seq)
	u.waiting[id] = true
	u.mu.Unlock()
	m := map[string]any{"jsonrpc": "2.0", "id": id, "method": method}
	if params != nil {
		m["params"] = params
	}
	b, _ := json.Marshal(m)
	u.get <- b
}

// waitAnswers waits for n answers to GET-stream questions, and returns them.
func (u *lateAsker) waitAnswers(t *testing.T, n int) []string {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		u.mu.Lock()
		got := append([]string(nil), u.answers...)
		u.mu.Unlock()
		if len(got) >= n {
			return got
		}
		select {
		case <-u.changed:
		case <-deadline:
			t.Fatalf("the upstream got %d answers to its questions outside any call, want %d: %q", len(got), n, got)
		}
	}
}

func (u *lateAsker) serve(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodGet {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		w.(http.Flusher).Flush()
		for {
			select {
			case b := <-u.get:
				fmt.Fprintf(w, "event: message\ndata: %s\n\n", b)
				w.(http.Flusher).Flush()
			case <-r.Context().Done():
				return
			}
		}
	}
	if r.Method != http.MethodPost {
		w.WriteHeader(http.StatusMethodNotAllowed)
		return
	}
	body, _ := io.ReadAll(r.Body)
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params struct {
			Name      string `json:"name"`
			Arguments struct {
				Method string `json:"method"`
			} `json:"arguments"`
		} `json:"params"`
		Result json.RawMessage `json:"result"`
		Error  *struct {
			Code    int64  `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	json.Unmarshal(body, &m)
	reply := func(result string) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":%s}`, m.ID, result)
	}
	text := func(s string) string {
		b, _ := json.Marshal(s)
		return `{"content":[{"type":"text","text":` + string(b) + `}]}`
	}
	switch {
	case m.Method == "" && m.ID != nil: // an answer
		var id string
		json.Unmarshal(m.ID, &id)
		a := string(m.Result)
		if m.Error != nil {
			a = fmt.Sprintf("error %d: %s", m.Error.Code, m.Error.Message)
		}
		u.mu.Lock()
		late := u.waiting[id]
		delete(u.waiting, id)
		ch := u.inCall[id]
		delete(u.inCall, id)
		if late {
			u.answers = append(u.answers, a)
		}
		u.mu.Unlock()
		if ch != nil {
			ch <- a
		}
		u.changed <- struct{}{}
		w.WriteHeader(http.StatusAccepted)
	case m.ID == nil:
		w.WriteHeader(http.StatusAccepted)
	case m.Method == "initialize":
		w.Header().Set("Mcp-Session-Id", "late-session")
		reply(`{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"late-asker","version":"1"}}`)
	case m.Method == "tools/list":
		reply(`{"tools":[{"name":"ask_later","inputSchema":{"type":"object"}},{"name":"roots","inputSchema":{"type":"object"}},{"name":"hello","inputSchema":{"type":"object"}}]}`)
	case m.Method == "tools/call" && m.Params.Name == "ask_later":
		method := m.Params.Arguments.Method
		var params any
		switch method {
		case "sampling/createMessage":
			params = map[string]any{"maxTokens": 10, "messages": []any{map[string]any{"role": "user", "content": map[string]any{"type": "text", "text": "hi"}}}}
		case "elicitation/create":
			params = map[string]any{"message": "Name?", "requestedSchema": map[string]any{"type": "object", "properties": map[string]any{}}}
		default:
			method = "roots/list"
		}
		reply(text("queued"))
		// Asked once the call is over: outside any call.
		time.AfterFunc(askLaterDelay, func() { u.queue(method, params) })
	case m.Method == "tools/call" && m.Params.Name == "hello":
		reply(text("hello"))
	case m.Method == "tools/call" && m.Params.Name == "roots":
		u.mu.Lock()
		u.seq++
		id := fmt.Sprintf("in-call-%d", u.seq)
		ch := make(chan string, 1)
		u.inCall[id] = ch
		u.mu.Unlock()
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		fmt.Fprintf(w, "event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":%q,\"method\":\"roots/list\"}\n\n", id)
		w.(http.Flusher).Flush()
		select {
		case a := <-ch:
			b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": m.ID, "result": json.RawMessage(text(a))})
			fmt.Fprintf(w, "event: message\ndata: %s\n\n", b)
		case <-r.Context().Done():
		}
	default:
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32601,"message":"no %s here"}}`, m.ID, m.Method)
	}
}

func (c *askingClient) callWith(tool, args string) string {
	c.t.Helper()
	c.mu.Lock()
	c.nextID++
	id := c.nextID
	c.mu.Unlock()
	resp := c.post(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%q,"arguments":%s}}`, id, tool, args))
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}

// TestRootsOutsideAnyCall: a shared upstream's roots/list right after
// initialized (the gateway starting: no client yet) is refused -32603
// saying no client session has used it, and logged. Once one client
// session has answered roots/list in a call, a roots/list on the GET
// stream is answered with those roots, the client not asked again; after
// the client's notifications/roots/list_changed it is refused (mcpx no
// longer knows them), and so it is once a second client session uses the
// upstream (whose roots?). Sampling and elicitation outside any call are
// refused for the one session all the same, never asked.
func TestRootsOutsideAnyCall(t *testing.T) {
	u := newLateAsker(t)
	gw, logs := readyGateway(t, "late.json", `{"mcpServers": {"late": {"url": "`+u.url+`"}}}`, "", nil)
	first := u.waitAnswers(t, 1)[0]
	if !strings.HasPrefix(first, "error -32603: ") || !strings.Contains(first, "no client session has used it") {
		t.Errorf("roots/list at start, before any client: the upstream got %q, want -32603 saying no client session used it", first)
	}
	if !strings.Contains(logs.String(), `msg="upstream request not relayed to a client" upstream=late method=roots/list`) {
		t.Errorf("the refusal was not logged:\n%s", logs.String())
	}

	a := newHTTPAskingClient(t, gw, "2025-11-25", declaresAll)
	if got := a.call("late__roots"); !strings.Contains(got, `"uri":"file:///work"`) {
		t.Fatalf("roots/list in a call: %q", got)
	}
	if got := a.call("late__ask_later"); got != "queued" {
		t.Fatalf("ask_later: %q", got)
	}
	if got := u.waitAnswers(t, 2)[1]; !strings.Contains(got, `"uri":"file:///work"`) {
		t.Errorf("roots/list outside any call, one client session that gave its roots: the upstream got %q, want them", got)
	}
	if n := len(a.asked()); n != 1 {
		t.Errorf("the client was asked %d times, want once (in the call)", n)
	}
	for i, method := range []string{"sampling/createMessage", "elicitation/create"} {
		a.callWith("late__ask_later", `{"method":"`+method+`"}`)
		if got := u.waitAnswers(t, 3+i)[2+i]; !strings.HasPrefix(got, "error -32603: ") || !strings.Contains(got, "no call of a client is in flight") {
			t.Errorf("%s outside any call: the upstream got %q, want -32603", method, got)
		}
	}
	if n := len(a.asked()); n != 1 {
		t.Errorf("the client was asked %d times, want once", n)
	}

	resp := a.post(`{"jsonrpc":"2.0","method":"notifications/roots/list_changed"}`)
	resp.Body.Close()
	time.Sleep(100 * time.Millisecond) // the notification is handled in the background
	a.call("late__ask_later")
	if got := u.waitAnswers(t, 5)[4]; !strings.HasPrefix(got, "error -32603: ") || !strings.Contains(got, "does not know its roots") {
		t.Errorf("roots/list outside any call after the roots changed: the upstream got %q, want -32603 saying mcpx does not know them", got)
	}

	a.call("late__roots") // known again
	b := newHTTPAskingClient(t, gw, "2025-11-25", declaresAll)
	b.call("late__hello")
	a.call("late__ask_later")
	if got := u.waitAnswers(t, 6)[5]; !strings.HasPrefix(got, "error -32603: ") || !strings.Contains(got, "several client sessions use it") {
		t.Errorf("roots/list outside any call with two client sessions: the upstream got %q, want -32603 saying so", got)
	}
	if strings.Count(logs.String(), `msg="an upstream's roots/list outside any call is answered for the one client session using it"`) != 1 {
		t.Errorf("want one roots/list outside a call answered and logged:\n%s", logs.String())
	}
	wiretest.CheckLog(t, "mcpx", logs)
}
