package bench

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpx-dev/mcpx/generated/mcp"
	"github.com/mcpx-dev/mcpx/runtime/demo"
	"github.com/mcpx-dev/mcpx/runtime/edge"
	"github.com/mcpx-dev/mcpx/runtime/server"
	"github.com/mcpx-dev/mcpx/runtime/transport/streamhttp"
)

// The input round benchmark measures one elicitation question asked
// during tools/call, answered, and the call's result: the whole round,
// from the client's first request to the tool's text. The tool is the demo
// namespace's introduce (asks "What is your name?", then greets), served by
// mcpx's runtime at 2026-07-28, so it asks through input_required. Paths,
// in the same run:
//
//   - direct: a 2026-07-28 client calls the upstream; it answers
//     input_required with a requestState of its own; the client retries
//     with inputResponses and that state and gets the greeting. Two HTTP
//     requests, no mcpx in between.
//   - bridge4: the same client and upstream through the gateway (config,
//     host.Gateway, streamhttp: gatewayTo); mcpx seals the upstream's
//     state in its own requestState and opens it on the retry.
//   - bridge3: a 2025-11-25 client (session, elicitation declared) through
//     the gateway: the call's response turns into an SSE stream carrying
//     mcpx's elicitation/create, the client POSTs its answer (a second
//     HTTP request, 202), mcpx retries the upstream and the result ends
//     the stream.
//   - plain-direct and plain-gateway: two tools/call of the demo's echo,
//     no question, directly and through the same gateway: what two
//     forwarded requests cost, so that bridge4 minus plain-gateway is what
//     the round itself (sealing, opening, the input_required result) adds.
//   - direct-legacy and bridge2: the same question from a legacy upstream
//     (the Go SDK's server, stateful, 2025-11-25, asking with
//     ServerSession.Elicit): answered directly by a 2025-11-25 client on
//     the call's SSE stream, and through mcpx by a 2026-07-28 client, to
//     which bridge 2 puts the question as an input_required round while
//     the upstream's call stays parked in mcpx until the retry.
//
// Everything runs in this process over loopback sockets (httptest), as in
// BenchmarkGateway's oneproc topology: a legacy round needs the call's
// stream to stay open while the answer arrives on a second request, which
// the in-memory RoundTripper of BenchmarkGatewayWork cannot do, and one
// topology for every path keeps them comparable. So allocs/op and B/op
// count every party (client, gateway, upstream): gateway minus direct is
// what mcpx adds. The servers run under pprof labels (role=gateway,
// role=upstream) as in BenchmarkGateway.

const (
	introduceAnswer = `{"action":"accept","content":{"name":"Ada"}}`
	introduceText   = "Hello, Ada! Nice to meet you."
	// A 2026-07-28 client that can be asked (elicitation form).
	askingMeta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{"form":{}}}}`
)

// introduceUpstream is mcpx's runtime serving the demo namespace.
func introduceUpstream() http.Handler {
	return streamhttp.New(&edge.Edge{Server: &server.Server{NS: demo.New(), Info: mcp.Implementation{Name: "upstream", Version: "bench"}}}, streamhttp.Options{})
}

// sdkIntroduceUpstream is the Go SDK's server with the same tool, asking
// the legacy way (elicitation/create on the call's stream). SSE answers,
// so that the request can come on the call's own stream.
func sdkIntroduceUpstream() http.Handler {
	s := sdk.NewServer(&sdk.Implementation{Name: "go-sdk", Version: "bench"}, nil)
	s.AddTool(&sdk.Tool{Name: "introduce", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			r, err := req.Session.Elicit(ctx, &sdk.ElicitParams{Message: "What is your name?",
				RequestedSchema: json.RawMessage(`{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}`)})
			if err != nil {
				return nil, err
			}
			name, _ := r.Content["name"].(string)
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "Hello, " + name + "! Nice to meet you."}}}, nil
		})
	return sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return s }, nil)
}

// inputPath is one way to the asking tool.
type inputPath struct {
	name, url, tool, rev string
	// plain: the round is two tools/call of the demo's echo instead, no
	// question: what two forwarded requests cost, to set the round against.
	plain bool
}

// inputPaths starts both upstreams and mcpx in front of each.
func inputPaths(tb testing.TB) []inputPath {
	serve := func(role string, h http.Handler) string {
		s := httptest.NewServer(labeled(role, h))
		tb.Cleanup(s.Close)
		return s.URL + "/mcp"
	}
	up := serve("upstream", introduceUpstream())
	gw, stop := gatewayTo(tb, up)
	tb.Cleanup(stop)
	gwURL := serve("gateway", gw)
	legacy := serve("upstream", sdkIntroduceUpstream())
	gw2, stop2 := gatewayTo(tb, legacy)
	tb.Cleanup(stop2)
	gw2URL := serve("gateway", gw2)
	return []inputPath{
		{name: "direct", url: up, tool: "introduce", rev: "2026-07-28"},
		{name: "bridge4", url: gwURL, tool: "up__introduce", rev: "2026-07-28"},
		{name: "bridge3", url: gwURL, tool: "up__introduce", rev: "2025-11-25"},
		{name: "plain-direct", url: up, tool: "echo", rev: "2026-07-28", plain: true},
		{name: "plain-gateway", url: gwURL, tool: "up__echo", rev: "2026-07-28", plain: true},
		{name: "direct-legacy", url: legacy, tool: "introduce", rev: "2025-11-25"},
		{name: "bridge2", url: gw2URL, tool: "up__introduce", rev: "2026-07-28"},
	}
}

type rpcError struct {
	Code    int64  `json:"code"`
	Message string `json:"message"`
}

func (e *rpcError) Error() string { return fmt.Sprintf("error %d: %s", e.Code, e.Message) }

// frame is a JSON-RPC message as the client reads it.
type frame struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Result *struct {
		ResultType    string                     `json:"resultType"`
		InputRequests map[string]json.RawMessage `json:"inputRequests"`
		RequestState  string                     `json:"requestState"`
		Content       []struct {
			Text string `json:"text"`
		} `json:"content"`
		IsError bool `json:"isError"`
	} `json:"result"`
	Error *rpcError `json:"error"`
}

// inputClient makes rounds of one path; connected once (a session for a
// legacy client), reused for every round.
type inputClient struct {
	p  inputPath
	s  *session
	id int64
}

func newInputClient(tb testing.TB, p inputPath) *inputClient {
	s := &session{rev: p.rev, modern: p.rev == "2026-07-28", url: p.url, client: &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4}}}
	if !s.modern {
		if _, err := s.post(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"`+p.rev+`","capabilities":{"elicitation":{"form":{}}},"clientInfo":{"name":"bench","version":"1"}}}`, "initialize", ""); err != nil {
			tb.Fatal(err)
		}
		if _, err := s.post(`{"jsonrpc":"2.0","method":"notifications/initialized"}`, "notifications/initialized", ""); err != nil {
			tb.Fatal(err)
		}
	}
	return &inputClient{p: p, s: s}
}

// round calls the tool, answers its one question and returns the tool's
// text, or an error (a JSON-RPC error as *rpcError).
func (c *inputClient) round() (string, error) {
	if c.p.plain {
		return c.plainRound()
	}
	if c.s.modern {
		return c.modernRound()
	}
	return c.legacyRound()
}

func (c *inputClient) call(extra string) (frame, error) {
	c.id++
	meta := ""
	if c.s.modern {
		meta = askingMeta + ","
	}
	body := `{"jsonrpc":"2.0","id":` + strconv.FormatInt(c.id, 10) + `,"method":"tools/call","params":{` + meta + `"name":"` + c.p.tool + `"` + args(extra) + `}}`
	b, err := c.s.post(body, "tools/call", c.p.tool)
	if err != nil {
		return frame{}, err
	}
	if bytes.HasPrefix(b, []byte("event:")) || bytes.HasPrefix(b, []byte("data:")) || bytes.HasPrefix(b, []byte("id:")) {
		b = lastData(b) // an SSE answer: the result is the last message
	}
	var f frame
	if err := json.Unmarshal(b, &f); err != nil {
		return f, fmt.Errorf("%v in %.200s", err, b)
	}
	if f.Error != nil {
		return f, f.Error
	}
	if f.Result == nil {
		return f, fmt.Errorf("no result in %.200s", b)
	}
	return f, nil
}

// args is extra with empty arguments unless it has its own.
func args(extra string) string {
	if strings.HasPrefix(extra, `,"arguments":`) {
		return extra
	}
	return `,"arguments":{}` + extra
}

func lastData(b []byte) []byte {
	var last []byte
	for line := range bytes.Lines(b) {
		if d, ok := bytes.CutPrefix(bytes.TrimRight(line, "\r\n"), []byte("data:")); ok {
			last = bytes.TrimSpace(d)
		}
	}
	return last
}

func (c *inputClient) modernRound() (string, error) {
	f, err := c.call("")
	if err != nil {
		return "", err
	}
	if f.Result.ResultType != "input_required" || len(f.Result.InputRequests) != 1 {
		return "", fmt.Errorf("want one input request, got %q with %d", f.Result.ResultType, len(f.Result.InputRequests))
	}
	var key string
	for k, q := range f.Result.InputRequests {
		if !bytes.Contains(q, []byte(`"elicitation/create"`)) {
			return "", fmt.Errorf("want an elicitation, got %s", q)
		}
		key = k
	}
	state, _ := json.Marshal(f.Result.RequestState)
	f, err = c.call(`,"inputResponses":{"` + key + `":` + introduceAnswer + `},"requestState":` + string(state))
	if err != nil {
		return "", err
	}
	return toolText(f)
}

// plainRound calls echo twice, with "Hello, Ada! Nice to meet you." as
// the text, and returns the second answer's text.
func (c *inputClient) plainRound() (text string, err error) {
	for range 2 {
		f, err := c.call(`,"arguments":{"text":"` + introduceText + `"}`)
		if err != nil {
			return "", err
		}
		if text, err = toolText(f); err != nil {
			return "", err
		}
	}
	return text, nil
}

func toolText(f frame) (string, error) {
	if f.Result.ResultType == "input_required" || f.Result.IsError || len(f.Result.Content) != 1 {
		return "", fmt.Errorf("not the tool's answer: %+v", *f.Result)
	}
	return f.Result.Content[0].Text, nil
}

// legacyRound: the call's answer is an SSE stream with the question, the
// answer is POSTed on its own request, then the stream ends with the
// result.
func (c *inputClient) legacyRound() (string, error) {
	c.id++
	body := `{"jsonrpc":"2.0","id":` + strconv.FormatInt(c.id, 10) + `,"method":"tools/call","params":{"name":"` + c.p.tool + `","arguments":{}}}`
	req, _ := http.NewRequest("POST", c.s.url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", c.s.rev)
	req.Header.Set("Mcp-Session-Id", c.s.id)
	resp, err := c.s.client.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		b, _ := io.ReadAll(resp.Body)
		return "", fmt.Errorf("tools/call: HTTP %d: %s", resp.StatusCode, b)
	}
	asked := 0
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		d, ok := strings.CutPrefix(sc.Text(), "data:")
		if !ok || strings.TrimSpace(d) == "" {
			continue
		}
		var f frame
		if err := json.Unmarshal([]byte(d), &f); err != nil {
			return "", fmt.Errorf("%v in %.200s", err, d)
		}
		switch {
		case f.Method == "elicitation/create" && len(f.ID) > 0:
			asked++
			if _, err := c.s.post(`{"jsonrpc":"2.0","id":`+string(f.ID)+`,"result":`+introduceAnswer+`}`, "", ""); err != nil {
				return "", err
			}
		case f.Method != "":
			// a notification: not part of the round
		case f.Error != nil:
			return "", f.Error
		case f.Result != nil:
			if asked != 1 {
				return "", fmt.Errorf("the client was asked %d times, want once", asked)
			}
			return toolText(f)
		}
	}
	return "", fmt.Errorf("the stream ended without a result (%v)", sc.Err())
}

// BenchmarkInputRound reports, per round (one question, two HTTP requests
// and the result), ns/op, B/op and allocs/op of every party together. The
// added cost per round is bridgeN minus its direct baseline, same run.
func BenchmarkInputRound(b *testing.B) {
	for _, p := range inputPaths(b) {
		b.Run(p.name, func(b *testing.B) {
			c := newInputClient(b, p)
			if _, err := c.round(); err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				if _, err := c.round(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestInputRoundBenchmarkAnswers checks that every path of
// BenchmarkInputRound completes the round with the tool's greeting, so the
// benchmark cannot be measuring an error; twice, as the benchmark reuses
// its client.
func TestInputRoundBenchmarkAnswers(t *testing.T) {
	for _, p := range inputPaths(t) {
		t.Run(p.name, func(t *testing.T) {
			c := newInputClient(t, p)
			for i := range 2 {
				text, err := c.round()
				if err != nil {
					t.Fatalf("round %d: %v", i+1, err)
				}
				if text != introduceText {
					t.Fatalf("round %d: %q, want %q", i+1, text, introduceText)
				}
			}
		})
	}
}
