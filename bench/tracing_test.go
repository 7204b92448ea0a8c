package bench

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/mcpx-dev/mcpx/runtime/tracing"
)

// The tracing benchmark measures what OpenTelemetry tracing costs the
// gateway: the same tools/call through mcpx with tracing off, on with
// the sampler at 0 % (spans made, not recorded: every request still gets
// its ids, and its context is passed on) and on at 100 % (every span
// recorded and handed to a batching span processor, whose exporter
// drops them: the cost of encoding and sending OTLP is the collector
// connection's, not the request path's). The modes alternate within one
// run. The client never sends trace context, so at 0 % no request is
// sampled by its parent either.
//
// BenchmarkGatewayTracing serves over sockets: client and mcpx in this
// process, the upstream (mcpx's echo, the cheapest upstream we have, so
// the ratio is the harshest) in a process of its own, where it is not
// traced. BenchmarkGatewayWorkTracing is the in-memory form (no sockets,
// one goroutine) for allocations per call; its upstream is the Go SDK's
// server, so that only the gateway makes spans.

// discardExporter drops every span it is given.
type discardExporter struct{}

func (discardExporter) ExportSpans(context.Context, []sdktrace.ReadOnlySpan) error { return nil }
func (discardExporter) Shutdown(context.Context) error                             { return nil }

// tracingModes are the configurations compared, each installed for its
// sub-benchmark.
func tracingModes(tb testing.TB) []struct {
	name string
	tp   *sdktrace.TracerProvider
} {
	never := sdktrace.NewTracerProvider(sdktrace.WithBatcher(discardExporter{}), sdktrace.WithSampler(sdktrace.ParentBased(sdktrace.TraceIDRatioBased(0))))
	always := sdktrace.NewTracerProvider(sdktrace.WithBatcher(discardExporter{}), sdktrace.WithSampler(sdktrace.ParentBased(sdktrace.TraceIDRatioBased(1))))
	tb.Cleanup(func() {
		never.Shutdown(context.Background())
		always.Shutdown(context.Background())
	})
	return []struct {
		name string
		tp   *sdktrace.TracerProvider
	}{{"off", nil}, {"sampled0", never}, {"sampled100", always}}
}

// BenchmarkGatewayTracing alternates the modes in rounds of tracingRound
// calls each (the first mode rotating), so that the load of a shared
// machine, which moves by half within seconds, falls on all three alike;
// b.N calls are made in each mode. It reports each mode's req/s and
// CPU/call (this process and the upstream's) and the throughput the two
// tracing modes lose against off, in %.
func BenchmarkGatewayTracing(b *testing.B) {
	up := startRole(b, "upstream-mcpx", "")
	gw, stop := gatewayTo(b, up.url)
	b.Cleanup(stop)
	gws := httptest.NewServer(tracing.Handler(gw)) // as host.HTTP serves it
	b.Cleanup(gws.Close)
	modes := tracingModes(b)
	for _, conc := range []int{1, 32} {
		b.Run(fmt.Sprintf("c%d", conc), func(b *testing.B) {
			s := connect(b, gws.URL, "2026-07-28")
			s.client.Transport.(*http.Transport).MaxIdleConnsPerHost = conc * 2
			if err := callEcho(s, "up__echo", 1); err != nil {
				b.Fatal(err)
			}
			wall := make([]time.Duration, len(modes))
			cpu := make([]time.Duration, len(modes))
			var id atomic.Int64
			b.ResetTimer()
			for done, round := 0, 0; done < b.N; round++ {
				calls := min(tracingRound, b.N-done)
				for k := range modes {
					m := (round + k) % len(modes)
					restore := install(modes[m].tp)
					c0, t0 := selfCPU()+up.cpu(), time.Now()
					if err := callsAtOnce(s, conc, calls, &id); err != nil {
						b.Fatal(err)
					}
					if tp := modes[m].tp; tp != nil {
						tp.ForceFlush(context.Background()) // the batch's export is this mode's cost
					}
					wall[m] += time.Since(t0)
					cpu[m] += selfCPU() + up.cpu() - c0
					restore()
				}
				done += calls
			}
			b.StopTimer()
			rate := func(m int) float64 { return float64(b.N) / wall[m].Seconds() }
			for m, mode := range modes {
				b.ReportMetric(rate(m), mode.name+"-req/s")
				b.ReportMetric(float64(cpu[m].Microseconds())/float64(b.N), mode.name+"-cpu-µs/op")
				if m > 0 {
					b.ReportMetric(100*(1-rate(m)/rate(0)), mode.name+"-lost-%")
				}
			}
		})
	}
}

// tracingRound is how many calls each mode makes before the next takes
// its turn.
const tracingRound = 250

// callsAtOnce makes n calls of the echo tool through s, conc at a time.
func callsAtOnce(s *session, conc, n int, id *atomic.Int64) error {
	var left atomic.Int64
	left.Store(int64(n))
	var failed atomic.Value
	var wg sync.WaitGroup
	for range conc {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for left.Add(-1) >= 0 {
				if err := callEcho(s, "up__echo", id.Add(1)+1); err != nil {
					failed.Store(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	err, _ := failed.Load().(error)
	return err
}

func BenchmarkGatewayWorkTracing(b *testing.B) {
	var gosdk gatewayUpstream
	for _, u := range gatewayUpstreams {
		if u.name == "gosdk" {
			gosdk = u
		}
	}
	var gw workPath
	for _, p := range workPaths(b, gosdk) {
		if p.name == "gateway" {
			gw = p
		}
	}
	rt := inMemory{tracing.Handler(gw.rt.(inMemory).h)}
	for _, m := range tracingModes(b) {
		b.Run(m.name, func(b *testing.B) {
			defer install(m.tp)()
			s := connectVia(b, "http://127.0.0.1/mcp", gosdk.rev, rt)
			b.ReportAllocs()
			for i := range b.N {
				if err := callEcho(s, gw.tool, int64(i+1)); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// install installs tp, nil for tracing off (a nil *TracerProvider must
// not reach Install as a non-nil interface).
func install(tp *sdktrace.TracerProvider) (restore func()) {
	if tp == nil {
		return tracing.Install(nil)
	}
	return tracing.Install(tp)
}

// TestGatewayTracingSpans checks the benchmark measures what it says: at
// 100 % each call through mcpx makes a request span and an upstream call
// span; at 0 %, none is recorded; off, none at all.
func TestGatewayTracingSpans(t *testing.T) {
	var gosdk gatewayUpstream
	for _, u := range gatewayUpstreams {
		if u.name == "gosdk" {
			gosdk = u
		}
	}
	var gw workPath
	for _, p := range workPaths(t, gosdk) {
		if p.name == "gateway" {
			gw = p
		}
	}
	rt := inMemory{tracing.Handler(gw.rt.(inMemory).h)}
	for _, tc := range []struct {
		sampler sdktrace.Sampler
		want    int
	}{{sdktrace.ParentBased(sdktrace.TraceIDRatioBased(1)), 2}, {sdktrace.ParentBased(sdktrace.TraceIDRatioBased(0)), 0}} {
		exp := tracetest.NewInMemoryExporter()
		tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp), sdktrace.WithSampler(tc.sampler))
		restore := tracing.Install(tp)
		s := connectVia(t, "http://127.0.0.1/mcp", gosdk.rev, rt)
		exp.Reset() // initialize and its list loads
		if err := callEcho(s, gw.tool, 1); err != nil {
			t.Fatal(err)
		}
		got := len(exp.GetSpans())
		restore()
		tp.Shutdown(context.Background()) // which empties exp
		if got != tc.want {
			t.Errorf("%s: %d spans for one call, want %d", tc.sampler.Description(), got, tc.want)
		}
	}
}
