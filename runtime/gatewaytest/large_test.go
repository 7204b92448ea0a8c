package gatewaytest

// What a large message costs mcpx: a 16 MB tool result and a 10,000-tool
// list through the real gateway path (an upstream process on stdio, or
// one over HTTP, a gateway built from a config, the Streamable HTTP
// transport on a loopback socket). The upstream is the "large" or
// "largehttp" mode of this test binary, another process, so that only
// mcpx's allocations (and the test client's, which only discards bytes)
// are counted here.

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpx-dev/mcpx/runtime/budget"
	"github.com/mcpx-dev/mcpx/runtime/config"
	"github.com/mcpx-dev/mcpx/runtime/edge"
	"github.com/mcpx-dev/mcpx/runtime/gateway"
	"github.com/mcpx-dev/mcpx/runtime/host"
	"github.com/mcpx-dev/mcpx/runtime/server"
	"github.com/mcpx-dev/mcpx/runtime/transport/streamhttp"
)

const (
	// largeText is the size of the "big" tool's text: 16 MB.
	largeText = 16_000_000
	// midText is the size of the "mid" tool's text: 2 MiB.
	midText = 2 << 20
	// largeTools is how many tools the "large" upstream lists (besides
	// big and churn), each about 400 bytes of JSON.
	largeTools = 10_000
)

// largeAnswer is the "large" upstream's answer to one request line, nil
// for a notification or a response. big answers largeText bytes of text,
// mid midText;
// churn says the tool list changed, then answers; tools/list gives
// largeTools tools.
func largeAnswer(line []byte, notify func([]byte)) []byte {
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params struct {
			Name string `json:"name"`
		} `json:"params"`
	}
	if json.Unmarshal(line, &m) != nil || m.ID == nil || m.Method == "" {
		return nil
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, `{"jsonrpc":"2.0","id":%s,`, m.ID)
	switch m.Method {
	case "initialize":
		b.WriteString(`"result":{"protocolVersion":"2025-06-18","capabilities":{"tools":{"listChanged":true}},"serverInfo":{"name":"large","version":"1"}}}`)
	case "ping":
		b.WriteString(`"result":{}}`)
	case "tools/list":
		b.WriteString(`"result":{"tools":[{"name":"big","inputSchema":{"type":"object"}},{"name":"mid","inputSchema":{"type":"object"}},{"name":"churn","inputSchema":{"type":"object"}}`)
		for i := range largeTools {
			fmt.Fprintf(&b, `,{"name":"tool_%05d","title":"Tool number %d","description":"Does thing number %d with the file it is given, and says what it found, in a few words.","inputSchema":{"type":"object","properties":{"path":{"type":"string","description":"The file."},"depth":{"type":"integer","minimum":0}},"required":["path"]},"annotations":{"readOnlyHint":true}}`, i, i, i)
		}
		b.WriteString(`]}}`)
	case "tools/call":
		switch m.Params.Name {
		case "big", "mid":
			size := largeText
			if m.Params.Name == "mid" {
				size = midText
			}
			b.Grow(size + 100)
			b.WriteString(`"result":{"content":[{"type":"text","text":"`)
			chunk := strings.Repeat("0123456789abcdef", 4096)
			for n := 0; n < size; n += len(chunk) {
				b.WriteString(chunk[:min(len(chunk), size-n)])
			}
			b.WriteString(`"}]}}`)
		case "churn":
			notify([]byte(`{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}`))
			b.WriteString(`"result":{"content":[{"type":"text","text":"churned"}]}}`)
		default:
			b.WriteString(`"result":{"content":[{"type":"text","text":"small"}]}}`)
		}
	default:
		b.WriteString(`"error":{"code":-32601,"message":"no such method"}}`)
	}
	return b.Bytes()
}

// serveLarge is the "large" upstream on stdin and stdout.
func serveLarge(in io.Reader) int {
	var mu sync.Mutex
	out := bufio.NewWriter(os.Stdout)
	write := func(b []byte) {
		mu.Lock()
		defer mu.Unlock()
		out.Write(b)
		out.WriteByte('\n')
		out.Flush()
	}
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		if a := largeAnswer(sc.Bytes(), write); a != nil {
			write(a)
		}
	}
	return 0
}

// serveLargeHTTP is the "largehttp" upstream: the same answers over
// Streamable HTTP (JSON responses, no session) on a loopback port, whose
// URL it writes as its first line on stdout. It ends when stdin does.
func serveLargeHTTP() int {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fmt.Printf("http://%s/mcp\n", ln.Addr())
	go func() {
		http.Serve(ln, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method != http.MethodPost {
				w.WriteHeader(http.StatusMethodNotAllowed)
				return
			}
			body, _ := io.ReadAll(r.Body)
			a := largeAnswer(body, func([]byte) {}) // no GET stream: no list changes
			if a == nil {
				w.WriteHeader(http.StatusAccepted)
				return
			}
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("Content-Length", strconv.Itoa(len(a)))
			w.Write(a)
		}))
	}()
	io.Copy(io.Discard, os.Stdin)
	return 0
}

// startLargeHTTP starts the "largehttp" upstream and returns its URL.
func startLargeHTTP(t testing.TB) string {
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), envUpstream+"=largehttp")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stdin.Close(); cmd.Wait() })
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(line)
}

// largeGateway serves, over HTTP on a loopback port, a gateway whose one
// upstream ("up") is entry (a config entry), and returns the endpoint
// and the gateway.
func largeGateway(t testing.TB, entry map[string]any, opt streamhttp.Options) (string, *gateway.Gateway) {
	t.Helper()
	entry["mcpx"] = map[string]any{"timeout": "60s", "start": "eager"}
	data, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{"up": entry}})
	cfg, err := config.Parse("large.json", data, func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatal(err)
	}
	_, log := logBuffer()
	gw, err := host.Gateway(context.Background(), cfg, serverInfo, log)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { gw.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := gw.Ready(ctx); err != nil {
		t.Fatal(err)
	}
	e := &edge.Edge{Server: &server.Server{NS: gw, Info: serverInfo}, Log: log}
	wctx, stopWatch := context.WithCancel(context.Background())
	watching := make(chan struct{})
	go func() { defer close(watching); e.WatchChanges(wctx) }()
	t.Cleanup(func() { stopWatch(); <-watching })
	opt.Logger = log
	h := streamhttp.New(e, opt)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	hs := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	served := make(chan struct{})
	go func() { defer close(served); hs.Serve(ln) }()
	t.Cleanup(func() {
		h.Close()
		sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := hs.Shutdown(sctx); err != nil {
			hs.Close()
		}
		<-served
	})
	return "http://" + ln.Addr().String() + "/", gw
}

// largeUpstreams are the two ways of reaching the "large" upstream.
func largeUpstreams(t testing.TB) map[string]map[string]any {
	return map[string]map[string]any{
		"stdio": {"command": os.Args[0], "env": map[string]string{envUpstream: "large",
			"GORACE": strings.TrimSpace(os.Getenv("GORACE") + " atexit_sleep_ms=0")}},
		"http": {"url": startLargeHTTP(t)},
	}
}

// post sends one headerless (2025-03-26) request and returns how many
// bytes the answer had, reading it without keeping it.
func post(ctx context.Context, hc *http.Client, endpoint, body string) (int64, int, error) {
	resp, err := postJSON(ctx, hc, endpoint, nil, body)
	if err != nil {
		return 0, 0, err
	}
	defer resp.Body.Close()
	n, err := io.Copy(io.Discard, resp.Body)
	return n, resp.StatusCode, err
}

// memUse is what a piece of work cost the process: bytes allocated, the
// most the heap's objects (live, or dead and not yet swept) took above
// where they were when it began, and what the heap still holds after a
// collection once it ended.
type memUse struct {
	alloc, peak uint64
	retained    int64
}

// measure runs f and reports its memUse; the heap is sampled every
// 200 µs while it runs. It starts with two collections, which empty the
// sync.Pools (encoding/json keeps its buffers in one): what a pooled
// buffer saves depends on whether a collection came in between, and the
// figures would swing by 20 MB from run to run.
func measure(f func()) memUse {
	runtime.GC()
	runtime.GC()
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	heap := func() uint64 { metrics.Read(sample); return sample[0].Value.Uint64() }
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	base := heap()
	stop, peakc := make(chan struct{}), make(chan uint64)
	go func() {
		peak := base
		tick := time.NewTicker(200 * time.Microsecond)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				peakc <- max(peak, heap())
				return
			case <-tick.C:
				peak = max(peak, heap())
			}
		}
	}()
	f()
	close(stop)
	peak := <-peakc
	runtime.ReadMemStats(&after)
	runtime.GC()
	runtime.GC() // the pools' victims too
	return memUse{after.TotalAlloc - before.TotalAlloc, peak - base, int64(heap()) - int64(base)}
}

// TestLargeMessageMemory measures, and logs, what a 16 MB tool result
// and a 10,000-tool list cost mcpx, over a stdio and an HTTP upstream:
//
//	go test ./runtime/gatewaytest -run TestLargeMessageMemory -v
//
// The figures are reported, not asserted as exact: the bound checked is
// a generous multiple of the answer's size. Not under the race detector
// (make test), whose figures mean little and which takes 45 s here.
func TestLargeMessageMemory(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("moves hundreds of megabytes; run without -race and -short to measure")
	}
	for kind, up := range largeUpstreams(t) {
		t.Run(kind, func(t *testing.T) {
			endpoint, gw := largeGateway(t, up, streamhttp.Options{})
			hc := newClient(t)
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			call := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"up__big","arguments":{}}}`
			if n, status, err := post(ctx, hc, endpoint, call); err != nil || status != 200 || n < largeText {
				t.Fatalf("tools/call big: %d bytes, HTTP %d, %v", n, status, err)
			}
			// Each call measured on its own; the median of three.
			var uses []memUse
			var got int64
			for range 3 {
				uses = append(uses, measure(func() {
					n, _, err := post(ctx, hc, endpoint, call)
					if err != nil {
						t.Fatal(err)
					}
					got = n
				}))
			}
			slices.SortFunc(uses, func(a, b memUse) int { return cmp.Compare(a.alloc, b.alloc) })
			u := uses[1]
			t.Logf("%s upstream, 16 MB tool result: %.1f MB allocated per call (%.1f× the %d-byte answer; %.1f to %.1f MB), heap peak +%.1f MB, retained after %+.1f MB",
				kind, float64(u.alloc)/1e6, float64(u.alloc)/float64(got), got, float64(uses[0].alloc)/1e6, float64(uses[2].alloc)/1e6, float64(u.peak)/1e6, float64(u.retained)/1e6)
			if limit := 12 * uint64(got); u.alloc > limit {
				t.Errorf("a %d-byte answer allocated %d bytes, over %d (12 times its size)", got, u.alloc, limit)
			}
			// Warm: three calls in a row with no collection between them,
			// so what the pools keep is reused, as under steady load.
			gc := debug.SetGCPercent(-1)
			w := measure(func() {
				for range 3 {
					if _, _, err := post(ctx, hc, endpoint, call); err != nil {
						t.Fatal(err)
					}
				}
			})
			debug.SetGCPercent(gc)
			t.Logf("%s upstream, 16 MB tool result, warm: %.1f MB allocated per call (%.1f×)", kind, float64(w.alloc)/3e6, float64(w.alloc)/3/float64(got))

			// The gateway pages its list: every page, as a client lists.
			listAll := func() (bytes int64, pages int) {
				cursor := ""
				for {
					params := `{}`
					if cursor != "" {
						params = `{"cursor":` + strconv.Quote(cursor) + `}`
					}
					resp, err := postJSON(ctx, hc, endpoint, nil, `{"jsonrpc":"2.0","id":2,"method":"tools/list","params":`+params+`}`)
					if err != nil {
						t.Fatal(err)
					}
					var page struct {
						Result struct {
							Tools      []struct{} `json:"tools"`
							NextCursor string     `json:"nextCursor"`
						} `json:"result"`
					}
					b, err := io.ReadAll(resp.Body)
					resp.Body.Close()
					if err != nil || json.Unmarshal(b, &page) != nil || len(page.Result.Tools) == 0 {
						t.Fatalf("tools/list: %v: %.200s", err, b)
					}
					bytes += int64(len(b))
					pages++
					if cursor = page.Result.NextCursor; cursor == "" {
						return bytes, pages
					}
				}
			}
			n, pages := listAll()
			if n < largeTools*300 {
				t.Fatalf("tools/list: %d bytes in all", n)
			}
			u = measure(func() { listAll() })
			t.Logf("%s upstream, a 10,000-tool list served from the gateway's cache (%d pages): %.1f MB allocated (%.1f× the %d bytes answered), heap peak +%.1f MB",
				kind, pages, float64(u.alloc)/1e6, float64(u.alloc)/float64(n), n, float64(u.peak)/1e6)

			if kind == "stdio" {
				// A reload: churn says the list changed, the gateway
				// lists the upstream again (and the client is told).
				v := gw.Version()
				u = measure(func() {
					post(ctx, hc, endpoint, `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"up__churn","arguments":{}}}`)
					for gw.Version() == v && ctx.Err() == nil {
						time.Sleep(time.Millisecond)
					}
				})
				t.Logf("%s upstream, a 10,000-tool list read again from the upstream: %.1f MB allocated (%.1f× its size), heap peak +%.1f MB, retained after %+.1f MB",
					kind, float64(u.alloc)/1e6, float64(u.alloc)/float64(n), float64(u.peak)/1e6, float64(u.retained)/1e6)
				// The edge caches the pages it encoded until the list
				// changes: the first listing after a change builds them.
				u = measure(func() { listAll() })
				t.Logf("%s upstream, the first listing of the 10,000 tools after the change (%d pages): %.1f MB allocated (%.1f× the bytes answered), heap peak +%.1f MB",
					kind, pages, float64(u.alloc)/1e6, float64(u.alloc)/float64(n), float64(u.peak)/1e6)
			}
		})
	}
}

// TestLargeAnswerRefusedThroughGateway: with the process's large-message
// budget held, a client's call whose upstream answer is large is answered
// -32603 saying the server is busy with large messages, over a stdio and
// an HTTP upstream; once there is room it is answered in full, and the
// budget is given back when the client has its answer.
func TestLargeAnswerRefusedThroughGateway(t *testing.T) {
	old := budget.Default()
	// Room for the 4 MB tool list the gateway loads, not for the 2 MiB
	// answer while 7 MiB are held.
	b := budget.New(8<<20, 1<<20, 300*time.Millisecond)
	budget.SetDefault(b)
	t.Cleanup(func() { budget.SetDefault(old) })
	for kind, up := range largeUpstreams(t) {
		t.Run(kind, func(t *testing.T) {
			endpoint, _ := largeGateway(t, up, streamhttp.Options{})
			hc := newClient(t)
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			call := func() string {
				resp, err := postJSON(ctx, hc, endpoint, nil, `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"up__mid","arguments":{}}}`)
				if err != nil {
					t.Fatal(err)
				}
				defer resp.Body.Close()
				got, _ := io.ReadAll(resp.Body)
				return string(got)
			}
			other := b.Hold()
			if err := other.Add(ctx, 7<<20); err != nil {
				t.Fatal(err)
			}
			if got := call(); !strings.Contains(got, `"code":-32603`) || !strings.Contains(got, "busy with large messages") || !strings.Contains(got, `"id":5`) {
				t.Errorf("with the budget held: %.300s; want -32603 saying the server is busy with large messages", got)
			}
			other.Release()
			if got := call(); len(got) < midText || strings.Contains(got, "busy") {
				t.Errorf("with room: %d bytes, %.200s; want the whole answer", len(got), got)
			}
			// Given back once the answer is written, which the client may read
			// a moment before.
			for deadline := time.Now().Add(2 * time.Second); b.Used() != 0 && time.Now().Before(deadline); {
				time.Sleep(time.Millisecond)
			}
			if n := b.Used(); n != 0 {
				t.Errorf("%d bytes of the budget held once answered", n)
			}
		})
	}
}
