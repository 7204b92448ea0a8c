package gatewaytest

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	mcpgo "github.com/mark3labs/mcp-go/mcp"
	"github.com/mcpx-dev/mcpx/runtime/gateway"
	"github.com/mcpx-dev/mcpx/testkit/closedworld"
	gosdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// The peers several tests of this package share: a hand-written
// 2026-07-28 HTTP upstream skeleton (rawModernUpstream) whose behaviour
// each test passes in, and the set-up of the real SDK clients (Go SDK,
// mcp-go) over either transport.

// rawCall is one request mcpx sent a rawModernUpstream, decoded into the
// fields those upstreams read.
type rawCall struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params struct {
		Name           string                     `json:"name"`
		URI            string                     `json:"uri"`
		RequestState   *string                    `json:"requestState"`
		InputResponses map[string]json.RawMessage `json:"inputResponses"`
		Meta           struct {
			Caps json.RawMessage `json:"io.modelcontextprotocol/clientCapabilities"`
		} `json:"_meta"`
	} `json:"params"`
}

// state is the requestState the request carried, "" when none.
func (c *rawCall) state() string {
	if c.Params.RequestState == nil {
		return ""
	}
	return *c.Params.RequestState
}

// elicited is the content field of the elicitation answer under key, ""
// when there is none or it was not accepted.
func (c *rawCall) elicited(key, field string) string {
	var r struct {
		Action  string            `json:"action"`
		Content map[string]string `json:"content"`
	}
	if json.Unmarshal(c.Params.InputResponses[key], &r) != nil || r.Action != "accept" {
		return ""
	}
	return r.Content[field]
}

// rawReply answers one rawCall.
type rawReply struct {
	w  http.ResponseWriter
	id json.RawMessage
}

// result answers with result, a JSON object as written.
func (a rawReply) result(result string) {
	fmt.Fprintf(a.w, `{"jsonrpc":"2.0","id":%s,"result":%s}`, a.id, result)
}

// error answers with a JSON-RPC error.
func (a rawReply) error(code int, msg string) {
	b, _ := json.Marshal(msg)
	fmt.Fprintf(a.w, `{"jsonrpc":"2.0","id":%s,"error":{"code":%d,"message":%s}}`, a.id, code, b)
}

// errorData answers with a JSON-RPC error whose data is a JSON value as
// written.
func (a rawReply) errorData(code int, msg, data string) {
	b, _ := json.Marshal(msg)
	fmt.Fprintf(a.w, `{"jsonrpc":"2.0","id":%s,"error":{"code":%d,"message":%s,"data":%s}}`, a.id, code, b, data)
}

// rawModernUpstream serves a hand-written 2026-07-28 Streamable HTTP
// upstream and returns its URL. It takes POST only; every message mcpx
// sends it is checked closed-world (checkToUpstream), each violation
// failing the test when it ends; a notification or an answer gets 202;
// each request, decoded, goes to serve with a JSON reply to answer it
// (r for its context).
func rawModernUpstream(t *testing.T, serve func(r *http.Request, m *rawCall, reply rawReply)) string {
	t.Helper()
	v, err := closedworld.Default()
	if err != nil {
		t.Fatalf("closed-world validator: %v (run `make schemas`)", err)
	}
	var mu sync.Mutex
	var bad []string // closed-world violations in what mcpx sent
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			w.WriteHeader(http.StatusMethodNotAllowed)
			return
		}
		body, _ := io.ReadAll(r.Body)
		if rev, err := checkToUpstream(v, "2026-07-28", body); err != nil {
			mu.Lock()
			bad = append(bad, fmt.Sprintf("%s: %v in %s", rev, err, body))
			mu.Unlock()
		}
		var m rawCall
		if json.Unmarshal(body, &m) != nil || m.ID == nil {
			w.WriteHeader(http.StatusAccepted)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		serve(r, &m, rawReply{w: w, id: m.ID})
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(func() {
		mu.Lock()
		defer mu.Unlock()
		for _, b := range bad {
			t.Errorf("mcpx sent the upstream a message that is not closed-world valid: %s", b)
		}
	})
	return srv.URL
}

// discoverResult is a 2026-07-28 server/discover result of server name
// with capabilities caps (a JSON object).
func discoverResult(name, caps string) string {
	return `{"resultType":"complete","supportedVersions":["2026-07-28"],"capabilities":` + caps + `,"ttlMs":0,"cacheScope":"private","_meta":{"io.modelcontextprotocol/serverInfo":{"name":"` + name + `","version":"1"}}}`
}

// toolsResult is a 2026-07-28 tools/list result of tools named names.
func toolsResult(names ...string) string {
	var tools []string
	for _, n := range names {
		tools = append(tools, `{"name":"`+n+`","inputSchema":{"type":"object"}}`)
	}
	return `{"resultType":"complete","ttlMs":0,"cacheScope":"private","tools":[` + strings.Join(tools, ",") + `]}`
}

// completeText is a complete tools/call result of one text block.
func completeText(s string) string {
	return `{"resultType":"complete","content":[{"type":"text","text":"` + s + `"}]}`
}

// askResult is an input_required result asking reqs (key, request
// pairs, the request as written) under requestState state, none if "".
func askResult(state string, reqs ...string) string {
	var kv []string
	for i := 0; i < len(reqs); i += 2 {
		kv = append(kv, `"`+reqs[i]+`":`+reqs[i+1])
	}
	st := ""
	if state != "" {
		st = `,"requestState":"` + state + `"`
	}
	return `{"resultType":"input_required","inputRequests":{` + strings.Join(kv, ",") + `}` + st + `}`
}

// serveUserNameAsks answers what the bridge 3 and bridge 4 upstreams
// share, and reports whether m was one of them: prompt greet, resource
// test://secret and tool ask each ask user_name under their own
// requestState (UPSTREAM-SECRET-greet, -read, -ask), asking again when the
// answer is missing, refusing -32602 a retry with another state; tool
// nostate asks user_name with no requestState and refuses a retry that
// carries one; and the prompt, resource and template lists.
func serveUserNameAsks(m *rawCall, reply rawReply) bool {
	state := m.state()
	// oneRound asks user_name under state st, and on the retry answers
	// done(name).
	oneRound := func(st string, done func(name string) string) {
		switch {
		case m.Params.RequestState == nil:
			reply.result(askResult(st, "user_name", askName))
		case state != st:
			reply.error(-32602, "the upstream got requestState "+state)
		case m.elicited("user_name", "name") == "":
			reply.result(askResult(st, "user_name", askName)) // missing: asked again
		default:
			reply.result(done(m.elicited("user_name", "name")))
		}
	}
	switch {
	case m.Method == "prompts/list":
		reply.result(`{"resultType":"complete","ttlMs":0,"cacheScope":"private","prompts":[{"name":"greet"}]}`)
	case m.Method == "resources/list":
		reply.result(`{"resultType":"complete","ttlMs":0,"cacheScope":"private","resources":[{"uri":"test://secret","name":"secret"}]}`)
	case m.Method == "resources/templates/list":
		reply.result(`{"resultType":"complete","ttlMs":0,"cacheScope":"private","resourceTemplates":[]}`)
	case m.Method == "tools/call" && m.Params.Name == "ask":
		oneRound(upSecret+"ask", func(n string) string { return completeText("Hello, " + n + "!") })
	case m.Method == "prompts/get" && m.Params.Name == "greet":
		oneRound(upSecret+"greet", func(n string) string {
			return `{"resultType":"complete","messages":[{"role":"user","content":{"type":"text","text":"Greet ` + n + `"}}]}`
		})
	case m.Method == "resources/read" && m.Params.URI == "test://secret":
		oneRound(upSecret+"read", func(n string) string {
			return `{"resultType":"complete","ttlMs":60000,"cacheScope":"public","contents":[{"uri":"test://secret","text":"secret of ` + n + `"}]}`
		})
	case m.Method == "tools/call" && m.Params.Name == "nostate":
		switch {
		case m.Params.RequestState != nil:
			reply.error(-32602, "the upstream got requestState "+state+", having given none")
		case m.elicited("user_name", "name") == "":
			reply.result(askResult("", "user_name", askName))
		default:
			reply.result(completeText("Hi " + m.elicited("user_name", "name")))
		}
	default:
		return false
	}
	return true
}

// goSDKTransport connects a Go SDK client to gw over tr ("http" or
// "stdio"), served pinned to rev.
func goSDKTransport(t *testing.T, gw *gateway.Gateway, tr, rev string) gosdk.Transport {
	t.Helper()
	if tr == "http" {
		url, hc := serveHTTP(t, gw, rev)
		return &gosdk.StreamableClientTransport{Endpoint: url, HTTPClient: hc, MaxRetries: -1}
	}
	r, w := serveStdio(t, gw, rev)
	return &gosdk.IOTransport{Reader: r, Writer: w}
}

// goSDKCallTexts calls each tool with no arguments on cs and checks its
// one text block is want.
func goSDKCallTexts(t *testing.T, cs *gosdk.ClientSession, wants map[string]string) {
	t.Helper()
	for tool, want := range wants {
		res, err := cs.CallTool(t.Context(), &gosdk.CallToolParams{Name: tool, Arguments: map[string]any{}})
		if err != nil {
			t.Fatalf("%s: %v", tool, err)
		}
		if len(res.Content) != 1 {
			t.Fatalf("%s: %d content blocks", tool, len(res.Content))
		}
		if tc, ok := res.Content[0].(*gosdk.TextContent); !ok || tc.Text != want {
			t.Errorf("%s: %#v, want %q", tool, res.Content[0], want)
		}
	}
}

// mcpGoClient is mcp-go's client, pinned to rev, connected to gw over tr
// ("http" or "stdio") and initialized as name, answering with a's
// elicitation, sampling and roots handlers.
func mcpGoClient(t *testing.T, gw *gateway.Gateway, tr, rev, name, version string, a *mcpGoAnswers) *client.Client {
	t.Helper()
	var mt transport.Interface
	if tr == "http" {
		url, hc := serveHTTP(t, gw, rev)
		h, err := transport.NewStreamableHTTP(url, transport.WithHTTPBasicClient(hc))
		if err != nil {
			t.Fatal(err)
		}
		mt = h
	} else {
		r, w := serveStdio(t, gw, rev)
		mt = transport.NewIO(r, w, nil)
	}
	cl := client.NewClient(mt, client.WithProtocolVersion(rev), client.WithElicitationHandler(a), client.WithSamplingHandler(a), client.WithRootsHandler(a))
	t.Cleanup(func() { cl.Close() })
	if err := cl.Start(t.Context()); err != nil {
		t.Fatalf("mcp-go Start: %v", err)
	}
	if _, err := cl.Initialize(t.Context(), mcpgo.InitializeRequest{Params: mcpgo.InitializeParams{
		ClientInfo: mcpgo.Implementation{Name: name, Version: version},
	}}); err != nil {
		t.Fatalf("mcp-go Initialize pinned to %s: %v", rev, err)
	}
	return cl
}

// goSDKText is the text of res's one text block, "" unless it has exactly
// one.
func goSDKText(res *gosdk.CallToolResult) string {
	if len(res.Content) == 1 {
		if tc, ok := res.Content[0].(*gosdk.TextContent); ok {
			return tc.Text
		}
	}
	return ""
}

// mcpGoText is goSDKText for an mcp-go result.
func mcpGoText(res *mcpgo.CallToolResult) string {
	if len(res.Content) == 1 {
		if tc, ok := res.Content[0].(mcpgo.TextContent); ok {
			return tc.Text
		}
	}
	return ""
}

// goSDKNamingClient is a Go SDK client (name, version) with an
// elicitation handler that accepts with {"name": name(message)}, a
// sampling handler that answers "sdk sampled" (model sdk-model) and the
// root file:///sdk-root; each handler counts its runs in asked ("elicit",
// "sample") under mu, as they run on the SDK's goroutines.
func goSDKNamingClient(name, version string, answer func(message string) string, asked map[string]int, mu *sync.Mutex) *gosdk.Client {
	cl := gosdk.NewClient(&gosdk.Implementation{Name: name, Version: version}, &gosdk.ClientOptions{
		ElicitationHandler: func(_ context.Context, r *gosdk.ElicitRequest) (*gosdk.ElicitResult, error) {
			mu.Lock()
			asked["elicit"]++
			mu.Unlock()
			return &gosdk.ElicitResult{Action: "accept", Content: map[string]any{"name": answer(r.Params.Message)}}, nil
		},
		CreateMessageHandler: goSDKSampler(asked, mu),
	})
	cl.AddRoots(&gosdk.Root{URI: "file:///sdk-root", Name: "sdk"})
	return cl
}

// goSDKSampler is a Go SDK sampling handler that answers "sdk sampled"
// (model sdk-model), counting its runs in asked["sample"] under mu.
func goSDKSampler(asked map[string]int, mu *sync.Mutex) func(context.Context, *gosdk.CreateMessageRequest) (*gosdk.CreateMessageResult, error) {
	return func(context.Context, *gosdk.CreateMessageRequest) (*gosdk.CreateMessageResult, error) {
		mu.Lock()
		asked["sample"]++
		mu.Unlock()
		return &gosdk.CreateMessageResult{Role: "assistant", Model: "sdk-model", Content: &gosdk.TextContent{Text: "sdk sampled"}}, nil
	}
}
