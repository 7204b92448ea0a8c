package bench

import (
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/mcpx-dev/mcpx/generated/mcp"
	"github.com/mcpx-dev/mcpx/runtime/edge"
	"github.com/mcpx-dev/mcpx/runtime/gateway"
	"github.com/mcpx-dev/mcpx/runtime/metrics"
	"github.com/mcpx-dev/mcpx/runtime/server"
	"github.com/mcpx-dev/mcpx/runtime/transport/streamhttp"
	"github.com/mcpx-dev/mcpx/runtime/upstream"
)

// BenchmarkMetrics is BenchmarkGatewayWork's in-memory gateway (the mcpx
// upstream, the harshest ratio) with metrics off and on, in the same run:
// on, every request and upstream call is observed (runtime/metrics, as
// `mcpx serve --admin` has it), the client's bytes counted, and mcpx's
// log is a real text handler at info (to io.Discard), as in production.
// At concurrency 32 the goroutines share the machine's cores and every
// counter: what contention the metrics add shows there.
func BenchmarkMetrics(b *testing.B) {
	u := gatewayUpstreams[0]
	for _, conc := range []int{1, 32} {
		for _, on := range []bool{false, true} {
			rt, _ := metricsPath(b, u, on)
			name := map[bool]string{false: "off", true: "on"}[on]
			b.Run(fmt.Sprintf("c%d/%s", conc, name), func(b *testing.B) {
				s := connectVia(b, "http://127.0.0.1/mcp", u.rev, rt)
				b.ReportAllocs()
				var n atomic.Int64
				var failed atomic.Value
				var wg sync.WaitGroup
				cpu := selfCPU()
				b.ResetTimer()
				for range conc {
					wg.Add(1)
					go func() {
						defer wg.Done()
						for i := n.Add(1); i <= int64(b.N); i = n.Add(1) {
							if err := callEcho(s, "up__echo", i); err != nil {
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
				// The process's CPU time per call: what the two cores give
				// the gateway (and the in-memory client and upstream), less
				// moved than wall time by the other processes on the machine.
				b.ReportMetric(float64((selfCPU()-cpu).Microseconds())/float64(b.N), "cpu-µs/op")
			})
		}
	}
}

// metricsPath is mcpx in front of u's handler, in memory, observed by
// metrics when on.
func metricsPath(tb testing.TB, u gatewayUpstream, on bool) (http.RoundTripper, *metrics.Metrics) {
	log := slog.New(slog.NewTextHandler(io.Discard, &slog.HandlerOptions{Level: slog.LevelInfo}))
	var m *metrics.Metrics
	spec := upstream.Spec{Name: "up", URL: "http://127.0.0.1/mcp", Transport: inMemory{u.handler()}}
	e := &edge.Edge{Log: log}
	if on {
		m = metrics.New([]string{"up"})
		spec.Observer, e.Observer = m, m
	}
	g := gateway.New(log)
	tb.Cleanup(func() { g.Close() })
	info := mcp.Implementation{Name: "mcpx", Version: "bench"}
	if err := g.Add(upstream.New(spec, info, log), gateway.Options{}); err != nil {
		tb.Fatal(err)
	}
	e.Server = &server.Server{NS: g, Info: info}
	gw := streamhttp.New(e, streamhttp.Options{Logger: log})
	tb.Cleanup(gw.Close)
	if !on {
		return inMemory{gw}, nil
	}
	m.WatchSessions(func() int { return gw.Stats().Sessions }, func() int { return gw.Stats().Streams })
	return inMemory{m.CountHTTP(gw)}, m
}

// TestMetricsBenchmarkObserves checks that the benchmark's "on" path is
// observed (its calls are counted) and calls through.
func TestMetricsBenchmarkObserves(t *testing.T) {
	u := gatewayUpstreams[0]
	for _, on := range []bool{false, true} {
		rt, m := metricsPath(t, u, on)
		if err := callEcho(connectVia(t, "http://127.0.0.1/mcp", u.rev, rt), "up__echo", 1); err != nil {
			t.Errorf("metrics %v: %v", on, err)
		}
		if m == nil {
			continue
		}
		fams, err := m.Registry().Gather()
		if err != nil {
			t.Fatal(err)
		}
		counted := map[string]bool{}
		for _, f := range fams {
			for _, s := range f.GetMetric() {
				if s.GetCounter().GetValue() > 0 {
					counted[f.GetName()] = true
				}
			}
		}
		for _, name := range []string{"mcpx_requests_total", "mcpx_upstream_calls_total", "mcpx_client_bytes_total"} {
			if !counted[name] {
				t.Errorf("the observed path counted no %s", name)
			}
		}
	}
}
