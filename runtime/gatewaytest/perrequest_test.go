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

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpx-dev/mcpx/generated/mcp"
	"github.com/mcpx-dev/mcpx/runtime/catalog"
	"github.com/mcpx-dev/mcpx/runtime/edge"
	"github.com/mcpx-dev/mcpx/runtime/gateway"
	"github.com/mcpx-dev/mcpx/runtime/server"
	"github.com/mcpx-dev/mcpx/runtime/transport/streamhttp"
)

// What belongs to one request through the gateway, with an upstream of
// each era (mcpx's own stack, reached at 2026-07-28, and the Go SDK's
// server, legacy): its progress goes on its own stream, its cancellation
// reaches the upstream call, and log messages only where the client
// asked for them, at or above its level. Each upstream has the same three
// tools: progress (two notifications, then its result), log (one message
// at debug, info and error, then its result) and wait (until cancelled,
// which it reports).

// perRequestUpstream is one upstream of the tests and what it saw.
type perRequestUpstream struct {
	era       string
	url       string
	cancelled chan string // the wait calls that saw their cancellation, by their tag
	started   chan string // the wait calls that began
}

func (u *perRequestUpstream) saw(ch chan string, tag string) {
	select {
	case ch <- tag:
	default:
	}
}

// modernPerRequest is mcpx's own stack as an upstream: catalog, edge and
// Streamable HTTP, which mcpx reaches at 2026-07-28.
func modernPerRequest(t *testing.T) *perRequestUpstream {
	u := &perRequestUpstream{era: "modern", cancelled: make(chan string, 8), started: make(chan string, 8)}
	c := catalog.New()
	c.SetLogging(true)
	obj := json.RawMessage(`{"type":"object"}`)
	c.AddTool(mcp.Tool{Name: "progress", InputSchema: obj}, func(ctx context.Context, _ json.RawMessage) (*mcp.CallToolResult, error) {
		server.Progress(ctx, 1, 2, "half")
		time.Sleep(20 * time.Millisecond)
		server.Progress(ctx, 2, 2, "done")
		return catalog.TextResult("progressed"), nil
	})
	c.AddTool(mcp.Tool{Name: "log", InputSchema: obj}, func(ctx context.Context, _ json.RawMessage) (*mcp.CallToolResult, error) {
		for _, l := range []mcp.LoggingLevel{mcp.LoggingLevelDebug, mcp.LoggingLevelInfo, mcp.LoggingLevelError} {
			server.Log(ctx, l, "up", "at "+string(l))
		}
		return catalog.TextResult("logged"), nil
	})
	c.AddTool(mcp.Tool{Name: "wait", InputSchema: obj}, func(ctx context.Context, args json.RawMessage) (*mcp.CallToolResult, error) {
		var a struct{ Tag string }
		json.Unmarshal(args, &a)
		u.saw(u.started, a.Tag)
		<-ctx.Done()
		u.saw(u.cancelled, a.Tag)
		return nil, ctx.Err()
	})
	e := &edge.Edge{Server: &server.Server{NS: c, Info: mcp.Implementation{Name: "modern-up", Version: "1"}}}
	h := streamhttp.New(e, streamhttp.Options{})
	srv := httptest.NewServer(h)
	t.Cleanup(func() { h.Close(); srv.Close() })
	u.url = srv.URL
	return u
}

// legacyPerRequest is the Go SDK's server, pinned to 2025-11-25.
func legacyPerRequest(t *testing.T) *perRequestUpstream {
	u := &perRequestUpstream{era: "legacy", cancelled: make(chan string, 8), started: make(chan string, 8)}
	s := sdk.NewServer(&sdk.Implementation{Name: "legacy-up", Version: "1"}, &sdk.ServerOptions{SupportedProtocolVersions: []string{"2025-11-25"}, HasTools: true})
	type noArgs struct{}
	sdk.AddTool(s, &sdk.Tool{Name: "progress"}, func(ctx context.Context, req *sdk.CallToolRequest, _ noArgs) (*sdk.CallToolResult, any, error) {
		tok := req.Params.GetProgressToken()
		req.Session.NotifyProgress(ctx, &sdk.ProgressNotificationParams{ProgressToken: tok, Progress: 1, Total: 2, Message: "half"})
		time.Sleep(20 * time.Millisecond)
		req.Session.NotifyProgress(ctx, &sdk.ProgressNotificationParams{ProgressToken: tok, Progress: 2, Total: 2, Message: "done"})
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "progressed"}}}, nil, nil
	})
	sdk.AddTool(s, &sdk.Tool{Name: "log"}, func(ctx context.Context, req *sdk.CallToolRequest, _ noArgs) (*sdk.CallToolResult, any, error) {
		for _, l := range []sdk.LoggingLevel{"debug", "info", "error"} {
			req.Session.Log(ctx, &sdk.LoggingMessageParams{Level: l, Logger: "up", Data: "at " + string(l)})
		}
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "logged"}}}, nil, nil
	})
	type tagArgs struct {
		Tag string `json:"tag"`
	}
	sdk.AddTool(s, &sdk.Tool{Name: "wait"}, func(ctx context.Context, _ *sdk.CallToolRequest, a tagArgs) (*sdk.CallToolResult, any, error) {
		u.saw(u.started, a.Tag)
		<-ctx.Done()
		u.saw(u.cancelled, a.Tag)
		return nil, nil, ctx.Err()
	})
	srv := httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return s }, nil))
	t.Cleanup(srv.Close)
	u.url = srv.URL
	return u
}

// perRequestEras runs f with a gateway fronting an upstream of each era
// as namespace "up".
func perRequestEras(t *testing.T, f func(t *testing.T, gw *gateway.Gateway, u *perRequestUpstream)) {
	for _, mk := range []func(*testing.T) *perRequestUpstream{modernPerRequest, legacyPerRequest} {
		u := mk(t)
		t.Run(u.era+" upstream", func(t *testing.T) {
			gw, _ := readyGateway(t, "perrequest.json", `{"mcpServers": {"up": {"url": "`+u.url+`"}}}`, "", nil)
			f(t, gw, u)
		})
	}
}

const perRequestMeta = `"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}`

// modernCall posts a 2026-07-28 tools/call with the extra _meta members
// meta (a JSON fragment, may be empty) and returns the response body.
func modernCall(ctx context.Context, hc *http.Client, endpoint string, id int, tool, args, meta string) (*http.Response, error) {
	m := perRequestMeta
	if meta != "" {
		m += "," + meta
	}
	body := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%q,"arguments":%s,"_meta":{%s}}}`, id, tool, args, m)
	return postJSON(ctx, hc, endpoint, map[string]string{"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": tool}, body)
}

// sseMessages are the JSON-RPC messages of an SSE (or JSON) body.
func sseMessages(body []byte) []map[string]any {
	var out []map[string]any
	for _, line := range strings.Split(string(body), "\n") {
		data, ok := strings.CutPrefix(line, "data: ")
		if !ok {
			if strings.HasPrefix(line, "{") {
				data = line
			} else {
				continue
			}
		}
		var m map[string]any
		if json.Unmarshal([]byte(data), &m) == nil {
			out = append(out, m)
		}
	}
	return out
}

// TestProgressOnItsOwnStream: two calls at once, with progress tokens
// "A" and "B": each response stream carries its own token's progress,
// twice, and then its own result, never the other's.
func TestProgressOnItsOwnStream(t *testing.T) {
	perRequestEras(t, func(t *testing.T, gw *gateway.Gateway, u *perRequestUpstream) {
		endpoint, hc := serveHTTP(t, gw, "2026-07-28")
		var wg sync.WaitGroup
		for i, tok := range []string{"A", "B"} {
			wg.Go(func() {
				resp, err := modernCall(t.Context(), hc, endpoint, i+1, "up__progress", `{}`, `"progressToken":"`+tok+`"`)
				if err != nil {
					t.Error(err)
					return
				}
				body, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				var progress []string
				var result bool
				for _, m := range sseMessages(body) {
					if m["method"] == "notifications/progress" {
						p, _ := m["params"].(map[string]any)
						progress = append(progress, fmt.Sprintf("%v %v", p["progressToken"], p["progress"]))
					}
					if m["result"] != nil {
						result = fmt.Sprint(m["id"]) == fmt.Sprint(i+1)
					}
				}
				if want := fmt.Sprint([]string{tok + " 1", tok + " 2"}); fmt.Sprint(progress) != want || !result {
					t.Errorf("token %s: progress %v (want %s), its result %v:\n%s", tok, progress, want, result, body)
				}
			})
		}
		wg.Wait()
	})
}

// TestCancelReachesTheUpstream: a 2026-07-28 client closing its HTTP
// stream, and a legacy client's notifications/cancelled over stdio, each
// cancel the upstream call.
func TestCancelReachesTheUpstream(t *testing.T) {
	perRequestEras(t, func(t *testing.T, gw *gateway.Gateway, u *perRequestUpstream) {
		waitFor := func(ch chan string, tag, what string) {
			t.Helper()
			select {
			case got := <-ch:
				if got != tag {
					t.Fatalf("%s: the upstream saw %q, want %q", what, got, tag)
				}
			case <-time.After(10 * time.Second):
				t.Fatalf("%s: not seen by the upstream within 10 s", what)
			}
		}
		t.Run("2026-07-28 client closes its stream", func(t *testing.T) {
			endpoint, hc := serveHTTP(t, gw, "2026-07-28")
			ctx, cancel := context.WithCancel(t.Context())
			done := make(chan struct{})
			go func() {
				defer close(done)
				if resp, err := modernCall(ctx, hc, endpoint, 1, "up__wait", `{"tag":"http"}`, ""); err == nil {
					io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
				}
			}()
			waitFor(u.started, "http", "the call")
			cancel()
			waitFor(u.cancelled, "http", "the cancellation")
			<-done
		})
		t.Run("legacy client's notifications/cancelled", func(t *testing.T) {
			r, w := serveStdio(t, gw, "2025-06-18")
			defer r.Close()
			defer w.Close()
			go io.Copy(io.Discard, r)
			fmt.Fprintln(w, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
			fmt.Fprintln(w, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
			fmt.Fprintln(w, `{"jsonrpc":"2.0","id":"c","method":"tools/call","params":{"name":"up__wait","arguments":{"tag":"stdio"}}}`)
			waitFor(u.started, "stdio", "the call")
			fmt.Fprintln(w, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"c"}}`)
			waitFor(u.cancelled, "stdio", "the cancellation")
		})
	})
}

// TestLogsOnlyWhereAsked: a 2026-07-28 call with logLevel "info" gets
// the upstream's info and error messages (not debug) on its stream, one
// without logLevel gets none; a legacy session that set "error" gets
// only the error message.
func TestLogsOnlyWhereAsked(t *testing.T) {
	perRequestEras(t, func(t *testing.T, gw *gateway.Gateway, u *perRequestUpstream) {
		levels := func(body []byte) []string {
			var out []string
			for _, m := range sseMessages(body) {
				if m["method"] == "notifications/message" {
					p, _ := m["params"].(map[string]any)
					out = append(out, fmt.Sprint(p["level"]))
				}
			}
			return out
		}
		endpoint, hc := serveHTTP(t, gw, "2026-07-28")
		for _, tc := range []struct{ meta, want string }{
			{`"io.modelcontextprotocol/logLevel":"info"`, "[info error]"},
			{"", "[]"},
		} {
			resp, err := modernCall(t.Context(), hc, endpoint, 1, "up__log", `{}`, tc.meta)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if got := fmt.Sprint(levels(body)); got != tc.want || !strings.Contains(string(body), "logged") {
				t.Errorf("with _meta %q: log levels %s, want %s:\n%s", tc.meta, got, tc.want, body)
			}
		}

		r, w := serveStdio(t, gw, "2025-06-18")
		defer r.Close()
		defer w.Close()
		lines := bufio.NewScanner(r)
		lines.Buffer(nil, 1<<20)
		fmt.Fprintln(w, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
		fmt.Fprintln(w, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
		fmt.Fprintln(w, `{"jsonrpc":"2.0","id":1,"method":"logging/setLevel","params":{"level":"error"}}`)
		var all []byte
		read := func(id string) {
			for lines.Scan() {
				all = append(append(all, lines.Bytes()...), '\n')
				if strings.Contains(lines.Text(), `"id":`+id+`,`) {
					return
				}
			}
			t.Fatalf("stdio ended before the answer to %s:\n%s", id, all)
		}
		// Requests run side by side on stdio: the level is set once
		// setLevel is answered, not when it is sent.
		read("1")
		fmt.Fprintln(w, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"up__log","arguments":{}}}`)
		read("2")
		if got := fmt.Sprint(levels(all)); got != "[error]" {
			t.Errorf("legacy session at level error: log levels %s:\n%s", got, all)
		}
	})
}
