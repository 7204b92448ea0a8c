package bench

import (
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	"github.com/mcpx-dev/mcpx/generated/mcp"
	"github.com/mcpx-dev/mcpx/runtime/edge"
	"github.com/mcpx-dev/mcpx/runtime/gateway"
	"github.com/mcpx-dev/mcpx/runtime/server"
	"github.com/mcpx-dev/mcpx/runtime/transport/streamhttp"
	"github.com/mcpx-dev/mcpx/runtime/upstream"
)

// BenchmarkGatewayWork measures the gateway's own work per tools/call,
// without sockets: each HTTP request is handed to its handler in memory,
// and mcpx reaches the upstream through a RoundTripper that does the same.
// direct calls the upstream's handler that way; gateway minus direct is
// what mcpx adds. One goroutine and no kernel in the loop, so ns/op, B/op
// and allocs/op hold still where the socket benchmark's figures do not:
// this is the benchmark to compare a change to the gateway's code with.
func BenchmarkGatewayWork(b *testing.B) {
	for _, u := range gatewayUpstreams {
		for _, p := range workPaths(b, u) {
			b.Run(u.name+"/"+p.name, func(b *testing.B) {
				s := connectVia(b, "http://127.0.0.1/mcp", u.rev, p.rt)
				b.ReportAllocs()
				for i := range b.N {
					if err := callEcho(s, p.tool, int64(i+1)); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// BenchmarkGatewayWorkLarge is BenchmarkGatewayWork with 64 kB of text in
// the arguments, echoed back in the result: what a call that moves a file
// costs, where every pass over the payload shows.
func BenchmarkGatewayWorkLarge(b *testing.B) {
	text := strings.Repeat("x", 64<<10)
	for _, u := range gatewayUpstreams {
		for _, p := range workPaths(b, u) {
			b.Run(u.name+"/"+p.name, func(b *testing.B) {
				s := connectVia(b, "http://127.0.0.1/mcp", u.rev, p.rt)
				b.ReportAllocs()
				b.SetBytes(2 * int64(len(text)))
				for i := range b.N {
					if err := callEchoText(s, p.tool, int64(i+1), text); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// TestGatewayWorkCallsThrough checks that both in-memory paths reach the
// upstream's tool, for both upstreams.
func TestGatewayWorkCallsThrough(t *testing.T) {
	for _, u := range gatewayUpstreams {
		for _, p := range workPaths(t, u) {
			if err := callEcho(connectVia(t, "http://127.0.0.1/mcp", u.rev, p.rt), p.tool, 1); err != nil {
				t.Errorf("%s/%s: %v", u.name, p.name, err)
			}
		}
	}
}

type workPath struct {
	name, tool string
	rt         http.RoundTripper
}

// workPaths are the upstream's handler, and mcpx in front of it, both
// reached in memory.
func workPaths(tb testing.TB, u gatewayUpstream) []workPath {
	return pathsVia(tb, u, func(h http.Handler) http.RoundTripper { return inMemory{h} })
}

// pathsVia are the upstream's handler, and mcpx in front of it, each
// reached through the RoundTripper via makes of it.
func pathsVia(tb testing.TB, u gatewayUpstream, via func(http.Handler) http.RoundTripper) []workPath {
	uh := u.handler()
	if os.Getenv("MCPX_BENCH_LABELS") != "" { // pprof labels, for -tagfocus=role=gateway (a request copy each)
		uh = labeled("upstream", uh)
	}
	up := via(uh)
	g := gateway.New(discardLog())
	tb.Cleanup(func() { g.Close() })
	info := mcp.Implementation{Name: "mcpx", Version: "bench"}
	c := upstream.New(upstream.Spec{Name: "up", URL: "http://127.0.0.1/mcp", Transport: up}, info, discardLog())
	if err := g.Add(c, gateway.Options{}); err != nil {
		tb.Fatal(err)
	}
	gw := streamhttp.New(&edge.Edge{Server: &server.Server{NS: g, Info: info}, Log: discardLog()}, streamhttp.Options{Logger: discardLog()})
	tb.Cleanup(gw.Close)
	var gh http.Handler = gw
	if os.Getenv("MCPX_BENCH_LABELS") != "" {
		gh = labeled("gateway", gh)
	}
	return []workPath{{"direct", "echo", up}, {"gateway", "up__echo", via(gh)}}
}

// inMemory is a RoundTripper that serves each request with h, in the
// caller's goroutine.
type inMemory struct{ h http.Handler }

func (t inMemory) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Body == nil {
		r.Body = http.NoBody
	}
	r.Host, r.RequestURI = r.URL.Host, r.URL.RequestURI()
	rec := httptest.NewRecorder()
	t.h.ServeHTTP(rec, r)
	return rec.Result(), nil
}
