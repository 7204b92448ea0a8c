package bench

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/pprof"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpx-dev/mcpx/generated/mcp"
	"github.com/mcpx-dev/mcpx/runtime/edge"
	"github.com/mcpx-dev/mcpx/runtime/gateway"
	"github.com/mcpx-dev/mcpx/runtime/server"
	"github.com/mcpx-dev/mcpx/runtime/transport/streamhttp"
)

// The listen benchmark holds ListenStreams idle subscriptions/listen
// streams over HTTP on one mcpx (a gateway fronting one upstream, in a
// process of its own: role "listen"), keep-alives running every
// ListenKeepAlive, and measures what they cost it: memory per stream
// (heap and stacks after a collection, and resident memory), and CPU
// while idle. Then, b.N times, the upstream says its tools changed, and
// the time until the last of the clients has read the tools list_changed
// is one op.

const (
	// ListenStreams is how many listen streams the benchmark holds.
	ListenStreams = 1000
	// ListenKeepAlive is the keep-alive interval of the benchmark's mcpx:
	// 15 times the default (15 s), so that an idle window sees them.
	ListenKeepAlive = time.Second
	// listenIdle is how long the streams are left idle to measure CPU.
	listenIdle = 10 * time.Second
)

// changingUpstream is an upstream whose tool list changes when told:
// each change adds a tool and says so, as a real upstream does.
type changingUpstream struct {
	changes chan string
	n       atomic.Int64
}

func (u *changingUpstream) Name() string { return "up" }
func (u *changingUpstream) Capabilities(context.Context) (mcp.ServerCapabilities, error) {
	return mcp.ServerCapabilities{Tools: &mcp.ServerCapabilitiesTools{ListChanged: mcp.Ptr(true)}}, nil
}
func (u *changingUpstream) ListTools(context.Context, *mcp.PaginatedRequestParams) (*mcp.ListToolsResult, error) {
	var tools []mcp.Tool
	for i := range u.n.Load() + 1 {
		tools = append(tools, mcp.Tool{Name: "t" + strconv.FormatInt(i, 10), InputSchema: json.RawMessage(`{"type":"object"}`)})
	}
	return &mcp.ListToolsResult{Tools: tools}, nil
}
func (u *changingUpstream) Call(ctx context.Context, method string, params any) (any, error) {
	return mcp.Dispatch(ctx, u, method, params)
}
func (u *changingUpstream) Changes() <-chan string { return u.changes }
func (u *changingUpstream) Close() error           { return nil }

func (u *changingUpstream) change() {
	u.n.Add(1)
	u.changes <- mcp.MethodNotificationsToolsListChanged
}

// listenStats is what the listen role reports of itself after a
// collection.
type listenStats struct {
	HeapInuse, StackInuse uint64
	Goroutines            int
}

// listenServer is the listen role: mcpx's gateway at /mcp, its own
// figures at /stats, and /change makes its upstream's tools change.
func listenServer() http.Handler {
	u := &changingUpstream{changes: make(chan string, 16)}
	g := gateway.New(slog.New(slog.DiscardHandler))
	if err := g.Add(u, gateway.Options{}); err != nil {
		panic(err)
	}
	g.Ready(context.Background())
	e := &edge.Edge{Server: &server.Server{NS: g, Info: mcp.Implementation{Name: "mcpx", Version: "bench"}}, Log: slog.New(slog.DiscardHandler)}
	go e.WatchChanges(context.Background())
	mux := http.NewServeMux()
	mux.Handle("/mcp", streamhttp.New(e, streamhttp.Options{MaxStreams: 2 * ListenStreams, KeepAlive: ListenKeepAlive, Logger: slog.New(slog.DiscardHandler)}))
	mux.HandleFunc("/stats", func(w http.ResponseWriter, r *http.Request) {
		runtime.GC()
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		json.NewEncoder(w).Encode(listenStats{ms.HeapInuse, ms.StackInuse, runtime.NumGoroutine()})
	})
	mux.HandleFunc("/debug/pprof/heap", pprof.Index) // MCPX_BENCH_HEAP: where the memory goes
	mux.HandleFunc("/change", func(w http.ResponseWriter, r *http.Request) { u.change() })
	return mux
}

// rss is a process's resident memory, from /proc/PID/status.
func rss(pid int) uint64 {
	b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, _ := strconv.ParseUint(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kb << 10
		}
	}
	return 0
}

func BenchmarkListenStreams(b *testing.B) {
	p := startRole(b, "listen", "")
	base := strings.TrimSuffix(p.url, "/mcp")
	pid := p.cmd.Process.Pid
	stats := func() listenStats {
		resp, err := http.Get(base + "/stats")
		if err != nil {
			b.Fatal(err)
		}
		defer resp.Body.Close()
		var s listenStats
		json.NewDecoder(resp.Body).Decode(&s)
		return s
	}
	before, rssBefore := stats(), rss(pid)

	tr := &http.Transport{MaxIdleConnsPerHost: ListenStreams, DisableCompression: true}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr}
	var round atomic.Int64 // the change being waited for
	heard := make(chan struct{}, 2*ListenStreams)
	var bodies []io.Closer
	defer func() {
		for _, c := range bodies {
			c.Close()
		}
	}()
	var acked sync.WaitGroup
	for i := range ListenStreams {
		body := `{"jsonrpc":"2.0","id":` + strconv.Itoa(i) + `,"method":"subscriptions/listen","params":{"notifications":{"toolsListChanged":true},` + modernMeta + `}}`
		req, _ := http.NewRequest(http.MethodPost, p.url, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("MCP-Protocol-Version", "2026-07-28")
		req.Header.Set("Mcp-Method", "subscriptions/listen")
		resp, err := client.Do(req)
		if err != nil || resp.StatusCode != http.StatusOK {
			b.Fatalf("listen %d: %v %v", i, err, resp)
		}
		bodies = append(bodies, resp.Body)
		acked.Add(1)
		go func() {
			sc := bufio.NewScanner(resp.Body)
			var seen int64
			ack := false
			for sc.Scan() {
				line := sc.Text()
				switch {
				case !ack && strings.Contains(line, "subscriptions/acknowledged"):
					ack = true
					acked.Done()
				case strings.Contains(line, "tools/list_changed"):
					// A change may be told twice (the upstream's word, the
					// merged list's); a stream counts once per round.
					if r := round.Load(); r > seen {
						seen = r
						heard <- struct{}{}
					}
				}
			}
		}()
	}
	acked.Wait()
	time.Sleep(2 * ListenKeepAlive) // let the first keep-alives go by
	held, rssHeld := stats(), rss(pid)
	if path := os.Getenv("MCPX_BENCH_HEAP"); path != "" {
		if resp, err := http.Get(base + "/debug/pprof/heap"); err == nil {
			f, _ := os.Create(path)
			io.Copy(f, resp.Body)
			f.Close()
			resp.Body.Close()
		}
	}
	cpu0 := p.cpu()
	time.Sleep(listenIdle)
	idleCPU := p.cpu() - cpu0

	b.ResetTimer()
	var worst time.Duration
	for i := range b.N {
		round.Store(int64(i + 1))
		began := time.Now()
		resp, err := http.Post(base+"/change", "text/plain", nil)
		if err != nil {
			b.Fatal(err)
		}
		resp.Body.Close()
		for range ListenStreams {
			select {
			case <-heard:
			case <-time.After(30 * time.Second):
				b.Fatal("not every stream heard the change within 30 s")
			}
		}
		worst = max(worst, time.Since(began))
	}
	b.StopTimer()
	n := float64(ListenStreams)
	b.ReportMetric(float64(held.HeapInuse+held.StackInuse-before.HeapInuse-before.StackInuse)/n, "heap+stack-B/stream")
	b.ReportMetric(float64(held.StackInuse-before.StackInuse)/n, "stack-B/stream")
	b.ReportMetric(float64(rssHeld-rssBefore)/n, "RSS-B/stream")
	b.ReportMetric(float64(held.Goroutines-before.Goroutines)/n, "goroutines/stream")
	b.ReportMetric(100*idleCPU.Seconds()/listenIdle.Seconds(), "idle-CPU-%")
	b.ReportMetric(float64(worst.Microseconds())/1000, "worst-fanout-ms")
}
