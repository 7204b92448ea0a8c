package gatewaytest

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	mcpgo "github.com/mark3labs/mcp-go/mcp"
	"github.com/mcpx-dev/mcpx/runtime/edge"
	"github.com/mcpx-dev/mcpx/runtime/gateway"
	"github.com/mcpx-dev/mcpx/testkit/wiretest"
	gosdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// Bridge 3 (issue 12): a 2026-07-28 upstream answers a legacy client's
// call with input_required; mcpx asks the client each inputRequests entry
// as a request on the call's stream (bridge 1's asker), collects the
// answers and retries the upstream with inputResponses, keyed as asked,
// and the upstream's own requestState, round after round, until the
// result, which the client gets as usual. Through config, host.Gateway,
// the upstream client and the edge, with a hand-written 2026-07-28 HTTP
// upstream (b3Upstream) and hand-written legacy clients (askingClient of
// questions_test.go) over Streamable HTTP and stdio. Every message mcpx
// sends either side is validated closed-world.

const (
	askURL   = `{"method":"elicitation/create","params":{"mode":"url","message":"Sign in","url":"https://example.com/login"}}`
	askAudio = `{"method":"sampling/createMessage","params":{"messages":[{"role":"user","content":{"type":"audio","data":"AAAA","mimeType":"audio/wav"}}],"maxTokens":10}}`
)

// b3Upstream is a hand-written 2026-07-28 Streamable HTTP upstream whose
// tools ask through input_required:
//   - ask: user_name (elicitation), then "Hello, <name>!";
//   - two: step1 (elicitation), then step2 (sampling), then "<name> / <text>";
//   - several: user_name, q (sampling) and r (roots) in one round, then
//     "<name> | <text> | <root uri>";
//   - nostate: user_name with no requestState, then "Hi <name>";
//   - forever: asks again on every retry, a new state each time;
//   - slow: user_name, then holds the retry until its request ends;
//   - audio: a sampling question with audio content;
//   - url: a URL-mode elicitation, then "login <action>".
//
// and prompt greet and resource test://secret ask user_name. Its own
// requestState is UPSTREAM-SECRET-...; a retry whose state is not the one
// it gave last is refused -32602.
type b3Upstream struct {
	url string
	retryLog
	// slowEnded is closed when the slow tool's retry request ends.
	slowEnded chan struct{}
	// slowStarted is closed when the slow tool's retry arrives.
	slowStarted chan struct{}
}

func newB3Upstream(t *testing.T) *b3Upstream {
	t.Helper()
	u := &b3Upstream{slowEnded: make(chan struct{}), slowStarted: make(chan struct{})}
	var slowOnce sync.Once
	u.url = rawModernUpstream(t, func(r *http.Request, m *rawCall, reply rawReply) {
		answer := reply.result
		refuse := func(msg string) { reply.error(-32602, msg) }
		ask := func(state string, reqs ...string) { answer(askResult(state, reqs...)) }
		state := m.state()
		name := m.Params.Name + m.Params.URI
		n := 0
		switch m.Method {
		case "tools/call", "prompts/get", "resources/read":
			u.mu.Lock()
			u.seen = append(u.seen, mrtrRetry{m.Method, name, state, m.Params.InputResponses})
			for _, s := range u.seen {
				if s.Name == name {
					n++
				}
			}
			u.mu.Unlock()
		}
		if serveUserNameAsks(m, reply) {
			return
		}
		elicited := func(key string) string { return m.elicited(key, "name") }
		sampled := func(key string) string {
			var r struct {
				Content struct{ Text string } `json:"content"`
				Model   string                `json:"model"`
			}
			if json.Unmarshal(m.Params.InputResponses[key], &r) != nil || r.Model == "" {
				return ""
			}
			return r.Content.Text
		}
		root := func(key string) string {
			var r struct {
				Roots []struct{ URI string } `json:"roots"`
			}
			if json.Unmarshal(m.Params.InputResponses[key], &r) != nil || len(r.Roots) == 0 {
				return ""
			}
			return r.Roots[0].URI
		}
		text := completeText
		switch {
		case m.Method == "server/discover":
			answer(discoverResult("raw-b3", `{"tools":{},"prompts":{},"resources":{}}`))
		case m.Method == "tools/list":
			answer(toolsResult("ask", "two", "several", "nostate", "forever", "slow", "audio", "url"))
		case m.Method == "tools/call" && m.Params.Name == "two":
			switch {
			case m.Params.RequestState == nil:
				ask(upSecret+"two-1", "step1", askName)
			case state == upSecret+"two-1" && elicited("step1") != "" && m.Params.InputResponses["user_name"] == nil:
				ask(upSecret+"two-2-"+elicited("step1"), "step2", askSampling)
			case strings.HasPrefix(state, upSecret+"two-2-") && sampled("step2") != "" && m.Params.InputResponses["step1"] == nil:
				answer(text(strings.TrimPrefix(state, upSecret+"two-2-") + " / " + sampled("step2")))
			default:
				refuse("the upstream got requestState " + state)
			}
		case m.Method == "tools/call" && m.Params.Name == "several":
			switch {
			case m.Params.RequestState == nil:
				ask(upSecret+"several", "user_name", askName, "q", askSampling, "r", askRoots)
			case state != upSecret+"several":
				refuse("the upstream got requestState " + state)
			default:
				answer(text(elicited("user_name") + " | " + sampled("q") + " | " + root("r")))
			}
		case m.Method == "tools/call" && m.Params.Name == "forever":
			if n > 1 && state != fmt.Sprintf("%sforever-%d", upSecret, n-1) {
				refuse("the upstream got requestState " + state)
				break
			}
			ask(fmt.Sprintf("%sforever-%d", upSecret, n), "user_name", askName)
		case m.Method == "tools/call" && m.Params.Name == "slow":
			if m.Params.RequestState == nil {
				ask(upSecret+"slow", "user_name", askName)
				break
			}
			slowOnce.Do(func() { close(u.slowStarted) })
			select {
			case <-r.Context().Done():
				close(u.slowEnded)
			case <-time.After(20 * time.Second):
				answer(text("slow done"))
			}
		case m.Method == "tools/call" && m.Params.Name == "url":
			var r struct{ Action string }
			switch {
			case m.Params.RequestState == nil:
				ask(upSecret+"url", "login", askURL)
			case json.Unmarshal(m.Params.InputResponses["login"], &r) == nil && r.Action != "":
				answer(text("login " + r.Action))
			default:
				refuse("no answer to login")
			}
		case m.Method == "tools/call" && m.Params.Name == "audio":
			ask(upSecret+"audio", "q", askAudio)
		default:
			reply.error(-32601, "no "+m.Method+" here")
		}
	})
	return u
}

// b3Gateway fronts a fresh b3Upstream as namespace "up".
func b3Gateway(t *testing.T) (*gateway.Gateway, *b3Upstream) {
	t.Helper()
	u := newB3Upstream(t)
	gw, _ := readyGateway(t, "bridge3.json", `{"mcpServers": {"up": {"url": "`+u.url+`"}}}`, upSecret, nil)
	return gw, u
}

// b3Answer is the final response to a legacy client's request, and
// everything the client received on the way.
type b3Answer struct {
	final wiretest.Frame
	wire  string
}

func (a b3Answer) text() string {
	var res struct {
		Content  []struct{ Text string } `json:"content"`
		Messages []struct {
			Content struct{ Text string }
		} `json:"messages"`
		Contents []struct{ Text string } `json:"contents"`
	}
	if json.Unmarshal(a.final.Result, &res) != nil {
		return ""
	}
	switch {
	case len(res.Content) == 1:
		return res.Content[0].Text
	case len(res.Messages) == 1:
		return res.Messages[0].Content.Text
	case len(res.Contents) == 1:
		return res.Contents[0].Text
	}
	return ""
}

func (a b3Answer) err() (int64, string) {
	var e struct {
		Code    int64  `json:"code"`
		Message string `json:"message"`
	}
	if a.final.Error == nil || json.Unmarshal(a.final.Error, &e) != nil {
		return 0, ""
	}
	return e.Code, e.Message
}

// b3Request sends a request of method with params from c, answering the
// questions mcpx puts meanwhile as c answers them, and returns the final
// response with all the client received.
func b3Request(c *askingClient, method, params string) b3Answer {
	c.t.Helper()
	c.mu.Lock()
	c.nextID++
	id := c.nextID
	c.mu.Unlock()
	req := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%q,"params":%s}`, id, method, params)
	var a b3Answer
	var wire strings.Builder
	if c.hc != nil {
		resp := c.post(req)
		defer resp.Body.Close()
		if !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
			b, _ := io.ReadAll(resp.Body)
			wire.Write(b)
			json.Unmarshal(b, &a.final)
		} else {
			sc := bufio.NewScanner(resp.Body)
			sc.Buffer(nil, 1<<20)
			for sc.Scan() {
				wire.WriteString(sc.Text() + "\n")
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
				if f.Method == "" {
					a.final = f
					break
				}
			}
		}
	} else {
		fmt.Fprintln(c.w, req)
		for {
			f, ok := c.next()
			if !ok {
				c.t.Fatalf("%s: the stdio client got no answer", method)
			}
			b, _ := json.Marshal(f)
			wire.Write(append(b, '\n'))
			if f.IsRequest() {
				c.answer(f)
				continue
			}
			if f.Method == "" && string(f.ID) == fmt.Sprint(id) {
				a.final = f
				break
			}
		}
	}
	a.wire = wire.String()
	if a.final.Result == nil && a.final.Error == nil {
		c.t.Fatalf("%s %s: no response; the client received:\n%s", method, params, a.wire)
	}
	return a
}

func b3Call(c *askingClient, tool string) b3Answer {
	return b3Request(c, "tools/call", fmt.Sprintf(`{"name":%q,"arguments":{"x":1}}`, tool))
}

// b3Client is a legacy client of rev over transport tr declaring caps.
func b3Client(t *testing.T, gw *gateway.Gateway, tr, rev, caps string) *askingClient {
	if tr == "http" {
		return newHTTPAskingClient(t, gw, rev, caps)
	}
	return newStdioAskingClient(t, gw, rev, caps)
}

// b3Clients runs f for a legacy client of each of 2025-06-18 and
// 2025-11-25 over each transport, each with a gateway of its own, then
// checks that the client never received inputRequests, a requestState or
// the upstream's state.
func b3Clients(t *testing.T, caps string, f func(t *testing.T, c *askingClient, u *b3Upstream, rev string) []b3Answer) {
	for _, tr := range []string{"http", "stdio"} {
		for _, rev := range []string{"2025-06-18", "2025-11-25"} {
			t.Run(tr+"/"+rev, func(t *testing.T) {
				gw, u := b3Gateway(t)
				c := b3Client(t, gw, tr, rev, caps)
				for _, a := range f(t, c, u, rev) {
					for _, never := range []string{"inputRequests", "requestState", "input_required", upSecret, "mcpx1."} {
						if strings.Contains(a.wire, never) {
							t.Errorf("the legacy client received %q:\n%s", never, a.wire)
						}
					}
				}
			})
		}
	}
}

func b3WantText(t *testing.T, a b3Answer, want string) {
	t.Helper()
	if got := a.text(); got != want {
		t.Errorf("got %q (%s), want %q", got, a.wire, want)
	}
}

func b3WantError(t *testing.T, a b3Answer, code int64, want ...string) {
	t.Helper()
	got, msg := a.err()
	ok := got == code
	for _, w := range want {
		ok = ok && strings.Contains(msg, w)
	}
	if !ok {
		t.Errorf("got %s, want error %d saying %q", a.wire, code, want)
	}
}

// questionsAsked checks c was asked exactly methods since n questions, each
// with an id of mcpx's own, and returns the count now.
func questionsAsked(t *testing.T, c *askingClient, n int, methods ...string) int {
	t.Helper()
	q := c.asked()[n:]
	var got []string
	for _, f := range q {
		got = append(got, f.Method)
		if !strings.HasPrefix(string(f.ID), `"mcpx-q-`) {
			t.Errorf("question %s has id %s, not one of mcpx's own", f.Method, f.ID)
		}
	}
	if strings.Join(got, ",") != strings.Join(methods, ",") {
		t.Errorf("the client was asked %v, want %v", got, methods)
	}
	return n + len(q)
}

// TestBridge3OneRound: the upstream's one question reaches the legacy
// client as elicitation/create on its call's stream; its answer reaches
// the upstream as inputResponses under the upstream's key, with the
// upstream's own requestState; the upstream's result is the client's.
// The same for prompts/get and resources/read; and for a question the
// upstream gave no requestState with, the retry carries none.
func TestBridge3OneRound(t *testing.T) {
	b3Clients(t, declaresAll, func(t *testing.T, c *askingClient, u *b3Upstream, _ string) []b3Answer {
		a := b3Call(c, "up__ask")
		b3WantText(t, a, "Hello, Ada!")
		n := questionsAsked(t, c, 0, "elicitation/create")
		seen := u.saw()
		if len(seen) != 2 || seen[0].State != "" || seen[1].State != upSecret+"ask" || string(seen[1].Responses["user_name"]) != `{"action":"accept","content":{"name":"Ada"}}` || len(seen[1].Responses) != 1 {
			t.Errorf("the upstream saw %+v; want the call without state, then its own state and the answer keyed user_name", seen)
		}
		p := b3Request(c, "prompts/get", `{"name":"up__greet"}`)
		b3WantText(t, p, "Greet Ada")
		r := b3Request(c, "resources/read", `{"uri":"mcpx://up/test://secret"}`)
		b3WantText(t, r, "secret of Ada")
		ns := b3Call(c, "up__nostate")
		b3WantText(t, ns, "Hi Ada")
		questionsAsked(t, c, n, "elicitation/create", "elicitation/create", "elicitation/create")
		return []b3Answer{a, p, r, ns}
	})
}

// TestBridge3TwoRounds: a second question on the retry is asked in turn
// (here sampling after elicitation); each retry carries only that
// round's answers and the state the upstream gave last.
func TestBridge3TwoRounds(t *testing.T) {
	b3Clients(t, declaresAll, func(t *testing.T, c *askingClient, u *b3Upstream, _ string) []b3Answer {
		a := b3Call(c, "up__two")
		b3WantText(t, a, "Ada / sampled hi")
		questionsAsked(t, c, 0, "elicitation/create", "sampling/createMessage")
		seen := u.saw()
		if len(seen) != 3 || seen[1].State != upSecret+"two-1" || seen[2].State != upSecret+"two-2-Ada" || len(seen[2].Responses) != 1 {
			t.Errorf("the upstream saw %+v", seen)
		}
		return []b3Answer{a}
	})
}

// TestBridge3SeveralQuestions: three questions of one round (elicitation,
// sampling, roots) are asked one after another, in key order, each
// answer under its own key in one retry.
func TestBridge3SeveralQuestions(t *testing.T) {
	b3Clients(t, declaresAll, func(t *testing.T, c *askingClient, u *b3Upstream, _ string) []b3Answer {
		a := b3Call(c, "up__several")
		b3WantText(t, a, "Ada | sampled hi | file:///work")
		// Keys q, r, user_name.
		questionsAsked(t, c, 0, "sampling/createMessage", "roots/list", "elicitation/create")
		if seen := u.saw(); len(seen) != 2 || len(seen[1].Responses) != 3 {
			t.Errorf("the upstream saw %+v, want one retry with three answers", seen)
		}
		return []b3Answer{a}
	})
}

// TestBridge3UndeclaredCapability: a round with a question the client did
// not declare fails the call with bridge 1's error for it (-32601 naming
// the client and the capability), before any question of the round is
// asked, and the upstream is not retried. Content the client's revision
// cannot carry (audio to 2024-11-05) is -32602 saying so.
func TestBridge3UndeclaredCapability(t *testing.T) {
	b3Clients(t, `{"elicitation":{},"sampling":{}}`, func(t *testing.T, c *askingClient, u *b3Upstream, _ string) []b3Answer {
		// Keys q (sampling, declared), r (roots, not), user_name: q is
		// not asked either.
		a := b3Call(c, "up__several")
		b3WantError(t, a, -32601, `input request "r"`, "did not declare the roots capability", "asked-client 9")
		questionsAsked(t, c, 0)
		if n := len(u.saw()); n != 1 {
			t.Errorf("the upstream got %d requests, want no retry", n)
		}
		ok := b3Call(c, "up__ask")
		b3WantText(t, ok, "Hello, Ada!")
		return []b3Answer{a, ok}
	})
	for _, tr := range []string{"http", "stdio"} {
		t.Run(tr+"/2024-11-05 audio", func(t *testing.T) {
			gw, u := b3Gateway(t)
			c := b3Client(t, gw, tr, "2024-11-05", `{"sampling":{}}`)
			b3WantError(t, b3Call(c, "up__audio"), -32602, "AudioContent has no 2024-11-05 form")
			// 2024-11-05 has no elicitation at all.
			b3WantError(t, b3Call(c, "up__ask"), -32601, "2024-11-05, which has no elicitation/create")
			questionsAsked(t, c, 0)
			if n := len(u.saw()); n != 2 {
				t.Errorf("the upstream got %d requests, want no retries", n)
			}
		})
	}
}

// TestBridge3RoundLimit: an upstream that asks on every retry is asked
// edge.MaxInputRounds rounds, retried that often, and the client then
// gets -32603 saying so.
func TestBridge3RoundLimit(t *testing.T) {
	b3Clients(t, declaresAll, func(t *testing.T, c *askingClient, u *b3Upstream, _ string) []b3Answer {
		a := b3Call(c, "up__forever")
		b3WantError(t, a, -32603, fmt.Sprintf("still asked for input after %d rounds", edge.MaxInputRounds))
		if n := len(c.asked()); n != edge.MaxInputRounds {
			t.Errorf("the client was asked %d questions, want %d", n, edge.MaxInputRounds)
		}
		if n := len(u.saw()); n != edge.MaxInputRounds+1 {
			t.Errorf("the upstream got %d requests, want the call and %d retries", n, edge.MaxInputRounds)
		}
		return []b3Answer{a}
	})
}

// b3Start sends tools/call tool as id, and returns the next message for
// it (a question, the response or a notification) as read.
type b3Stream struct {
	c    *askingClient
	id   int
	next func() (wiretest.Frame, bool)
	done func()
}

func b3Start(t *testing.T, c *askingClient, tool string) *b3Stream {
	c.mu.Lock()
	c.nextID++
	id := c.nextID
	c.mu.Unlock()
	req := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%q,"arguments":{}}}`, id, tool)
	s := &b3Stream{c: c, id: id}
	if c.hc == nil {
		fmt.Fprintln(c.w, req)
		s.next, s.done = c.next, func() {}
		return s
	}
	resp := c.post(req)
	if !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		t.Fatalf("%s: not a stream: %s", tool, resp.Header.Get("Content-Type"))
	}
	frames := make(chan wiretest.Frame, 16)
	go func() {
		defer close(frames)
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			if data, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
				var f wiretest.Frame
				json.Unmarshal([]byte(data), &f)
				frames <- f
			}
		}
	}()
	s.next = func() (wiretest.Frame, bool) {
		select {
		case f, ok := <-frames:
			return f, ok
		case <-time.After(10 * time.Second):
			return wiretest.Frame{}, false
		}
	}
	s.done = func() { resp.Body.Close() }
	return s
}

func (s *b3Stream) send(body string) {
	if s.c.hc != nil {
		resp := s.c.post(body)
		resp.Body.Close()
		return
	}
	fmt.Fprintln(s.c.w, body)
}

func (s *b3Stream) cancel() {
	s.send(fmt.Sprintf(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":%d,"reason":"the user gave up"}}`, s.id))
}

// TestBridge3CancelMidQuestion: the client cancels its call while mcpx's
// question waits for its answer: mcpx cancels the question
// (notifications/cancelled naming its id), answers the call nothing, and
// the upstream is not retried. Cancelled while the retry is in flight,
// the retry's upstream request ends.
func TestBridge3CancelMidQuestion(t *testing.T) {
	for _, tr := range []string{"http", "stdio"} {
		t.Run(tr, func(t *testing.T) {
			gw, u := b3Gateway(t)
			c := b3Client(t, gw, tr, "2025-11-25", declaresAll)
			s := b3Start(t, c, "up__ask")
			defer s.done()
			q, ok := s.next()
			if !ok || q.Method != "elicitation/create" {
				t.Fatalf("got %+v, want the question", q)
			}
			s.cancel()
			f, ok := s.next()
			var p struct {
				RequestID json.RawMessage `json:"requestId"`
			}
			json.Unmarshal(f.Params, &p)
			cancelledQ := ok && f.Method == "notifications/cancelled" && string(p.RequestID) == string(q.ID)
			// notifications/cancelled names the question. Over HTTP the
			// call's stream then ends (it is written before the stream
			// ends: TestCancelledQuestionReachesHTTPClient). Over stdio a
			// ping is answered with nothing for the call before it.
			if tr == "http" {
				if !cancelledQ {
					t.Fatalf("after the cancel got %+v, want notifications/cancelled for the question %s", f, q.ID)
				}
				if f, ok = s.next(); ok {
					t.Errorf("after the cancellation the stream carried %+v", f)
				}
			} else {
				if !cancelledQ {
					t.Fatalf("after the cancel got %+v, want notifications/cancelled for the question %s", f, q.ID)
				}
				s.send(`{"jsonrpc":"2.0","id":"after","method":"ping"}`)
				if f, ok := s.next(); !ok || string(f.ID) != `"after"` {
					t.Errorf("after the cancel got %+v, want only the ping's answer", f)
				}
			}
			if n := len(u.saw()); n != 1 {
				t.Errorf("the upstream got %d requests, want no retry", n)
			}

			// Cancelled during the retry.
			s2 := b3Start(t, c, "up__slow")
			defer s2.done()
			q, ok = s2.next()
			if !ok || q.Method != "elicitation/create" {
				t.Fatalf("got %+v, want the question", q)
			}
			s2.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"action":"accept","content":{"name":"Ada"}}}`, q.ID))
			select {
			case <-u.slowStarted:
			case <-time.After(10 * time.Second):
				t.Fatal("the retry never reached the upstream")
			}
			s2.cancel()
			select {
			case <-u.slowEnded:
			case <-time.After(10 * time.Second):
				t.Fatal("the retry's upstream request did not end when the client cancelled")
			}
		})
	}
}

// TestBridge3GoSDKClient: the Go SDK client (v1.8.0) as a legacy client,
// pinned to 2025-06-18 and 2025-11-25 over Streamable HTTP and stdio,
// with elicitation and sampling handlers and a root, answers a 2026-07-28
// upstream's rounds through mcpx: one round, two rounds, and several
// questions in one round.
func TestBridge3GoSDKClient(t *testing.T) {
	for _, tr := range []string{"http", "stdio"} {
		for _, rev := range []string{"2025-06-18", "2025-11-25"} {
			t.Run(tr+"/"+rev, func(t *testing.T) {
				gw, _ := b3Gateway(t)
				gt := goSDKTransport(t, gw, tr, rev)
				var mu sync.Mutex
				asked := map[string]int{}
				cl := goSDKNamingClient("b3-go-sdk", "1", func(string) string { return "Grace" }, asked, &mu)
				cs, err := cl.Connect(t.Context(), gt, &gosdk.ClientSessionOptions{ProtocolVersion: rev})
				if err != nil {
					t.Fatalf("go-sdk Connect pinned to %s: %v", rev, err)
				}
				t.Cleanup(func() { cs.Close() })
				for _, tc := range []struct{ tool, want string }{
					{"up__ask", "Hello, Grace!"},
					{"up__two", "Grace / sdk sampled"},
					{"up__several", "Grace | sdk sampled | file:///sdk-root"},
				} {
					res, err := cs.CallTool(t.Context(), &gosdk.CallToolParams{Name: tc.tool, Arguments: map[string]any{}})
					if err != nil {
						t.Errorf("%s: %v", tc.tool, err)
						continue
					}
					got := goSDKText(res)
					if got != tc.want {
						t.Errorf("%s: %q, want %q", tc.tool, got, tc.want)
					}
				}
				mu.Lock()
				defer mu.Unlock()
				if asked["elicit"] != 3 || asked["sample"] != 2 {
					t.Errorf("the SDK client's handlers ran %v, want elicit 3, sample 2", asked)
				}
			})
		}
	}
}

// TestBridge3StateOutlivedByTheAnswer: when the client answers after the
// sealed state that carries the upstream's requestState has expired, the
// retry cannot be made: the client gets -32603 saying the request could
// not be resumed (mcpx's failure, not -32602 about a requestState the
// legacy client never sent), and the upstream is not retried.
func TestBridge3StateOutlivedByTheAnswer(t *testing.T) {
	for _, tr := range []string{"http", "stdio"} {
		t.Run(tr, func(t *testing.T) {
			gw, u := b3Gateway(t)
			gw.States.TTL = 30 * time.Millisecond
			c := b3Client(t, gw, tr, "2025-11-25", declaresAll)
			c.delay = 100 * time.Millisecond
			a := b3Call(c, "up__ask")
			b3WantError(t, a, -32603, "could not be resumed after round 1", "expired")
			if n := len(u.saw()); n != 1 {
				t.Errorf("the upstream got %d requests, want no retry", n)
			}
		})
	}
}

// TestBridge3MCPGoClient: mcp-go's client (v1.2.1) as a legacy client,
// pinned to 2025-06-18 and 2025-11-25 over Streamable HTTP and stdio,
// answers the same rounds with its elicitation, sampling and roots
// handlers.
func TestBridge3MCPGoClient(t *testing.T) {
	for _, tr := range []string{"http", "stdio"} {
		for _, rev := range []string{"2025-06-18", "2025-11-25"} {
			t.Run(tr+"/"+rev, func(t *testing.T) {
				gw, _ := b3Gateway(t)
				a := &mcpGoAnswers{asked: map[string]int{}}
				cl := mcpGoClient(t, gw, tr, rev, "b3-mcp-go", "1", a)
				const who = "Linus (What is your name?)"
				for _, tc := range []struct{ tool, want string }{
					{"up__ask", "Hello, " + who + "!"},
					{"up__two", who + " / mcp-go sampled"},
					{"up__several", who + " | mcp-go sampled | file:///mcp-go-root"},
				} {
					res, err := cl.CallTool(t.Context(), mcpgo.CallToolRequest{Params: mcpgo.CallToolParams{Name: tc.tool, Arguments: map[string]any{}}})
					if err != nil {
						t.Errorf("%s: %v", tc.tool, err)
						continue
					}
					got := mcpGoText(res)
					if got != tc.want {
						t.Errorf("%s: %q, want %q", tc.tool, got, tc.want)
					}
				}
				a.mu.Lock()
				defer a.mu.Unlock()
				if a.asked["elicit"] != 3 || a.asked["sample"] != 2 || a.asked["roots"] != 1 {
					t.Errorf("the mcp-go client's handlers ran %v, want elicit 3, sample 2, roots 1", a.asked)
				}
			})
		}
	}
}

// TestBridge3URLElicitation: a URL-mode elicitation reaches a 2025-11-25
// client that declared elicitation.url with an elicitationId of mcpx's
// (the 2026-07-28 upstream gave none; 2025-11-25 requires one), and its
// answer the upstream; a client that declared form mode only, or a
// 2025-06-18 one, is not asked: -32602 naming elicitation.url.
func TestBridge3URLElicitation(t *testing.T) {
	for _, tr := range []string{"http", "stdio"} {
		t.Run(tr, func(t *testing.T) {
			gw, u := b3Gateway(t)
			c := b3Client(t, gw, tr, "2025-11-25", `{"elicitation":{"form":{},"url":{}}}`)
			b3WantText(t, b3Call(c, "up__url"), "login accept")
			if q := c.asked(); len(q) != 1 || !strings.Contains(string(q[0].Params), `"elicitationId":"mcpx-`) || !strings.Contains(string(q[0].Params), `"url":"https://example.com/login"`) {
				t.Errorf("the client was asked %+v, want one URL-mode elicitation with an elicitationId of mcpx's", q)
			}
			for _, rev := range []string{"2025-11-25", "2025-06-18"} {
				form := b3Client(t, gw, tr, rev, `{"elicitation":{}}`)
				b3WantError(t, b3Call(form, "up__url"), -32602, `input request "login"`, "did not declare elicitation.url")
				questionsAsked(t, form, 0)
			}
			if n := len(u.saw()); n != 4 {
				t.Errorf("the upstream got %d requests, want the call and its retry, then the two refused calls", n)
			}
		})
	}
}
