package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcpx-dev/mcpx/generated/mcp"
	"github.com/mcpx-dev/mcpx/runtime/catalog"
	"github.com/mcpx-dev/mcpx/runtime/config"
	"github.com/mcpx-dev/mcpx/runtime/edge"
	"github.com/mcpx-dev/mcpx/runtime/gateway"
	"github.com/mcpx-dev/mcpx/runtime/host"
	"github.com/mcpx-dev/mcpx/runtime/server"
	"github.com/mcpx-dev/mcpx/runtime/transport/streamhttp"
)

// Ten upstreams of 200 tools each (issue 17): what the gateway's first
// merged tools/list costs (connecting the ten, each one's list, the merge,
// the answer) against a cached one, and how long `mcpx serve` takes to be
// ready with ten stdio upstreams.

const (
	bigUpstreams = 10
	toolsEach    = 200
)

// manyTools is a catalog of toolsEach generated tools, twenty services of
// ten operations, each with a description and a schema of a few
// properties, like a real server's.
func manyTools() *catalog.Catalog {
	c := catalog.New()
	for i := range toolsEach {
		svc, op := toolParts(i)
		schema := fmt.Sprintf(`{"type":"object","properties":{"id":{"type":"string","description":"The %s's identifier."},`+
			`"query":{"type":"string","description":"What to %s."},"limit":{"type":"integer","minimum":1,"maximum":100},`+
			`"fields":{"type":"array","items":{"type":"string","enum":["name","owner","created","updated"]}}},"required":["id"]}`, svc, op)
		c.AddTool(mcp.Tool{
			Name:        svc + "_" + op,
			Title:       strings.ToUpper(op[:1]) + op[1:] + " in " + svc,
			Description: fmt.Sprintf("%s an item of %s. The item is found by its identifier; the query narrows it, and the limit and fields shape what comes back. Read-only operations never change the item.", op, svc),
			InputSchema: json.RawMessage(schema),
		}, func(_ context.Context, args json.RawMessage) (*mcp.CallToolResult, error) {
			return catalog.TextResult(string(args)), nil
		})
	}
	return c
}

var toolOps = []string{"search", "get", "list", "create", "update", "delete", "archive", "restore", "export", "import"}

// toolParts are the service and operation of tool i of manyTools.
func toolParts(i int) (svc, op string) {
	return fmt.Sprintf("svc%02d", i/len(toolOps)), toolOps[i%len(toolOps)]
}

// toolsStdioUpstream serves manyTools on stdio (role stdio-tools200).
func toolsStdioUpstream() error {
	return host.Stdio(context.Background(), host.Config{NS: manyTools(), Info: mcp.Implementation{Name: "tools200", Version: "bench"}, Log: discardLog()}, os.Stdin, os.Stdout)
}

// tenUpstreams serves bigUpstreams catalogs over loopback HTTP in this
// process and returns the gateway's config naming them u0..u9.
func tenUpstreams(tb testing.TB) *config.Config {
	servers := map[string]any{}
	for i := range bigUpstreams {
		e := &edge.Edge{Server: &server.Server{NS: manyTools(), Info: mcp.Implementation{Name: "tools200", Version: "bench"}}}
		srv := httptest.NewServer(streamhttp.New(e, streamhttp.Options{Logger: discardLog()}))
		tb.Cleanup(srv.Close)
		servers[fmt.Sprintf("u%d", i)] = map[string]any{"url": srv.URL + "/mcp"}
	}
	b, _ := json.Marshal(map[string]any{"mcpServers": servers})
	cfg, err := config.Parse("ten.json", b, nil)
	if err != nil {
		tb.Fatal(err)
	}
	return cfg
}

// listVia lists every tool through h as a 2026-07-28 client, following
// the pages, and returns their names.
func listVia(tb testing.TB, h http.Handler) []string {
	var names []string
	for _, page := range listPages(tb, h) {
		var r struct {
			Result struct {
				Tools []struct{ Name string } `json:"tools"`
			} `json:"result"`
		}
		if err := json.Unmarshal(page, &r); err != nil {
			tb.Fatal(err)
		}
		for _, t := range r.Result.Tools {
			names = append(names, t.Name)
		}
	}
	return names
}

// listPages are the bodies of the pages of tools/list through h. Only
// the cursor is read of each (the client's decoding is not what the
// benchmark measures).
func listPages(tb testing.TB, h http.Handler) [][]byte {
	var pages [][]byte
	cursor := ""
	for {
		params := `{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`
		if cursor != "" {
			params += `,"cursor":` + string(mustJSON(cursor))
		}
		body := `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":` + params + `}}`
		req := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("MCP-Protocol-Version", modernRev)
		req.Header.Set("Mcp-Method", "tools/list")
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		page := w.Body.Bytes()
		if w.Code != http.StatusOK || !bytes.HasPrefix(page, []byte(`{"jsonrpc":"2.0","id":1,"result":`)) {
			tb.Fatalf("tools/list: %d %.300s", w.Code, page)
		}
		pages = append(pages, page)
		// The result's members are written in order: its nextCursor, if
		// any, comes before its tools.
		cursor = ""
		head := page[:max(0, bytes.Index(page, []byte(`"tools":[`)))]
		if i := bytes.Index(head, []byte(`"nextCursor":`)); i >= 0 {
			var c string
			if err := json.NewDecoder(bytes.NewReader(head[i+len(`"nextCursor":`):])).Decode(&c); err == nil {
				cursor = c
			}
		}
		if cursor == "" || len(pages) > 1000 {
			return pages
		}
	}
}

func mustJSON(v any) []byte { b, _ := json.Marshal(v); return b }

// tenGateway builds the gateway and its HTTP endpoint (in memory) over cfg.
func tenGateway(tb testing.TB, cfg *config.Config) (*gateway.Gateway, http.Handler) {
	g, err := host.Gateway(context.Background(), cfg, mcp.Implementation{Name: "mcpx", Version: "bench"}, discardLog())
	if err != nil {
		tb.Fatal(err)
	}
	e := &edge.Edge{Server: &server.Server{NS: g, Info: mcp.Implementation{Name: "mcpx", Version: "bench"}}, Log: discardLog()}
	return g, streamhttp.New(e, streamhttp.Options{Logger: discardLog()})
}

// TestToolsListTen: the merged list of the ten upstreams has every tool,
// each once, under its upstream's prefix, first and cached alike.
func TestToolsListTen(t *testing.T) {
	cfg := tenUpstreams(t)
	g, h := tenGateway(t, cfg)
	defer g.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := g.Ready(ctx); err != nil { // the first list may not wait for a slow upstream
		t.Fatal(err)
	}
	var want []string
	for i := range bigUpstreams {
		for j := range toolsEach {
			svc, op := toolParts(j)
			want = append(want, fmt.Sprintf("u%d__%s_%s", i, svc, op))
		}
	}
	slices.Sort(want)
	for _, which := range []string{"first", "cached"} {
		got := listVia(t, h)
		slices.Sort(got)
		if !slices.Equal(got, want) {
			t.Fatalf("%s tools/list: %d tools, want the %d of the ten upstreams", which, len(got), len(want))
		}
	}
}

// BenchmarkToolsListTen: first is a fresh gateway's first tools/list
// (the ten upstreams connected lazily, as a client's first request does),
// cached the same list from a gateway that has answered it before.
// held-kB is the heap the gateway keeps once it has answered (after GC,
// against before it was built). B/op and allocs/op count the upstreams
// too (same process); the cached path has no upstream work.
func BenchmarkToolsListTen(b *testing.B) {
	cfg := tenUpstreams(b)
	b.Run("first", func(b *testing.B) {
		var held uint64
		for b.Loop() {
			b.StopTimer()
			before := heapInUse()
			b.StartTimer()
			g, h := tenGateway(b, cfg)
			if n := len(listVia(b, h)); n != bigUpstreams*toolsEach {
				b.Fatalf("first tools/list: %d tools", n)
			}
			b.StopTimer()
			held = max(held, heapInUse()-min(before, heapInUse()))
			g.Close()
			b.StartTimer()
		}
		b.ReportMetric(float64(held)/1024, "held-kB")
	})
	b.Run("cached", func(b *testing.B) {
		g, h := tenGateway(b, cfg)
		defer g.Close()
		pages := listPages(b, h)
		size := 0
		for _, p := range pages {
			size += len(p)
		}
		for b.Loop() {
			listPages(b, h)
		}
		b.ReportMetric(float64(len(pages)), "pages")
		b.ReportMetric(float64(size)/1024, "answer-kB")
	})
}

func heapInUse() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapInuse
}

// BenchmarkStartupStdio: the built `mcpx serve` with n stdio upstreams,
// eager, from exec to /readyz answering 200 (ready-ms), and on to the
// first tools/list holding every tool (listed-ms); mcpx-cpu-ms is mcpx's
// own CPU time by then. Two upstreams: tools200, this test binary as role
// stdio-tools200 (200 tools each), and fixture, mcpx-fixture (a smaller
// binary, 30 tools), which shows how much of the time is the upstream
// processes' own start. One op is one start; the medians over the ops
// are reported (run with -benchtime=Nx).
func BenchmarkStartupStdio(b *testing.B) {
	fixture, err := fixtureBin()
	if err != nil {
		b.Fatal(err)
	}
	for _, up := range []string{"tools200", "fixture"} {
		for _, n := range []int{1, bigUpstreams} {
			b.Run(fmt.Sprintf("%s/upstreams=%d", up, n), func(b *testing.B) {
				servers := map[string]any{}
				for i := range n {
					entry := map[string]any{"command": fixture, "mcpx": map[string]any{"start": "eager"}}
					if up == "tools200" {
						entry = map[string]any{
							"command": os.Args[0], "args": []string{"-test.run=^$"},
							"env":  map[string]string{serveRoleEnv: "stdio-tools200"},
							"mcpx": map[string]any{"start": "eager"},
						}
					}
					servers[fmt.Sprintf("u%d", i)] = entry
				}
				cfgBytes, _ := json.Marshal(map[string]any{"mcpServers": servers})
				cfg := filepath.Join(b.TempDir(), "mcpx.json")
				if err := os.WriteFile(cfg, cfgBytes, 0o600); err != nil {
					b.Fatal(err)
				}
				want := n * toolsEach
				if up == "fixture" {
					want = 0 // every upstream's tools: counted by the first start
				}
				var ready, listed, cpu []time.Duration
				for b.Loop() {
					r, l, c, got := startOnce(b, cfg, want)
					ready, listed, cpu = append(ready, r), append(listed, l), append(cpu, c)
					want = got
				}
				for _, d := range [][]time.Duration{ready, listed, cpu} {
					slices.Sort(d)
				}
				b.ReportMetric(float64(ready[len(ready)/2].Microseconds())/1000, "ready-ms")
				b.ReportMetric(float64(listed[len(listed)/2].Microseconds())/1000, "listed-ms")
				b.ReportMetric(float64(cpu[len(cpu)/2].Microseconds())/1000, "mcpx-cpu-ms")
			})
		}
	}
}

// startOnce starts mcpx serve on cfg and returns how long it took to
// /readyz 200 and to a tools/list of want tools (0: whatever the first
// list after ready holds), mcpx's CPU time by then, and how many tools
// were listed; mcpx is stopped after.
func startOnce(b *testing.B, cfg string, want int) (ready, listed, cpu time.Duration, tools int) {
	bin, err := mcpxBin()
	if err != nil {
		b.Fatal(err)
	}
	start := time.Now()
	cmd := exec.Command(bin, "serve", "--config", cfg, "--listen", "127.0.0.1:0", "--admin", "127.0.0.1:0")
	p := &mcpxProc{cmd: cmd}
	stderr, _ := cmd.StderrPipe()
	stdin, _ := cmd.StdinPipe()
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	defer func() {
		stdin.Close()
		cmd.Process.Signal(os.Interrupt)
		cmd.Wait()
	}()
	addrs := make(chan struct{})
	go scanAddrs(p, stderr, addrs, nil)
	select {
	case <-addrs:
	case <-time.After(60 * time.Second):
		b.Fatal("mcpx serve did not name its addresses within 60 s")
	}
	p.waitReady(b, 60*time.Second)
	ready = time.Since(start)
	c := newLoadClient(0, modernRev, p.url)
	defer c.end()
	for {
		n := countTools(b, c)
		if n >= want && n > 0 {
			return ready, time.Since(start), procCPU(cmd.Process.Pid), n
		}
		if time.Since(start) > time.Minute {
			b.Fatalf("no tools/list of %d tools within a minute (%d)", want, n)
		}
	}
}

// countTools lists every page of tools/list through c and counts them.
func countTools(tb testing.TB, c *loadClient) int {
	n, cursor := 0, ""
	for {
		c.id++
		params := map[string]any{}
		if cursor != "" {
			params["cursor"] = cursor
		}
		r, err := c.post(context.Background(), "tools/list", "", c.id, params)
		if err != nil || r.Error != nil {
			tb.Fatalf("tools/list: %v %+v", err, r)
		}
		var res struct {
			Tools      []json.RawMessage `json:"tools"`
			NextCursor string            `json:"nextCursor"`
		}
		if err := json.Unmarshal(r.Result, &res); err != nil {
			tb.Fatal(err)
		}
		n += len(res.Tools)
		if cursor = res.NextCursor; cursor == "" {
			return n
		}
	}
}
