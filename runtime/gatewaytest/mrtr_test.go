package gatewaytest

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/mcpx-dev/mcpx/runtime/config"
	"github.com/mcpx-dev/mcpx/runtime/gateway"
	"github.com/mcpx-dev/mcpx/runtime/host"
	"github.com/mcpx-dev/mcpx/testkit/wiretest"
	gosdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// Bridge 4 (issue 12): a 2026-07-28 upstream asks through input_required,
// a 2026-07-28 client answers, round after round, through the real
// gateway (config, host.Gateway, the upstream client, the edge) over
// Streamable HTTP and stdio. The upstream's own requestState travels
// sealed inside mcpx's; the client never sees it, and the upstream gets it
// back with the client's answers.

const (
	askName     = `{"method":"elicitation/create","params":{"mode":"form","message":"What is your name?","requestedSchema":{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}}}`
	askColor    = `{"method":"elicitation/create","params":{"mode":"form","message":"Which color?","requestedSchema":{"type":"object","properties":{"color":{"type":"string"}},"required":["color"]}}}`
	askRoots    = `{"method":"roots/list","params":{}}`
	askSampling = `{"method":"sampling/createMessage","params":{"messages":[{"role":"user","content":{"type":"text","text":"2+2?"}}],"maxTokens":10}}`
	upSecret    = "UPSTREAM-SECRET-"
)

// mrtrRetry is what the upstream saw on one request of a round.
type mrtrRetry struct {
	Method, Name, State string
	Responses           map[string]json.RawMessage
}

// retryLog is what a raw upstream of bridges 3 and 4 saw, request by
// request.
type retryLog struct {
	mu   sync.Mutex
	seen []mrtrRetry
}

func (l *retryLog) saw() []mrtrRetry {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]mrtrRetry(nil), l.seen...)
}

// mrtrUpstream is a hand-written 2026-07-28 Streamable HTTP upstream with
// tools ask (one question, user_name), two (step1, then step2), nostate
// (a question with no requestState), sample (sampling), roots (roots), a
// prompt greet and a resource test://secret that ask user_name. Its own
// requestState is UPSTREAM-SECRET-<round>; a retry carrying any other
// state is refused -32602 naming what it got. A retry without the answer
// asked is asked again (the MRTR page: re-request what is missing). Every
// message mcpx sends it is checked closed-world.
type mrtrUpstream struct {
	url string
	retryLog
}

func newMRTRUpstream(t *testing.T) *mrtrUpstream {
	t.Helper()
	u := &mrtrUpstream{}
	u.url = rawModernUpstream(t, func(_ *http.Request, m *rawCall, reply rawReply) {
		answer, refuse := reply.result, reply.error
		ask := func(state string, reqs ...string) { answer(askResult(state, reqs...)) }
		state := m.state()
		name := m.Params.Name + m.Params.URI
		switch m.Method {
		case "tools/call", "prompts/get", "resources/read":
			u.mu.Lock()
			u.seen = append(u.seen, mrtrRetry{m.Method, name, state, m.Params.InputResponses})
			u.mu.Unlock()
		}
		if serveUserNameAsks(m, reply) {
			return
		}
		elicited, text := m.elicited, completeText
		switch {
		case m.Method == "server/discover":
			answer(discoverResult("raw-mrtr", `{"tools":{},"prompts":{},"resources":{}}`))
		case m.Method == "tools/list":
			answer(toolsResult("ask", "two", "nostate", "sample", "roots", "broken", "empty"))
		case m.Method == "tools/call" && m.Params.Name == "two":
			switch {
			case m.Params.RequestState == nil:
				ask(upSecret+"two-1", "step1", askName)
			case state == upSecret+"two-1" && elicited("step1", "name") != "":
				ask(upSecret+"two-2-"+elicited("step1", "name"), "step2", askColor)
			case strings.HasPrefix(state, upSecret+"two-2-") && elicited("step2", "color") != "":
				answer(text(strings.TrimPrefix(state, upSecret+"two-2-") + " likes " + elicited("step2", "color")))
			default:
				refuse(-32602, "the upstream got requestState "+state)
			}
		case m.Method == "tools/call" && m.Params.Name == "sample":
			ask(upSecret+"sample", "q", askSampling)
		case m.Method == "tools/call" && m.Params.Name == "broken":
			answer(`{"resultType":"input_required","inputRequests":{"q":{"method":"nope/ask","params":{}}},"requestState":"` + upSecret + `broken"}`)
		case m.Method == "tools/call" && m.Params.Name == "empty":
			answer(`{"resultType":"input_required"}`)
		case m.Method == "tools/call" && m.Params.Name == "roots":
			ask(upSecret+"roots", "r", askRoots)
		default:
			refuse(-32601, "no "+m.Method+" here")
		}
	})
	return u
}

// mrtrGateway fronts a fresh mrtrUpstream as namespace "up".
func mrtrGateway(t *testing.T) (*gateway.Gateway, *mrtrUpstream) {
	t.Helper()
	u := newMRTRUpstream(t)
	gw, _ := readyGateway(t, "mrtr.json", `{"mcpServers": {"up": {"url": "`+u.url+`"}, "other": {"url": "`+u.url+`"}}}`, upSecret, nil)
	return gw, u
}

// modernClient sends 2026-07-28 requests to the gateway over one
// transport and returns each response whole; every byte it received is
// kept in got, to search for what it must never see. Messages are
// validated closed-world by serveHTTP and serveStdio.
type modernClient struct {
	t    *testing.T
	send func(id int, method, name, params string) []byte
	mu   sync.Mutex
	got  strings.Builder
	id   int
}

const modernMeta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"mrtr-test","version":"1"},"io.modelcontextprotocol/clientCapabilities":{"elicitation":{"form":{}},"roots":{}}}`

func newModernClient(t *testing.T, gw *gateway.Gateway, transport string) *modernClient {
	c := &modernClient{t: t}
	if transport == "http" {
		endpoint, hc := serveHTTP(t, gw, "2026-07-28")
		c.send = func(id int, method, name, params string) []byte {
			resp, err := postJSON(t.Context(), hc, endpoint, map[string]string{"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": method, "Mcp-Name": name},
				fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%q,"params":%s}`, id, method, params))
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			body, _ := io.ReadAll(resp.Body)
			c.mu.Lock()
			c.got.Write(body)
			c.mu.Unlock()
			return lastData(body)
		}
		return c
	}
	r, w := serveStdio(t, gw, "2026-07-28")
	t.Cleanup(func() { w.Close(); r.Close() })
	lines := bufio.NewScanner(r)
	lines.Buffer(nil, 1<<20)
	c.send = func(id int, method, _, params string) []byte {
		if _, err := fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%d,"method":%q,"params":%s}`+"\n", id, method, params); err != nil {
			t.Fatal(err)
		}
		for lines.Scan() {
			c.mu.Lock()
			c.got.Write(lines.Bytes())
			c.mu.Unlock()
			var head struct{ ID json.RawMessage }
			if json.Unmarshal(lines.Bytes(), &head) == nil && string(head.ID) == fmt.Sprint(id) {
				return append([]byte(nil), lines.Bytes()...)
			}
		}
		t.Fatalf("stdio ended before the answer to %d: %v", id, lines.Err())
		return nil
	}
	return c
}

// mrtrAnswer is a response as the tests read it.
type mrtrAnswer struct {
	Result *struct {
		ResultType    string                     `json:"resultType"`
		InputRequests map[string]json.RawMessage `json:"inputRequests"`
		RequestState  *string                    `json:"requestState"`
		Content       []struct{ Text string }    `json:"content"`
		Messages      []struct {
			Content struct{ Text string }
		} `json:"messages"`
		Contents   []struct{ Text string } `json:"contents"`
		TTLMs      *int64                  `json:"ttlMs"`
		CacheScope *string                 `json:"cacheScope"`
	} `json:"result"`
	Error *struct {
		Code    int64  `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
	raw string
}

// request sends method with the route member (name or uri) route and,
// when not "", the retry's state and responses (a JSON object).
func (c *modernClient) request(method, routeKey, route, state, responses string) mrtrAnswer {
	c.t.Helper()
	c.id++
	p := modernMeta + fmt.Sprintf(`,%q:%q`, routeKey, route)
	if method == "tools/call" {
		p += `,"arguments":{"x":1}`
	}
	if state != "" {
		p += fmt.Sprintf(`,"requestState":%q`, state)
	}
	if responses != "" {
		p += `,"inputResponses":` + responses
	}
	raw := c.send(c.id, method, route, "{"+p+"}")
	a := mrtrAnswer{raw: string(raw)}
	if err := json.Unmarshal(raw, &a); err != nil {
		c.t.Fatalf("%s: %v in %s", method, err, raw)
	}
	return a
}

func (c *modernClient) call(tool, state, responses string) mrtrAnswer {
	return c.request("tools/call", "name", tool, state, responses)
}

// asked checks a is an input_required result asking exactly keys, with a
// requestState of mcpx's own (or none, when wantState is false), and
// returns the state.
func asked(t *testing.T, a mrtrAnswer, wantState bool, keys ...string) string {
	t.Helper()
	if a.Result == nil || a.Result.ResultType != "input_required" {
		t.Fatalf("got %s, want an input_required result", a.raw)
	}
	if len(a.Result.InputRequests) != len(keys) {
		t.Errorf("inputRequests %s, want the keys %v", a.raw, keys)
	}
	for _, k := range keys {
		if a.Result.InputRequests[k] == nil {
			t.Errorf("inputRequests lacks %q: %s", k, a.raw)
		}
	}
	if a.Result.TTLMs != nil || a.Result.CacheScope != nil {
		t.Errorf("an input_required result carries caching hints: %s", a.raw)
	}
	switch {
	case !wantState && a.Result.RequestState != nil:
		t.Errorf("requestState %q, want none (the upstream gave none)", *a.Result.RequestState)
		return ""
	case !wantState:
		return ""
	case a.Result.RequestState == nil || !strings.HasPrefix(*a.Result.RequestState, "mcpx1."):
		t.Fatalf("got %s, want a requestState of mcpx's own", a.raw)
	}
	return *a.Result.RequestState
}

func text(a mrtrAnswer) string {
	if a.Result == nil || len(a.Result.Content) != 1 {
		return ""
	}
	return a.Result.Content[0].Text
}

func refused(t *testing.T, a mrtrAnswer, code int64, want string) {
	t.Helper()
	if a.Error == nil || a.Error.Code != code || !strings.Contains(a.Error.Message, want) {
		t.Errorf("got %s, want %d saying %q", a.raw, code, want)
	}
}

// mrtrTransports runs f over Streamable HTTP and stdio, each with a gateway
// of its own, then checks that the client never received the upstream's
// requestState.
func mrtrTransports(t *testing.T, f func(t *testing.T, c *modernClient, u *mrtrUpstream, gw *gateway.Gateway)) {
	for _, tr := range []string{"http", "stdio"} {
		t.Run(tr, func(t *testing.T) {
			gw, u := mrtrGateway(t)
			c := newModernClient(t, gw, tr)
			f(t, c, u, gw)
			c.mu.Lock()
			defer c.mu.Unlock()
			if strings.Contains(c.got.String(), upSecret) {
				t.Errorf("the client received the upstream's requestState:\n%s", c.got.String())
			}
		})
	}
}

const nameAda = `{"user_name":{"action":"accept","content":{"name":"Ada"}}}`

// TestMRTROneRound: the upstream's question reaches the client under its
// own key with mcpx's state; the retry reaches the upstream with its own
// requestState and the client's answer, and the result comes back.
func TestMRTROneRound(t *testing.T) {
	mrtrTransports(t, func(t *testing.T, c *modernClient, u *mrtrUpstream, _ *gateway.Gateway) {
		st := asked(t, c.call("up__ask", "", ""), true, "user_name")
		if got := text(c.call("up__ask", st, nameAda)); got != "Hello, Ada!" {
			t.Errorf("retry answered %q, want \"Hello, Ada!\"", got)
		}
		seen := u.saw()
		if len(seen) != 2 || seen[0].State != "" || seen[1].State != upSecret+"ask" || string(seen[1].Responses["user_name"]) != `{"action":"accept","content":{"name":"Ada"}}` {
			t.Errorf("the upstream saw %+v; want the first call without state, then its own state and the answer", seen)
		}
	})
}

// TestMRTRTwoRounds: a second question on the retry gets a new state of
// mcpx's; each round reaches the upstream with the state it gave last.
func TestMRTRTwoRounds(t *testing.T) {
	mrtrTransports(t, func(t *testing.T, c *modernClient, u *mrtrUpstream, _ *gateway.Gateway) {
		st1 := asked(t, c.call("up__two", "", ""), true, "step1")
		st2 := asked(t, c.call("up__two", st1, `{"step1":{"action":"accept","content":{"name":"Ada"}}}`), true, "step2")
		if st2 == st1 {
			t.Error("the second round's requestState is the first's")
		}
		if got := text(c.call("up__two", st2, `{"step2":{"action":"accept","content":{"color":"teal"}}}`)); got != "Ada likes teal" {
			t.Errorf("final answer %q, want \"Ada likes teal\"", got)
		}
		// The first round's state still opens (it is not single-use: the
		// page's warning) and brings the upstream its first state again.
		asked(t, c.call("up__two", st1, `{"step1":{"action":"accept","content":{"name":"Bo"}}}`), true, "step2")
		if seen := u.saw(); len(seen) != 4 || seen[2].State != upSecret+"two-2-Ada" {
			t.Errorf("the upstream saw %+v", seen)
		}
	})
}

// TestMRTRNoUpstreamState: an upstream that gives no requestState gets
// none minted by mcpx: the client is given none and retries with the
// answers only, which reach the upstream without a state.
func TestMRTRNoUpstreamState(t *testing.T) {
	mrtrTransports(t, func(t *testing.T, c *modernClient, _ *mrtrUpstream, _ *gateway.Gateway) {
		asked(t, c.call("up__nostate", "", ""), false, "user_name")
		if got := text(c.call("up__nostate", "", nameAda)); got != "Hi Ada" {
			t.Errorf("retry answered %q, want \"Hi Ada\"", got)
		}
	})
}

// TestMRTRTamperedState: a state altered by one character is -32602 and
// never reaches the upstream.
func TestMRTRTamperedState(t *testing.T) {
	mrtrTransports(t, func(t *testing.T, c *modernClient, u *mrtrUpstream, _ *gateway.Gateway) {
		st := asked(t, c.call("up__ask", "", ""), true, "user_name")
		i := len(st) - 10
		b := []byte(st)
		b[i] = map[bool]byte{true: 'A', false: 'B'}[b[i] != 'A']
		refused(t, c.call("up__ask", string(b), nameAda), -32602, "requestState has been altered")
		refused(t, c.call("up__ask", "not-a-state", nameAda), -32602, "requestState is not one mcpx issued")
		if n := len(u.saw()); n != 1 {
			t.Errorf("the upstream got %d requests, want only the first", n)
		}
	})
}

// TestMRTROtherRequestState: a state presented on another tool, the same
// tool with other arguments, another method, or another namespace is
// -32602 saying so.
func TestMRTROtherRequestState(t *testing.T) {
	mrtrTransports(t, func(t *testing.T, c *modernClient, u *mrtrUpstream, _ *gateway.Gateway) {
		st := asked(t, c.call("up__ask", "", ""), true, "user_name")
		refused(t, c.call("up__two", st, nameAda), -32602, "requestState was issued for a tools/call request with other params")
		refused(t, c.call("other__ask", st, nameAda), -32602, `requestState was issued in namespace "up", not "other"`)
		refused(t, c.request("prompts/get", "name", "up__greet", st, nameAda), -32602, "requestState was issued for a tools/call request, not prompts/get")
		c.id++
		other := c.send(c.id, "tools/call", "up__ask", `{`+modernMeta+`,"name":"up__ask","arguments":{"x":2},"requestState":"`+st+`","inputResponses":`+nameAda+`}`)
		var a mrtrAnswer
		_ = json.Unmarshal(other, &a)
		a.raw = string(other)
		refused(t, a, -32602, "requestState was issued for a tools/call request with other params")
		if n := len(u.saw()); n != 1 {
			t.Errorf("the upstream got %d requests, want only the first", n)
		}
	})
}

// TestMRTRExpiredState: a state past its TTL is -32602 saying it expired.
func TestMRTRExpiredState(t *testing.T) {
	mrtrTransports(t, func(t *testing.T, c *modernClient, u *mrtrUpstream, gw *gateway.Gateway) {
		gw.States.TTL = 30 * time.Millisecond
		st := asked(t, c.call("up__ask", "", ""), true, "user_name")
		time.Sleep(60 * time.Millisecond)
		refused(t, c.call("up__ask", st, nameAda), -32602, "requestState expired")
		if n := len(u.saw()); n != 1 {
			t.Errorf("the upstream got %d requests, want only the first", n)
		}
	})
}

// TestMRTRMissingResponse: a retry without the answer asked reaches the
// upstream, which asks again (the MRTR page: re-request, not an error);
// mcpx relays the new round.
func TestMRTRMissingResponse(t *testing.T) {
	mrtrTransports(t, func(t *testing.T, c *modernClient, u *mrtrUpstream, _ *gateway.Gateway) {
		st := asked(t, c.call("up__ask", "", ""), true, "user_name")
		st2 := asked(t, c.call("up__ask", st, `{}`), true, "user_name")
		if got := text(c.call("up__ask", st2, nameAda)); got != "Hello, Ada!" {
			t.Errorf("answered %q", got)
		}
		if seen := u.saw(); len(seen) != 3 || seen[1].State != upSecret+"ask" {
			t.Errorf("the upstream saw %+v", seen)
		}
	})
}

// TestMRTRExtraResponse: answers to keys not asked pass to the upstream,
// which ignores them (the MRTR page's SHOULD is the server's, and only
// the upstream knows what it asked); the call completes.
func TestMRTRExtraResponse(t *testing.T) {
	mrtrTransports(t, func(t *testing.T, c *modernClient, u *mrtrUpstream, _ *gateway.Gateway) {
		st := asked(t, c.call("up__ask", "", ""), true, "user_name")
		if got := text(c.call("up__ask", st, `{"user_name":{"action":"accept","content":{"name":"Ada"}},"unasked":{"action":"decline"}}`)); got != "Hello, Ada!" {
			t.Errorf("answered %q", got)
		}
		if seen := u.saw(); len(seen) != 2 || seen[1].Responses["unasked"] == nil {
			t.Errorf("the upstream saw %+v, want the extra answer passed on", seen)
		}
	})
}

// TestMRTRInvalidResponse: inputResponses that are no InputResponses are
// -32602 from mcpx, and the upstream never sees them.
func TestMRTRInvalidResponse(t *testing.T) {
	mrtrTransports(t, func(t *testing.T, c *modernClient, u *mrtrUpstream, _ *gateway.Gateway) {
		st := asked(t, c.call("up__ask", "", ""), true, "user_name")
		refused(t, c.call("up__ask", st, `{"user_name":{"nonsense":true}}`), -32602, "invalid params")
		refused(t, c.call("up__ask", st, `["user_name"]`), -32602, "invalid params")
		if n := len(u.saw()); n != 1 {
			t.Errorf("the upstream got %d requests, want only the first", n)
		}
	})
}

// TestMRTRPromptAndResource: prompts/get and resources/read are relayed
// the same way; a retry's resources/read result is given no freshness
// (ttlMs 0, private: the caching page forbids caching it, and its schema
// requires the fields).
func TestMRTRPromptAndResource(t *testing.T) {
	mrtrTransports(t, func(t *testing.T, c *modernClient, _ *mrtrUpstream, _ *gateway.Gateway) {
		st := asked(t, c.request("prompts/get", "name", "up__greet", "", ""), true, "user_name")
		a := c.request("prompts/get", "name", "up__greet", st, nameAda)
		if a.Result == nil || len(a.Result.Messages) != 1 || a.Result.Messages[0].Content.Text != "Greet Ada" {
			t.Errorf("prompts/get retry: %s", a.raw)
		}
		uri := "mcpx://up/test://secret"
		st = asked(t, c.request("resources/read", "uri", uri, "", ""), true, "user_name")
		a = c.request("resources/read", "uri", uri, st, nameAda)
		switch {
		case a.Result == nil || len(a.Result.Contents) != 1 || a.Result.Contents[0].Text != "secret of Ada":
			t.Errorf("resources/read retry: %s", a.raw)
		case a.Result.TTLMs == nil || *a.Result.TTLMs != 0 || a.Result.CacheScope == nil || *a.Result.CacheScope != "private":
			t.Errorf("resources/read retry: ttlMs/cacheScope %s, want 0 and private", a.raw)
		}
	})
}

// TestMRTRUndeclaredCapability: a question the client did not declare
// (sampling; roots are declared) is -32021 naming the capability, never
// relayed.
func TestMRTRUndeclaredCapability(t *testing.T) {
	mrtrTransports(t, func(t *testing.T, c *modernClient, _ *mrtrUpstream, _ *gateway.Gateway) {
		a := c.call("up__sample", "", "")
		refused(t, a, -32021, "client capability")
		if !strings.Contains(a.raw, `"requiredCapabilities":{"sampling":{}}`) {
			t.Errorf("got %s, want requiredCapabilities naming sampling", a.raw)
		}
		asked(t, c.call("up__roots", "", ""), true, "r")
	})
}

// TestMRTRGoSDKClient: the Go SDK's client, pinned to 2026-07-28 with an
// elicitation handler, drives the rounds itself (its multi round-trip
// middleware) over Streamable HTTP and stdio: one round and two rounds
// end in the upstream's answer, the upstream having seen its own states.
func TestMRTRGoSDKClient(t *testing.T) {
	for _, tr := range []string{"http", "stdio"} {
		t.Run(tr, func(t *testing.T) {
			gw, u := mrtrGateway(t)
			conn := goSDKTransport(t, gw, tr, "2026-07-28")
			var asked []string
			cl := gosdk.NewClient(&gosdk.Implementation{Name: "mrtr-go-sdk", Version: "1"}, &gosdk.ClientOptions{
				ElicitationHandler: func(_ context.Context, req *gosdk.ElicitRequest) (*gosdk.ElicitResult, error) {
					asked = append(asked, req.Params.Message)
					if req.Params.Message == "Which color?" {
						return &gosdk.ElicitResult{Action: "accept", Content: map[string]any{"color": "teal"}}, nil
					}
					return &gosdk.ElicitResult{Action: "accept", Content: map[string]any{"name": "Ada"}}, nil
				},
			})
			cs, err := cl.Connect(t.Context(), conn, &gosdk.ClientSessionOptions{ProtocolVersion: "2026-07-28"})
			if err != nil {
				t.Fatalf("go-sdk Connect: %v", err)
			}
			defer cs.Close()
			goSDKCallTexts(t, cs, map[string]string{"up__ask": "Hello, Ada!", "up__two": "Ada likes teal"})
			if len(asked) != 3 {
				t.Errorf("the client was asked %q, want three questions", asked)
			}
			for _, s := range u.saw() {
				if strings.HasPrefix(s.State, "mcpx1.") {
					t.Errorf("the upstream got mcpx's state: %+v", s)
				}
			}
		})
	}
}

// TestMRTRGoSDKUpstream: the Go SDK's server as a 2026-07-28 Streamable
// HTTP upstream whose tool asks through MRTR (inputRequests, and its own
// requestState on the way), the Go SDK's client answering through mcpx:
// real peers on both sides, over HTTP and stdio to the client.
func TestMRTRGoSDKUpstream(t *testing.T) {
	s := gosdk.NewServer(&gosdk.Implementation{Name: "sdk-mrtr", Version: "1"}, &gosdk.ServerOptions{SupportedProtocolVersions: []string{"2026-07-28"}})
	var states []string
	var mu sync.Mutex
	gosdk.AddTool(s, &gosdk.Tool{Name: "ask"}, func(_ context.Context, req *gosdk.CallToolRequest, _ map[string]any) (*gosdk.CallToolResult, any, error) {
		mu.Lock()
		states = append(states, req.Params.RequestState)
		mu.Unlock()
		r, _ := req.Params.InputResponses["user_name"].(*gosdk.ElicitResult)
		if r == nil || req.Params.RequestState != upSecret+"sdk" {
			return &gosdk.CallToolResult{
				InputRequests: gosdk.InputRequestMap{"user_name": &gosdk.ElicitParams{Message: "What is your name?",
					RequestedSchema: &jsonschema.Schema{Type: "object", Properties: map[string]*jsonschema.Schema{"name": {Type: "string"}}}}},
				RequestState: upSecret + "sdk",
			}, nil, nil
		}
		return &gosdk.CallToolResult{Content: []gosdk.Content{&gosdk.TextContent{Text: fmt.Sprintf("Hello, %v!", r.Content["name"])}}}, nil, nil
	})
	srv := httptest.NewServer(gosdk.NewStreamableHTTPHandler(func(*http.Request) *gosdk.Server { return s }, &gosdk.StreamableHTTPOptions{Stateless: true}))
	t.Cleanup(srv.Close)
	cfg, err := config.Parse("sdk.json", []byte(`{"mcpServers": {"sdk": {"url": "`+srv.URL+`"}}}`), nil)
	if err != nil {
		t.Fatal(err)
	}
	logs, log := logBuffer()
	gw, err := host.Gateway(context.Background(), cfg, serverInfo, log)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { gw.Close(); wiretest.CheckLog(t, "mcpx (gateway)", logs) })
	if err := gw.Ready(t.Context()); err != nil {
		t.Fatal(err)
	}
	for _, tr := range []string{"http", "stdio"} {
		t.Run(tr, func(t *testing.T) {
			c := newModernClient(t, gw, tr)
			st := asked(t, c.call("sdk__ask", "", ""), true, "user_name")
			if got := text(c.call("sdk__ask", st, nameAda)); got != "Hello, Ada!" {
				t.Errorf("retry answered %q, want \"Hello, Ada!\"", got)
			}
			c.mu.Lock()
			defer c.mu.Unlock()
			if strings.Contains(c.got.String(), upSecret) {
				t.Errorf("the client received the upstream's requestState:\n%s", c.got.String())
			}
		})
	}
	mu.Lock()
	defer mu.Unlock()
	if len(states) != 4 || states[1] != upSecret+"sdk" || states[3] != upSecret+"sdk" {
		t.Errorf("the SDK server saw requestStates %q, want none then its own, twice", states)
	}
}

// TestMRTRUnrelayable: an upstream's input_required whose question is no
// InputRequest, or that carries neither inputRequests nor requestState
// (the MRTR page requires one), is -32603 saying so, never relayed.
func TestMRTRUnrelayable(t *testing.T) {
	mrtrTransports(t, func(t *testing.T, c *modernClient, _ *mrtrUpstream, _ *gateway.Gateway) {
		refused(t, c.call("up__broken", "", ""), -32603, `upstream "up": tools/call: the upstream answered with an input_required result (asking "q") that mcpx cannot read`)
		refused(t, c.call("up__empty", "", ""), -32603, `upstream "up": tools/call: the upstream answered input_required with neither inputRequests nor requestState (the MRTR page requires one)`)
	})
}
