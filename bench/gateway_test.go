package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpx-dev/mcpx/generated/mcp"
	"github.com/mcpx-dev/mcpx/runtime/catalog"
	"github.com/mcpx-dev/mcpx/runtime/config"
	"github.com/mcpx-dev/mcpx/runtime/edge"
	"github.com/mcpx-dev/mcpx/runtime/host"
	"github.com/mcpx-dev/mcpx/runtime/server"
	"github.com/mcpx-dev/mcpx/runtime/transport/streamhttp"
)

// The gateway benchmark measures what mcpx adds in front of an upstream:
// tools/call of an echo tool sent to a Go upstream directly, and the same
// call sent through mcpx (HTTP in, HTTP out to the same upstream), at
// concurrency 1 and 32, in the same run. It reports p50 and p99 latency and
// requests per second; the overhead is the difference.

func echoUpstream() http.Handler {
	c := catalog.New()
	c.AddTool(mcp.Tool{Name: "echo", InputSchema: json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"}}}`)},
		func(_ context.Context, args json.RawMessage) (*mcp.CallToolResult, error) {
			return catalog.TextResult(string(args)), nil
		})
	return streamhttp.New(&edge.Edge{Server: &server.Server{NS: c, Info: mcp.Implementation{Name: "upstream", Version: "bench"}}}, streamhttp.Options{})
}

func gatewayTo(tb testing.TB, upstreamURL string) (http.Handler, func()) {
	cfg, err := config.Parse("bench.json", []byte(`{"mcpServers":{"up":{"url":"`+upstreamURL+`"}}}`), nil)
	if err != nil {
		tb.Fatal(err)
	}
	g, err := host.Gateway(context.Background(), cfg, mcp.Implementation{Name: "mcpx", Version: "bench"}, discardLog())
	if err != nil {
		tb.Fatal(err)
	}
	e := &edge.Edge{Server: &server.Server{NS: g, Info: mcp.Implementation{Name: "mcpx", Version: "bench"}}, Log: discardLog()}
	return streamhttp.New(e, streamhttp.Options{Logger: discardLog()}), func() { g.Close() }
}

// callEcho is a 2026-07-28 tools/call of tool with a fresh id.
func callEcho(s *session, tool string, id int64) error {
	body := `{"jsonrpc":"2.0","id":` + strconv.FormatInt(id, 10) + `,"method":"tools/call","params":{` + modernMeta + `,"name":"` + tool + `","arguments":{"text":"hello"}}}`
	b, err := s.post(body, "tools/call", tool)
	if err != nil {
		return err
	}
	if !strings.Contains(string(b), `\"hello\"`) {
		return fmt.Errorf("unexpected answer %s", b)
	}
	return nil
}

func BenchmarkGateway(b *testing.B) {
	up := httptest.NewServer(echoUpstream())
	defer up.Close()
	gw, stop := gatewayTo(b, up.URL+"/mcp")
	defer stop()
	gws := httptest.NewServer(gw)
	defer gws.Close()
	targets := []struct{ name, url, tool string }{{"direct", up.URL + "/mcp", "echo"}, {"gateway", gws.URL + "/mcp", "up__echo"}}
	for _, conc := range []int{1, 32} {
		for _, tg := range targets {
			b.Run(fmt.Sprintf("c%d/%s", conc, tg.name), func(b *testing.B) {
				s := connect(b, tg.url, "2026-07-28")
				s.client.Transport.(*http.Transport).MaxIdleConnsPerHost = conc * 2
				if err := callEcho(s, tg.tool, 1); err != nil {
					b.Fatal(err)
				}
				lat := make([]time.Duration, b.N)
				var n atomic.Int64
				var failed atomic.Value
				var wg sync.WaitGroup
				b.ResetTimer()
				for range conc {
					wg.Add(1)
					go func() {
						defer wg.Done()
						for i := n.Add(1); i <= int64(b.N); i = n.Add(1) {
							start := time.Now()
							if err := callEcho(s, tg.tool, i+1); err != nil {
								failed.Store(err)
								return
							}
							lat[i-1] = time.Since(start)
						}
					}()
				}
				wg.Wait()
				b.StopTimer()
				if err, _ := failed.Load().(error); err != nil {
					b.Fatal(err)
				}
				slices.Sort(lat)
				b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
				b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
				b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "req/s")
			})
		}
	}
}

// TestGatewayBenchmarkCallsThrough checks that the benchmarked call really
// goes through the gateway to the upstream and back.
func TestGatewayBenchmarkCallsThrough(t *testing.T) {
	up := httptest.NewServer(echoUpstream())
	defer up.Close()
	gw, stop := gatewayTo(t, up.URL+"/mcp")
	defer stop()
	gws := httptest.NewServer(gw)
	defer gws.Close()
	if err := callEcho(connect(t, gws.URL+"/mcp", "2026-07-28"), "up__echo", 1); err != nil {
		t.Fatal(err)
	}
}

func discardLog() *slog.Logger { return slog.New(slog.DiscardHandler) }
