package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

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
// concurrency 1 and 32, in the same run. Two upstreams:
//
//   - mcpx: mcpx's own runtime serving the tool, called at 2026-07-28. It
//     is the cheapest upstream we have, so the ratio is the harshest.
//   - gosdk: the official Go SDK's server (stateful Streamable HTTP), called
//     in a 2025-11-25 session, directly and through mcpx alike.
//
// A third path, floor, sends the call through a proxy that forwards the
// bytes with net/http and does no MCP work at all: what one more HTTP hop
// costs on this machine, the bound for any HTTP-in, HTTP-out gateway.
//
// Two topologies, in the same run:
//
//   - oneproc: client, proxy and upstream share this process. No kernel
//     scheduling between the parties, so what is left is their CPU work;
//     the servers run under pprof labels (role=gateway, role=upstream),
//     so go tool pprof -tagfocus=role=gateway splits a CPU profile. But
//     the upstream's garbage sets the pace of the gateway's collections.
//   - procs: each party in its own process, as in production; the gateway
//     is the mcpx binary itself (see procs_test.go). Every hop now also
//     pays the kernel's wake-up of another process, which on a small VM
//     is most of the latency at concurrency 1.
//
// Each request is timed (p50, p99); req/s is the total over the wall time;
// cpu-µs/op is the CPU time all parties (client, proxy or gateway,
// upstream: they share the machine's cores) used per call, and, in procs,
// proxy-cpu-µs/op that of the floor proxy or of mcpx alone. To profile
// that mcpx: MCPX_BENCH_CPUPROFILE=/tmp/mcpx.prof go test -bench ...
// writes /tmp/mcpx.prof.mcpx and /tmp/mcpx.prof.gosdk.

// echoTool answers with its arguments as text.
var echoTool = mcp.Tool{Name: "echo", InputSchema: json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"}}}`)}

func echoUpstream() http.Handler {
	c := catalog.New()
	c.AddTool(echoTool, func(_ context.Context, args json.RawMessage) (*mcp.CallToolResult, error) {
		return catalog.TextResult(string(args)), nil
	})
	return streamhttp.New(&edge.Edge{Server: &server.Server{NS: c, Info: mcp.Implementation{Name: "upstream", Version: "bench"}}}, streamhttp.Options{})
}

// sdkEchoUpstream serves the same tool from the Go SDK, stateful (sessions
// from initialize), as an upstream of that SDK typically runs, each
// answer a JSON body.
func sdkEchoUpstream() http.Handler {
	return sdkEcho(&sdk.StreamableHTTPOptions{JSONResponse: true})
}

// sdkEventStreamUpstream is sdkEchoUpstream answering each request as an
// event stream, the SDK's default (and the TypeScript SDK's): the stream
// ends once the request is answered.
func sdkEventStreamUpstream() http.Handler { return sdkEcho(nil) }

// sdkEcho is the Go SDK's server of the echo tool with opts.
func sdkEcho(opts *sdk.StreamableHTTPOptions) http.Handler {
	s := sdk.NewServer(&sdk.Implementation{Name: "go-sdk", Version: "bench"}, nil)
	s.AddTool(&sdk.Tool{Name: echoTool.Name, InputSchema: echoTool.InputSchema},
		func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: string(req.Params.Arguments)}}}, nil
		})
	return sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return s }, opts)
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

// byteProxy forwards each request's body and headers to url and the
// answer's back, with net/http and nothing else: no JSON is read.
func byteProxy(url string) http.Handler {
	c := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		req, err := http.NewRequestWithContext(r.Context(), r.Method, url, bytes.NewReader(body))
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		req.Header = r.Header.Clone()
		resp, err := c.Do(req)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		defer resp.Body.Close()
		for k, v := range resp.Header {
			w.Header()[k] = v
		}
		w.WriteHeader(resp.StatusCode)
		io.Copy(w, resp.Body)
	})
}

// labeled runs h under a pprof label naming its role.
func labeled(role string, h http.Handler) http.Handler {
	labels := pprof.Labels("role", role)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		pprof.Do(r.Context(), labels, func(ctx context.Context) { h.ServeHTTP(w, r.WithContext(ctx)) })
	})
}

// callEcho is a tools/call of tool with a fresh id, in the session's
// revision (2026-07-28 carries its _meta).
func callEcho(s *session, tool string, id int64) error { return callEchoText(s, tool, id, "hello") }

// callEchoText is callEcho with text (plain ASCII, no quotes) to echo.
func callEchoText(s *session, tool string, id int64, text string) error {
	meta := ""
	if s.modern {
		meta = modernMeta + ","
	}
	body := `{"jsonrpc":"2.0","id":` + strconv.FormatInt(id, 10) + `,"method":"tools/call","params":{` + meta + `"name":"` + tool + `","arguments":{"text":"` + text + `"}}}`
	b, err := s.post(body, "tools/call", tool)
	if err != nil {
		return err
	}
	if !strings.Contains(string(b), `\"`+text+`\"`) {
		return fmt.Errorf("unexpected answer %.200s", b)
	}
	return nil
}

// gatewayUpstream is one upstream of the benchmark and the revision its
// clients speak.
type gatewayUpstream struct {
	name, rev string
	handler   func() http.Handler
}

var gatewayUpstreams = []gatewayUpstream{{"mcpx", "2026-07-28", echoUpstream}, {"gosdk", "2025-11-25", sdkEchoUpstream}}

// benchPath is one way the benchmark reaches the echo tool: its endpoint,
// the tool's name there, and the processes a call passes through besides
// the client (the proxy first, if any, then the upstream; none when all
// run in the benchmark's process).
type benchPath struct {
	name, url, tool string
	parties         []*party
}

// gatewayPaths starts the upstream, mcpx in front of it and the byte
// proxy: the three ways to the echo tool. With split each runs in its own
// process, the gateway as the mcpx binary; else all run in this one, the
// servers under pprof labels.
func gatewayPaths(tb testing.TB, u gatewayUpstream, split bool) []benchPath {
	if split {
		up := startRole(tb, "upstream-"+u.name, "")
		gw := startMCPX(tb, u.name, up.url)
		floor := startRole(tb, "floor", up.url)
		return []benchPath{
			{"direct", up.url, "echo", []*party{up}},
			{"floor", floor.url, "echo", []*party{floor, up}},
			{"gateway", gw.url, "up__echo", []*party{gw, up}},
		}
	}
	up := httptest.NewServer(labeled("upstream", u.handler()))
	tb.Cleanup(up.Close)
	gw, stop := gatewayTo(tb, up.URL+"/mcp")
	tb.Cleanup(stop)
	gws := httptest.NewServer(labeled("gateway", gw))
	tb.Cleanup(gws.Close)
	floor := httptest.NewServer(labeled("gateway", byteProxy(up.URL+"/mcp")))
	tb.Cleanup(floor.Close)
	return []benchPath{{"direct", up.URL + "/mcp", "echo", nil}, {"floor", floor.URL + "/mcp", "echo", nil}, {"gateway", gws.URL + "/mcp", "up__echo", nil}}
}

// cpuTimes is the CPU time used so far by this process (the client) and
// by each party of p.
func cpuTimes(p benchPath) []time.Duration {
	t := []time.Duration{selfCPU()}
	for _, q := range p.parties {
		t = append(t, q.cpu())
	}
	return t
}

// BenchmarkGateway's procs topology at c=32 has more paths, floor-paced
// and gateway-paced, and the same with -paced85: the floor and mcpx
// again, both sent the same steady load, calls paced to a share of the
// rate the gateway path reached just before (half of it, and 0.85: near
// mcpx's most, still a rate both keep up with). A server's CPU per call
// rises as the rate it is called at falls, with fewer calls per wakeup
// (BENCHMARKS.md, sixth round), so at c=32 mcpx, slower than the floor,
// pays for that too; at one offered load, as a deployment sees it, the
// CPU ratio is what understanding MCP costs.
var pacedShares = []struct {
	suffix string
	share  float64
}{{"-paced", 0.5}, {"-paced85", 0.85}}

func BenchmarkGateway(b *testing.B) {
	for _, split := range []bool{false, true} {
		topology := map[bool]string{false: "oneproc", true: "procs"}[split]
		for _, u := range gatewayUpstreams {
			paths := gatewayPaths(b, u, split)
			for _, conc := range []int{1, 32} {
				var gatewayRate float64 // req/s of the gateway path's last run
				for _, p := range paths {
					b.Run(fmt.Sprintf("%s/%s/c%d/%s", topology, u.name, conc, p.name), func(b *testing.B) {
						rate := benchCalls(b, p, u.rev, conc, nil)
						if p.name == "gateway" {
							gatewayRate = rate
						}
					})
				}
				if split && conc == 32 && gatewayRate > 0 {
					for _, ps := range pacedShares {
						for _, p := range paths {
							if p.name == "direct" {
								continue
							}
							b.Run(fmt.Sprintf("%s/%s/c%d/%s%s", topology, u.name, conc, p.name, ps.suffix), func(b *testing.B) {
								benchCalls(b, p, u.rev, conc, newPacer(ps.share*gatewayRate))
							})
						}
					}
				}
			}
		}
	}
}

// BenchmarkGatewayEventStream is BenchmarkGateway's procs topology in
// front of the Go SDK's server answering as it does by default, each
// request with an event stream it ends once the answer is sent (the
// TypeScript SDK's servers answer so too). upstream-conns/op says whether
// a path keeps its connections to the upstream across calls.
func BenchmarkGatewayEventStream(b *testing.B) {
	u := gatewayUpstream{"gosdk-sse", "2025-11-25", sdkEventStreamUpstream}
	paths := gatewayPaths(b, u, true)
	for _, conc := range []int{1, 32} {
		for _, p := range paths {
			b.Run(fmt.Sprintf("procs/%s/c%d/%s", u.name, conc, p.name), func(b *testing.B) {
				benchCalls(b, p, u.rev, conc, nil)
			})
		}
	}
}

// benchCalls makes b.N calls of p's echo tool from conc goroutines, each
// waiting for pace's permit first when pace is not nil, reports the
// metrics and returns the rate reached, in req/s.
func benchCalls(b *testing.B, p benchPath, rev string, conc int, pace *pacer) float64 {
	s := connect(b, p.url, rev)
	s.client.Transport.(*http.Transport).MaxIdleConnsPerHost = conc * 2
	if err := callEcho(s, p.tool, 1); err != nil {
		b.Fatal(err)
	}
	lat := make([]time.Duration, b.N)
	var n atomic.Int64
	var failed atomic.Value
	var wg sync.WaitGroup
	cpu := cpuTimes(p)
	var calls0 syscalls
	if len(p.parties) > 1 {
		calls0 = p.parties[0].syscalls()
	}
	conns0 := int64(-1)
	if len(p.parties) > 0 {
		conns0 = p.parties[len(p.parties)-1].accepted()
	}
	b.ResetTimer()
	pace.begin()
	for range conc {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := n.Add(1); i <= int64(b.N); i = n.Add(1) {
				pace.wait()
				start := time.Now()
				if err := callEcho(s, p.tool, i+1); err != nil {
					failed.Store(err)
					return
				}
				lat[i-1] = time.Since(start)
			}
		}()
	}
	wg.Wait()
	b.StopTimer()
	used := cpuTimes(p)
	var total time.Duration
	for i := range used {
		used[i] -= cpu[i]
		total += used[i]
	}
	if err, _ := failed.Load().(error); err != nil {
		b.Fatal(err)
	}
	slices.Sort(lat)
	rate := float64(b.N) / b.Elapsed().Seconds()
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
	b.ReportMetric(rate, "req/s")
	perCall := func(d time.Duration) float64 { return float64(d.Microseconds()) / float64(b.N) }
	b.ReportMetric(perCall(total), "cpu-µs/op")
	if len(p.parties) > 1 {
		b.ReportMetric(perCall(used[1]), "proxy-cpu-µs/op")
		// Reads and writes the proxy makes per call: mcpx and the floor
		// make as many (BENCHMARKS.md, tenth round), so its extra CPU is
		// its own work, not more trips to the kernel.
		calls := p.parties[0].syscalls()
		b.ReportMetric(float64(calls.reads-calls0.reads)/float64(b.N), "proxy-reads/op")
		b.ReportMetric(float64(calls.writes-calls0.writes)/float64(b.N), "proxy-writes/op")
	}
	if len(p.parties) > 0 {
		// The other parties' shares: a proxy can make
		// the client and the upstream work harder too.
		b.ReportMetric(perCall(used[0]), "client-cpu-µs/op")
		b.ReportMetric(perCall(used[len(used)-1]), "upstream-cpu-µs/op")
		// Connections the upstream accepted per call: 0 once a client's
		// (or proxy's) pool is warm, 1 where every call dials.
		if conns := p.parties[len(p.parties)-1].accepted(); conns0 >= 0 && conns >= 0 {
			b.ReportMetric(float64(conns-conns0-1)/float64(b.N), "upstream-conns/op") // -1: the second accepted's own
		}
	}
	return rate
}

// pacer hands out permits at a fixed rate: the k-th permit is due k
// intervals after begin. A wait behind schedule returns at once, so the
// average rate holds even when a sleep wakes late; a nil pacer never
// waits.
type pacer struct {
	interval time.Duration
	start    time.Time
	next     atomic.Int64 // the next permit's number
}

func newPacer(perSecond float64) *pacer {
	return &pacer{interval: time.Duration(float64(time.Second) / perSecond)}
}

// begin starts the schedule: the first permit is due now.
func (p *pacer) begin() {
	if p != nil {
		p.start = time.Now()
		p.next.Store(0)
	}
}

// wait blocks until the caller's permit is due.
func (p *pacer) wait() {
	if p == nil {
		return
	}
	due := p.start.Add(time.Duration(p.next.Add(1)-1) * p.interval)
	if d := time.Until(due); d > 0 {
		time.Sleep(d)
	}
}

// TestGatewayBenchmarkCallsThrough checks that each benchmarked path
// really reaches the upstream's tool and comes back, for both upstreams.
func TestGatewayBenchmarkCallsThrough(t *testing.T) {
	for _, split := range []bool{false, true} {
		for _, u := range gatewayUpstreams {
			for _, p := range gatewayPaths(t, u, split) {
				if err := callEcho(connect(t, p.url, u.rev), p.tool, 1); err != nil {
					t.Errorf("split %v, %s/%s: %v", split, u.name, p.name, err)
				}
			}
		}
	}
}

func discardLog() *slog.Logger { return slog.New(slog.DiscardHandler) }

// TestPacer checks that a pacer's permits are never early (the k-th not
// before k intervals have passed), from many goroutines at once, and that
// a nil pacer does not wait.
func TestPacer(t *testing.T) {
	var nilPacer *pacer
	nilPacer.begin()
	nilPacer.wait()

	const permits, interval = 40, time.Millisecond
	p := newPacer(float64(time.Second / interval))
	if p.interval != interval {
		t.Fatalf("interval %v, want %v", p.interval, interval)
	}
	p.begin()
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range permits / 8 {
				p.wait()
			}
		}()
	}
	wg.Wait()
	// The last permit, number permits-1, is due (permits-1) intervals in.
	if got, want := time.Since(p.start), (permits-1)*interval; got < want {
		t.Errorf("%d permits took %v: the last one came before it was due at %v", permits, got, want)
	}
	if n := p.next.Load(); n != permits {
		t.Errorf("%d permits handed out, want %d", n, permits)
	}
}
