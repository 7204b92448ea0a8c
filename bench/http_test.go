package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpx-dev/mcpx/generated/mcp"
	"github.com/mcpx-dev/mcpx/runtime/catalog"
	"github.com/mcpx-dev/mcpx/runtime/edge"
	"github.com/mcpx-dev/mcpx/runtime/server"
	"github.com/mcpx-dev/mcpx/runtime/transport/streamhttp"
)

// The HTTP benchmark serves the same 50 tools from mcpx and from the
// official Go SDK's server, in one process, and drives both with the same
// raw HTTP requests (keep-alive, Concurrency workers): tools/list and
// tools/call, as a 2025-03-26 client (one initialize, then requests in its
// session) and as a 2026-07-28 client (stateless, _meta and Mcp-* headers).

// Concurrency is the number of client workers.
const Concurrency = 8

// mcpxServer serves the tools from mcpx. With cache false the namespace
// hides its Version, so the edge encodes every list answer again: the
// benchmark shows what the list cache buys.
func mcpxServer(cache bool) http.Handler {
	c := catalog.New()
	for _, t := range toolsList().Tools {
		c.AddTool(t, func(ctx context.Context, args json.RawMessage) (*mcp.CallToolResult, error) {
			return catalog.TextResult(string(args)), nil
		})
	}
	var ns server.Namespace = c
	if !cache {
		ns = struct{ server.Namespace }{c}
	}
	e := &edge.Edge{Server: &server.Server{NS: ns, Info: mcp.Implementation{Name: "mcpx", Version: "bench"}, TTLMs: 60000}}
	return streamhttp.New(e, streamhttp.Options{})
}

// sdkServer serves the tools from the Go SDK. Its stateful handler does not
// serve 2026-07-28, so a modern client gets its stateless handler: one
// handler each, where mcpx serves both eras from one.
func sdkServer(modern bool) http.Handler {
	s := sdk.NewServer(&sdk.Implementation{Name: "go-sdk", Version: "bench"}, nil)
	for _, t := range toolsList().Tools {
		s.AddTool(&sdk.Tool{Name: t.Name, Title: t.Title, Description: t.Description, InputSchema: t.InputSchema},
			func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
				return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: string(req.Params.Arguments)}}}, nil
			})
	}
	return sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return s }, &sdk.StreamableHTTPOptions{JSONResponse: true, Stateless: modern})
}

// session is what a client sends with each request.
type session struct {
	rev    string
	id     string // Mcp-Session-Id, legacy only
	modern bool
	url    string
	client *http.Client
}

const modernMeta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`

func (s *session) post(body, method, name string) ([]byte, error) {
	req, _ := http.NewRequest("POST", s.url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", s.rev)
	if s.id != "" {
		req.Header.Set("Mcp-Session-Id", s.id)
	}
	if s.modern {
		req.Header.Set("Mcp-Method", method)
		if name != "" {
			req.Header.Set("Mcp-Name", name)
		}
	}
	resp, err := s.client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != 200 && resp.StatusCode != 202 {
		return nil, fmt.Errorf("%s: HTTP %d: %s", method, resp.StatusCode, b)
	}
	if s.id == "" && !s.modern {
		s.id = resp.Header.Get("Mcp-Session-Id")
	}
	return b, nil
}

func connect(tb testing.TB, url, rev string) *session {
	return connectVia(tb, url, rev, &http.Transport{MaxIdleConnsPerHost: Concurrency * 2})
}

// connectVia is connect over rt.
func connectVia(tb testing.TB, url, rev string, rt http.RoundTripper) *session {
	s := &session{rev: rev, modern: rev == "2026-07-28", url: url, client: &http.Client{Transport: rt}}
	if !s.modern {
		if _, err := s.post(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"`+rev+`","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}`, "initialize", ""); err != nil {
			tb.Fatal(err)
		}
		if _, err := s.post(`{"jsonrpc":"2.0","method":"notifications/initialized"}`, "notifications/initialized", ""); err != nil {
			tb.Fatal(err)
		}
	}
	return s
}

func requests(modern bool) map[string][3]string { // name -> body, method, Mcp-Name
	meta := ""
	if modern {
		meta = modernMeta + ","
	}
	return map[string][3]string{
		"tools_list": {`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{` + strings.TrimSuffix(meta, ",") + `}}`, "tools/list", ""},
		"tools_call": {`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{` + meta + `"name":"` + toolsList().Tools[0].Name + `","arguments":{"query":"weather in Paris"}}}`, "tools/call", toolsList().Tools[0].Name},
	}
}

// BenchmarkHTTP reports requests per second (req/s) for each server side
// by side; read the ratio mcpx/go-sdk from one run.
func BenchmarkHTTP(b *testing.B) {
	urls := map[string]string{}
	for name, h := range map[string]http.Handler{"mcpx": mcpxServer(true), "mcpx-nocache": mcpxServer(false), "gosdk/2025-03-26": sdkServer(false), "gosdk/2026-07-28": sdkServer(true)} {
		ts := httptest.NewServer(h)
		b.Cleanup(ts.Close)
		urls[name] = ts.URL + "/mcp"
	}
	for _, req := range []string{"tools_list", "tools_call"} {
		for _, rev := range []string{"2025-03-26", "2026-07-28"} {
			for _, server := range []string{"mcpx", "mcpx-nocache", "gosdk"} {
				if server == "mcpx-nocache" && req != "tools_list" {
					continue // only lists are cached
				}
				url := urls[server]
				if server == "gosdk" {
					url = urls[server+"/"+rev]
				}
				b.Run(fmt.Sprintf("%s/%s/%s", req, rev, server), func(b *testing.B) {
					sess := connect(b, url, rev)
					drive(b, sess, requests(sess.modern)[req])
				})
			}
		}
	}
}

// TestHTTPBenchmarkServesBoth checks that both servers answer every
// benchmarked request with a result (not an error), so the benchmark
// compares real work.
func TestHTTPBenchmarkServesBoth(t *testing.T) {
	for _, rev := range []string{"2025-03-26", "2026-07-28"} {
		for name, h := range map[string]http.Handler{"mcpx": mcpxServer(true), "mcpx-nocache": mcpxServer(false), "gosdk": sdkServer(rev == "2026-07-28")} {
			ts := httptest.NewServer(h)
			defer ts.Close()
			sess := connect(t, ts.URL+"/mcp", rev)
			for req, r := range requests(sess.modern) {
				body, err := sess.post(r[0], r[1], r[2])
				if err != nil {
					t.Fatalf("%s %s %s: %v", name, rev, req, err)
				}
				if !bytes.Contains(body, []byte(`"result"`)) || bytes.Contains(body, []byte(`"error"`)) {
					t.Errorf("%s %s %s: %.300s", name, rev, req, body)
				}
				if req == "tools_list" && bytes.Count(body, []byte(`"inputSchema"`)) != 50 {
					t.Errorf("%s %s tools/list: want 50 tools", name, rev)
				}
			}
		}
	}
}

// drive sends r (body, method, Mcp-Name) b.N times from Concurrency
// workers in sess, after one warm-up, and reports req/s.
func drive(b *testing.B, sess *session, r [3]string) {
	if _, err := sess.post(r[0], r[1], r[2]); err != nil {
		b.Fatal(err)
	}
	var n atomic.Int64
	var failed atomic.Value
	b.ResetTimer()
	var wg sync.WaitGroup
	for range Concurrency {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := n.Add(1); i <= int64(b.N); i = n.Add(1) {
				// Ids must not repeat among requests in flight in a session.
				body := strings.Replace(r[0], `"id":1,`, `"id":`+strconv.FormatInt(i+10, 10)+`,`, 1)
				if _, err := sess.post(body, r[1], r[2]); err != nil {
					failed.Store(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	b.StopTimer()
	if err, _ := failed.Load().(error); err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "req/s")
}
