package bench

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpx-dev/mcpx/testkit/testbin"
)

// The load run (issue 17, "Load and leaks"): many concurrent clients of
// every revision against the built `mcpx serve`, in front of two real
// upstreams, for a while; a tenth of the clients close their connection
// in the middle of a slow call, again and again. Every reply is checked
// against its request: its id, and a token the request carried that the
// tool echoes (ids repeat across clients on purpose, so a reply handed to
// another client's request of the same id is caught by its token). After
// the run the mcpx process's goroutines and open files must come back to
// what they were before it.
//
// The upstreams, each its own process:
//
//   - fx: mcpx-fixture over Streamable HTTP (mcpx's own runtime, the
//     conformance surface); json_schema_2020_12_tool echoes its arguments.
//   - sdk: the official Go SDK's server over stdio (this test binary as
//     role stdio-gosdk), with echo and slow (sleeps, then echoes; the call
//     the abrupt clients abandon). The SDK rather than server-everything:
//     a second implementation that is not mcpx's, without Node.js on two
//     shared cores already busy with 1,000 clients.
//
// `make load` runs it at 1,000 clients for 60 s; `make test` runs it
// short (200 clients, 10 s). Nothing here asserts a time.

var (
	loadClients  = flag.Int("load.clients", 200, "TestLoad: concurrent clients")
	loadDuration = flag.Duration("load.duration", 10*time.Second, "TestLoad: how long the clients call")
	loadIdleWait = flag.Duration("load.idlewait", 0, "TestLoad: after the run, also wait up to this long for mcpx's idle upstream connections to expire and the raw counts to reach their baseline")
)

// loadRevisions are the five revisions, one per client in turn.
var loadRevisions = []string{"2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28"}

const modernRev = "2026-07-28"

// stdioRoles are roles of this test binary served on standard input and
// output (an upstream mcpx starts as a command), not on a port.
var stdioRoles = map[string]func() error{
	"stdio-gosdk":    sdkStdioUpstream,
	"stdio-tools200": toolsStdioUpstream, // tools_test.go
}

// sdkStdioUpstream is the Go SDK's server on stdio with echo and slow.
func sdkStdioUpstream() error {
	s := sdk.NewServer(&sdk.Implementation{Name: "go-sdk", Version: "load"}, nil)
	schema := json.RawMessage(`{"type":"object","properties":{"token":{"type":"string"},"ms":{"type":"integer"}}}`)
	type args struct {
		Token string `json:"token"`
		MS    int    `json:"ms"`
	}
	read := func(req *sdk.CallToolRequest) (args, error) {
		var a args
		err := json.Unmarshal(req.Params.Arguments, &a)
		return a, err
	}
	s.AddTool(&sdk.Tool{Name: "echo", InputSchema: schema}, func(_ context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		a, err := read(req)
		if err != nil {
			return nil, err
		}
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: a.Token}}}, nil
	})
	s.AddTool(&sdk.Tool{Name: "slow", InputSchema: schema}, func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		a, err := read(req)
		if err != nil {
			return nil, err
		}
		t := time.NewTimer(time.Duration(a.MS) * time.Millisecond)
		defer t.Stop()
		select {
		case <-t.C:
		case <-ctx.Done(): // the client went away and mcpx said so
			return nil, ctx.Err()
		}
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: a.Token}}}, nil
	})
	err := s.Run(context.Background(), &sdk.StdioTransport{})
	if err == nil || errors.Is(err, io.EOF) || errors.Is(err, context.Canceled) {
		return nil
	}
	return err
}

// fixtureBin is mcpx-fixture, built next to the mcpx binary.
var fixtureBin = sync.OnceValues(func() (string, error) {
	if _, err := mcpxBin(); err != nil {
		return "", err
	}
	return testbin.Build(binDir, "./cmd/mcpx-fixture")
})

// mcpxProc is a running `mcpx serve --admin`.
type mcpxProc struct {
	cmd   *exec.Cmd
	url   string // the /mcp endpoint
	admin string // http://host:port of /metrics, /readyz, /debug/pprof/

	mu       sync.Mutex
	warnings map[string]int // mcpx's warnings and errors by message
	first    []string       // the first two of each message, whole
}

// warned counts a warning or error line of mcpx's log by its msg.
func (p *mcpxProc) warned(line string) {
	msg := line
	if i := strings.Index(line, "msg="); i >= 0 {
		msg = line[i:]
		if j := strings.Index(msg, `" `); j >= 0 {
			msg = msg[:j+1]
		}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.warnings == nil {
		p.warnings = map[string]int{}
	}
	p.warnings[msg]++
	if p.warnings[msg] <= 2 && len(p.first) < 20 { // two of each kind
		p.first = append(p.first, line)
	}
}

// logWarnings reports mcpx's warnings and errors, counted by message.
func (p *mcpxProc) logWarnings(tb testing.TB) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for msg, n := range p.warnings {
		tb.Logf("mcpx logged %d× %s", n, msg)
	}
	for _, line := range p.first {
		tb.Logf("  e.g. %s", line)
	}
}

// startServe runs `mcpx serve --config cfg --admin` and waits for both
// its addresses (its log on stderr names them); it stops with the test.
func startServe(tb testing.TB, cfg string, extra ...string) *mcpxProc {
	bin, err := mcpxBin()
	if err != nil {
		tb.Fatal(err)
	}
	args := append([]string{"serve", "--config", cfg, "--listen", "127.0.0.1:0", "--admin", "127.0.0.1:0"}, extra...)
	cmd := exec.Command(bin, args...)
	stdin, _ := cmd.StdinPipe()
	stderr, err := cmd.StderrPipe()
	if err != nil {
		tb.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		stdin.Close()
		cmd.Process.Signal(os.Interrupt)
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			cmd.Process.Kill()
			<-done
		}
	})
	p := &mcpxProc{cmd: cmd}
	found := make(chan struct{})
	go scanAddrs(p, stderr, found, p.warned)
	select {
	case <-found:
	case <-time.After(60 * time.Second):
		tb.Fatal("mcpx serve did not name its addresses within 60 s")
	}
	return p
}

// scanAddrs reads mcpx's log for its two addresses, closing found once
// it has both, and passes its warnings and errors to warn (if not nil).
func scanAddrs(p *mcpxProc, stderr io.Reader, found chan struct{}, warn func(string)) {
	s := bufio.NewScanner(stderr)
	var once sync.Once
	for s.Scan() { // to the end: a full pipe would block mcpx
		line := s.Text()
		if p.admin == "" && strings.Contains(line, "admin listener") {
			if i := strings.Index(line, "url=http://"); i >= 0 {
				p.admin = strings.Fields(line[i+len("url="):])[0]
			}
		} else if i := strings.Index(line, "http://"); i >= 0 && p.url == "" && strings.Contains(line, "/mcp") {
			p.url = strings.Fields(line[i:])[0]
		} else if warn != nil && (strings.Contains(line, "level=ERROR") || strings.Contains(line, "level=WARN") ||
			strings.Contains(line, "http: ")) { // net/http's own log: accept errors, panics
			warn(line)
		}
		if p.url != "" && p.admin != "" {
			once.Do(func() { close(found) })
		}
	}
}

// runtimeTrace reports whether line is the Go runtime's tracing
// (GODEBUG=gctrace=1, scavtrace=1) rather than the process's own.
func runtimeTrace(line string) bool {
	return strings.HasPrefix(line, "gc ") && strings.Contains(line, " @") || strings.HasPrefix(line, "scav ")
}

// waitReady polls /readyz until it answers 200.
func (p *mcpxProc) waitReady(tb testing.TB, within time.Duration) time.Duration {
	start := time.Now()
	for {
		resp, err := adminClient.Get(p.admin + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return time.Since(start)
			}
		}
		if time.Since(start) > within {
			tb.Fatalf("/readyz not 200 within %s (last: %v)", within, err)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// adminClient opens a connection per request, so that reading mcpx's
// figures leaves no connection (a goroutine and a file) in it.
var adminClient = &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: 30 * time.Second}

// procFigures are what is read of the mcpx process.
type procFigures struct {
	rss        int64 // bytes, VmRSS
	goroutines int   // all of them (pprof's total)
	fds        int   // entries of /proc/PID/fd
	// poolG and poolFDs are the part of goroutines and fds that is the
	// upstream client's idle connection pool: net/http keeps up to 256
	// idle connections to an HTTP upstream (ownTransport) for 90 s, each
	// a socket and two goroutines. They are state, not leaks, so the
	// baseline check compares the counts without them.
	poolG, poolFDs int
}

func (f procFigures) String() string {
	return fmt.Sprintf("RSS %.1f MiB, %d goroutines, %d open files (of which idle upstream pool: %d goroutines, %d sockets)",
		float64(f.rss)/(1<<20), f.goroutines, f.fds, f.poolG, f.poolFDs)
}

// figures reads the process's RSS and fds from /proc and its goroutines
// from pprof; upstreamPort, when not 0, is the HTTP upstream's port whose
// sockets are the pool's.
func (p *mcpxProc) figures(upstreamPort int) (procFigures, error) {
	var f procFigures
	pid := p.cmd.Process.Pid
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return f, err
	}
	for _, line := range strings.Split(string(status), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, _ := strconv.ParseInt(strings.Fields(rest)[0], 10, 64)
			f.rss = kb << 10
		}
	}
	stacks, err := p.goroutineDump(2)
	if err != nil {
		return f, err
	}
	for _, g := range strings.Split(stacks, "\n\n") {
		if !strings.HasPrefix(g, "goroutine ") {
			continue
		}
		f.goroutines++
		if strings.Contains(g, "net/http.(*persistConn).readLoop") || strings.Contains(g, "net/http.(*persistConn).writeLoop") {
			f.poolG++
		}
	}
	dir := fmt.Sprintf("/proc/%d/fd", pid)
	ents, err := os.ReadDir(dir)
	if err != nil {
		return f, err
	}
	f.fds = len(ents)
	if upstreamPort != 0 {
		toUpstream := socketsTo(upstreamPort)
		for _, e := range ents {
			link, _ := os.Readlink(filepath.Join(dir, e.Name()))
			if inode, ok := strings.CutPrefix(link, "socket:["); ok && toUpstream[strings.TrimSuffix(inode, "]")] {
				f.poolFDs++
			}
		}
	}
	return f, nil
}

// goroutineDump is /debug/pprof/goroutine at the given debug level.
func (p *mcpxProc) goroutineDump(debug int) (string, error) {
	resp, err := adminClient.Get(fmt.Sprintf("%s/debug/pprof/goroutine?debug=%d", p.admin, debug))
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("pprof: %s", resp.Status)
	}
	return string(b), err
}

// socketsTo are the inodes of the TCP sockets whose remote port is port
// (/proc/net/tcp: the remote address is the third field, in hex).
func socketsTo(port int) map[string]bool {
	inodes := map[string]bool{}
	for _, file := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		b, err := os.ReadFile(file)
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(b), "\n")[1:] {
			f := strings.Fields(line)
			if len(f) < 10 {
				continue
			}
			_, hexPort, _ := strings.Cut(f[2], ":")
			if p, err := strconv.ParseInt(hexPort, 16, 32); err == nil && int(p) == port {
				inodes[f[9]] = true
			}
		}
	}
	return inodes
}

// loadStats are one client's counts and latencies.
type loadStats struct {
	ok, wrong, lost, abandoned int
	latencies                  []time.Duration // of the fast calls that were answered right
	problems                   []string        // the first few, for the report
}

func (s *loadStats) fail(wrong bool, format string, args ...any) {
	if wrong {
		s.wrong++
	} else {
		s.lost++
	}
	if len(s.problems) < 3 {
		s.problems = append(s.problems, fmt.Sprintf(format, args...))
	}
}

// loadClient is one client: its own connection (its own transport), its
// revision, its legacy session.
type loadClient struct {
	n       int
	rev     string
	url     string
	hc      *http.Client
	tr      *http.Transport
	session string
	id      int64
}

func newLoadClient(n int, rev, url string) *loadClient {
	tr := &http.Transport{MaxIdleConnsPerHost: 1, DisableCompression: true}
	return &loadClient{n: n, rev: rev, url: url, tr: tr, hc: &http.Client{Transport: tr}}
}

// rpcReply is the response a request got.
type rpcReply struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// post sends one JSON-RPC message; for a request (id != 0) it returns the
// response, from a JSON body or the SSE stream (notifications skipped).
func (c *loadClient) post(ctx context.Context, method, tool string, id int64, params map[string]any) (*rpcReply, error) {
	msg := map[string]any{"jsonrpc": "2.0", "method": method}
	if id != 0 {
		msg["id"] = id
	}
	if c.rev == modernRev {
		params["_meta"] = map[string]any{
			"io.modelcontextprotocol/protocolVersion":    modernRev,
			"io.modelcontextprotocol/clientCapabilities": map[string]any{},
		}
	}
	if params != nil {
		msg["params"] = params
	}
	body, _ := json.Marshal(msg)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.url, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if c.session != "" {
		req.Header.Set("Mcp-Session-Id", c.session)
	}
	if c.rev == modernRev {
		req.Header.Set("MCP-Protocol-Version", modernRev)
		req.Header.Set("Mcp-Method", method)
		if tool != "" {
			req.Header.Set("Mcp-Name", tool)
		}
	} else if c.session != "" && c.rev >= "2025-06-18" {
		req.Header.Set("MCP-Protocol-Version", c.rev)
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if method == "initialize" {
		c.session = resp.Header.Get("Mcp-Session-Id")
	}
	if id == 0 {
		io.Copy(io.Discard, resp.Body)
		if resp.StatusCode != http.StatusAccepted {
			return nil, fmt.Errorf("%s: HTTP %s", method, resp.Status)
		}
		return nil, nil
	}
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 300))
		return nil, fmt.Errorf("%s: HTTP %s: %s", method, resp.Status, b)
	}
	if !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		var r rpcReply
		if err := json.NewDecoder(resp.Body).Decode(&r); err != nil {
			return nil, fmt.Errorf("%s: %v", method, err)
		}
		return &r, nil
	}
	s := bufio.NewScanner(resp.Body)
	s.Buffer(make([]byte, 64<<10), 4<<20)
	for s.Scan() {
		data, ok := strings.CutPrefix(s.Text(), "data:")
		if !ok {
			continue
		}
		var r rpcReply
		if err := json.Unmarshal([]byte(strings.TrimSpace(data)), &r); err != nil {
			return nil, fmt.Errorf("%s: an SSE event that is not JSON: %v", method, err)
		}
		if r.ID == nil && r.Method != "" {
			continue // a notification
		}
		return &r, nil // the response, or a request to the client (checked by the caller)
	}
	if err := s.Err(); err != nil {
		return nil, err
	}
	return nil, fmt.Errorf("%s: the SSE stream ended without a response", method)
}

// setup opens a legacy client's session (initialize, initialized).
func (c *loadClient) setup(ctx context.Context) error {
	if c.rev == modernRev {
		return nil
	}
	c.id++
	r, err := c.post(ctx, "initialize", "", c.id, map[string]any{
		"protocolVersion": c.rev, "capabilities": map[string]any{},
		"clientInfo": map[string]any{"name": "load", "version": "1"},
	})
	if err != nil {
		return err
	}
	if r.Error != nil || c.session == "" {
		return fmt.Errorf("initialize: %+v, session %q", r.Error, c.session)
	}
	_, err = c.post(ctx, "notifications/initialized", "", 0, nil)
	return err
}

// end closes the client's session and its idle connection.
func (c *loadClient) end() {
	if c.session != "" {
		req, _ := http.NewRequest(http.MethodDelete, c.url, nil)
		req.Header.Set("Mcp-Session-Id", c.session)
		if c.rev >= "2025-06-18" {
			req.Header.Set("MCP-Protocol-Version", c.rev)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		if resp, err := c.hc.Do(req.WithContext(ctx)); err == nil {
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
		cancel()
	}
	c.tr.CloseIdleConnections()
}

// call is one tools/call whose reply is checked; kind is fx, echo or slow.
type call struct {
	kind string
	ms   int
}

func (c call) tool() string {
	switch c.kind {
	case "fx":
		return "fx__json_schema_2020_12_tool"
	case "echo":
		return "sdk__echo"
	}
	return "sdk__slow"
}

// do makes the call and checks its reply; abandonAfter > 0 closes the
// connection that long into the call (the reply, if one came first, is
// still checked).
func (c *loadClient) do(cl call, abandonAfter time.Duration, st *loadStats) {
	c.id++
	id := c.id
	token := fmt.Sprintf("tok-%d-%d-%d-end", c.n, id, rand.Uint32())
	args := map[string]any{"token": token, "ms": cl.ms}
	if cl.kind == "fx" {
		args = map[string]any{"name": token, "email": "load@example.com"}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if abandonAfter > 0 {
		t := time.AfterFunc(abandonAfter, cancel)
		defer t.Stop()
	}
	start := time.Now()
	r, err := c.post(ctx, "tools/call", cl.tool(), id, map[string]any{"name": cl.tool(), "arguments": args})
	took := time.Since(start)
	switch {
	case err != nil && abandonAfter > 0 && errors.Is(err, context.Canceled):
		st.abandoned++
		return
	case err != nil:
		st.fail(false, "client %d (%s) %s id %d: %v", c.n, c.rev, cl.kind, id, err)
		return
	case string(r.ID) != strconv.FormatInt(id, 10):
		st.fail(true, "client %d (%s) %s: reply id %s to request %d", c.n, c.rev, cl.kind, r.ID, id)
		return
	case r.Method != "":
		st.fail(true, "client %d (%s) %s id %d: a request %s where its reply belonged", c.n, c.rev, cl.kind, id, r.Method)
		return
	case r.Error != nil:
		st.fail(false, "client %d (%s) %s id %d: error %d %s", c.n, c.rev, cl.kind, id, r.Error.Code, r.Error.Message)
		return
	}
	var res struct {
		Content []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"content"`
		IsError bool `json:"isError"`
	}
	if err := json.Unmarshal(r.Result, &res); err != nil || len(res.Content) != 1 || res.IsError {
		st.fail(false, "client %d (%s) %s id %d: result %s", c.n, c.rev, cl.kind, id, r.Result)
		return
	}
	if !strings.Contains(res.Content[0].Text, token) {
		st.fail(true, "client %d (%s) %s id %d: text %q does not carry the request's token %s", c.n, c.rev, cl.kind, id, res.Content[0].Text, token)
		return
	}
	st.ok++
	if cl.kind != "slow" {
		st.latencies = append(st.latencies, took)
	}
}

// loadConfig writes the gateway's config: fx at fxURL, sdk this binary
// on stdio. maxInFlight is raised above the clients: the run measures the
// gateway's forwarding, not its per-upstream queue.
func loadConfig(tb testing.TB, fxURL string, clients int) string {
	inflight := max(256, 2*clients)
	cfg := map[string]any{"mcpServers": map[string]any{
		"fx": map[string]any{"url": fxURL, "mcpx": map[string]any{"maxInFlight": inflight, "start": "eager"}},
		"sdk": map[string]any{
			"command": os.Args[0], "args": []string{"-test.run=^$"},
			"env":  map[string]string{serveRoleEnv: "stdio-gosdk"},
			"mcpx": map[string]any{"maxInFlight": inflight, "start": "eager"},
		},
	}}
	b, _ := json.Marshal(cfg)
	path := filepath.Join(tb.TempDir(), "mcpx.json")
	if err := os.WriteFile(path, b, 0o600); err != nil {
		tb.Fatal(err)
	}
	return path
}

// startFixture runs mcpx-fixture over HTTP and returns its URL and port;
// what it writes on stderr besides its address is passed to logf.
func startFixture(tb testing.TB, logf func(string)) (string, int) {
	bin, err := fixtureBin()
	if err != nil {
		tb.Fatal(err)
	}
	cmd := exec.Command(bin, "--listen", "127.0.0.1:0")
	stdin, _ := cmd.StdinPipe()
	stderr, err := cmd.StderrPipe()
	if err != nil {
		tb.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		stdin.Close()
		cmd.Process.Signal(os.Interrupt)
		cmd.Wait()
	})
	urls := make(chan string, 1)
	go func() {
		s := bufio.NewScanner(stderr)
		for s.Scan() { // to the end: a full pipe would block the fixture
			if i := strings.Index(s.Text(), "http://"); i >= 0 && len(urls) == 0 && cap(urls) > 0 && strings.Contains(s.Text(), "serving") {
				urls <- strings.Fields(s.Text()[i:])[0]
				continue
			}
			logf(s.Text())
		}
	}()
	var url string
	select {
	case url = <-urls:
	case <-time.After(60 * time.Second):
		tb.Fatal("mcpx-fixture did not say where it listens within 60 s")
	}
	u := strings.TrimSuffix(url, "/mcp")
	port, err := strconv.Atoi(u[strings.LastIndexByte(u, ':')+1:])
	if err != nil {
		tb.Fatalf("fixture URL %q: %v", url, err)
	}
	return url, port
}

func percentile(d []time.Duration, p float64) time.Duration {
	if len(d) == 0 {
		return 0
	}
	return d[min(len(d)-1, int(float64(len(d))*p))]
}

func TestLoad(t *testing.T) {
	if testing.Short() {
		t.Skip("the load run starts processes and runs for -load.duration")
	}
	clients, duration := *loadClients, *loadDuration
	var fxLog struct {
		sync.Mutex
		lines []string
		n     int
	}
	fxURL, fxPort := startFixture(t, func(line string) {
		if runtimeTrace(line) {
			return // GODEBUG=gctrace=1 must not crowd out the fixture's own lines
		}
		fxLog.Lock()
		defer fxLog.Unlock()
		if fxLog.n++; len(fxLog.lines) < 10 {
			fxLog.lines = append(fxLog.lines, line)
		}
	})
	defer func() {
		fxLog.Lock()
		defer fxLog.Unlock()
		if fxLog.n > 0 {
			t.Logf("mcpx-fixture wrote %d lines on stderr; the first:\n%s", fxLog.n, strings.Join(fxLog.lines, "\n"))
		}
	}()
	mx := startServe(t, loadConfig(t, fxURL, clients), "--max-in-flight", strconv.Itoa(max(1024, 2*clients)),
		"--max-sessions", strconv.Itoa(max(1024, 2*clients)))
	mx.waitReady(t, 60*time.Second)

	// Warm up: a client of each revision calls each tool once, then ends;
	// the baseline is read once the counts are steady.
	var warm loadStats
	for i, rev := range loadRevisions {
		c := newLoadClient(-1-i, rev, mx.url)
		if err := c.setup(context.Background()); err != nil {
			t.Fatalf("%s: %v", rev, err)
		}
		for _, cl := range []call{{kind: "fx"}, {kind: "echo"}, {kind: "slow", ms: 10}} {
			c.do(cl, 0, &warm)
		}
		c.end()
	}
	if warm.lost+warm.wrong > 0 {
		t.Fatalf("the warm-up failed: %s", strings.Join(warm.problems, "; "))
	}
	base := steady(t, mx, fxPort)
	t.Logf("baseline: %s", base)

	// The run. Client n speaks revision n%5; a tenth of each revision's
	// clients ((n/5)%10 == 0) abandon every other call: a slow call whose
	// connection they close 20-300 ms in. The other calls: fx and echo
	// (fast), and a slow call of 50-250 ms one time in ten.
	var (
		wg       sync.WaitGroup
		stats    = make([]loadStats, clients)
		stop     = time.Now().Add(duration)
		running  atomic.Int32
		sampling = make(chan struct{})
		peak     procFigures
		samples  []procFigures
	)
	go func() { // during: one reading a second
		defer close(sampling)
		for running.Load() >= 0 {
			f, err := mx.figures(fxPort)
			if err == nil {
				samples = append(samples, f)
				peak.rss, peak.goroutines, peak.fds = max(peak.rss, f.rss), max(peak.goroutines, f.goroutines), max(peak.fds, f.fds)
			}
			time.Sleep(time.Second)
		}
	}()
	started := time.Now()
	for n := range clients {
		wg.Add(1)
		running.Add(1)
		go func() {
			defer wg.Done()
			defer running.Add(-1)
			c := newLoadClient(n, loadRevisions[n%len(loadRevisions)], mx.url)
			st := &stats[n]
			if err := c.setup(context.Background()); err != nil {
				st.fail(false, "client %d (%s): session: %v", n, c.rev, err)
				return
			}
			defer c.end()
			abrupt := (n/len(loadRevisions))%10 == 0
			rng := rand.New(rand.NewPCG(uint64(n), 17))
			for seq := 0; time.Now().Before(stop); seq++ {
				if abrupt && seq%2 == 0 {
					c.do(call{kind: "slow", ms: 2000}, time.Duration(20+rng.IntN(280))*time.Millisecond, st)
					continue
				}
				switch k := rng.IntN(10); {
				case k < 5:
					c.do(call{kind: "fx"}, 0, st)
				case k < 9:
					c.do(call{kind: "echo"}, 0, st)
				default:
					c.do(call{kind: "slow", ms: 50 + rng.IntN(200)}, 0, st)
				}
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(started)
	running.Store(-1)
	<-sampling

	// The figures per revision.
	var total loadStats
	var problems []string
	t.Logf("%d clients for %s (%s with the last calls ending)", clients, duration, elapsed.Round(time.Millisecond))
	for ri, rev := range loadRevisions {
		var r loadStats
		for n := ri; n < clients; n += len(loadRevisions) {
			s := stats[n]
			r.ok, r.wrong, r.lost, r.abandoned = r.ok+s.ok, r.wrong+s.wrong, r.lost+s.lost, r.abandoned+s.abandoned
			r.latencies = append(r.latencies, s.latencies...)
			problems = append(problems, s.problems...)
		}
		slices.Sort(r.latencies)
		t.Logf("  %s: %d answered right, %d lost, %d crossed, %d abandoned; fast calls p50 %s, p99 %s",
			rev, r.ok, r.lost, r.wrong, r.abandoned, percentile(r.latencies, 0.50).Round(10*time.Microsecond), percentile(r.latencies, 0.99).Round(10*time.Microsecond))
		total.ok, total.wrong, total.lost, total.abandoned = total.ok+r.ok, total.wrong+r.wrong, total.lost+r.lost, total.abandoned+r.abandoned
	}
	t.Logf("  all: %d answered right (%.0f/s), %d lost, %d crossed, %d connections closed mid-call",
		total.ok, float64(total.ok)/elapsed.Seconds(), total.lost, total.wrong, total.abandoned)
	mx.logWarnings(t)
	t.Logf("during: peak RSS %.1f MiB, %d goroutines, %d open files (%d readings)", float64(peak.rss)/(1<<20), peak.goroutines, peak.fds, len(samples))
	if total.lost+total.wrong > 0 {
		if len(problems) > 20 {
			problems = problems[:20]
		}
		t.Errorf("%d replies lost and %d crossed; the first:\n%s", total.lost, total.wrong, strings.Join(problems, "\n"))
	}
	if total.abandoned == 0 {
		t.Error("no call was abandoned mid-call: the run did not test abrupt disconnects")
	}

	// After: goroutines and files back to the baseline (less the idle
	// upstream pool, which expires on its own), within a minute.
	after, ok := settle(mx, fxPort, 60*time.Second, func(f procFigures) bool {
		return f.goroutines-f.poolG <= base.goroutines-base.poolG && f.fds-f.poolFDs <= base.fds-base.poolFDs
	})
	t.Logf("after: %s", after)
	if !ok {
		dump, _ := mx.goroutineDump(1)
		t.Errorf("goroutines or open files did not return to the baseline within 60 s:\nbaseline %s\nafter    %s\n%s", base, after, dump)
	}
	if *loadIdleWait > 0 {
		raw, ok := settle(mx, fxPort, *loadIdleWait, func(f procFigures) bool {
			return f.goroutines <= base.goroutines && f.fds <= base.fds
		})
		t.Logf("after the idle connections expired: %s (reached the raw baseline: %v)", raw, ok)
	}
}

// steady reads the figures until two readings half a second apart agree
// on goroutines and files (within 20 s), and returns the last.
func steady(t *testing.T, mx *mcpxProc, port int) procFigures {
	var last procFigures
	deadline := time.Now().Add(20 * time.Second)
	for {
		f, err := mx.figures(port)
		if err != nil {
			t.Fatal(err)
		}
		if f.goroutines == last.goroutines && f.fds == last.fds && f.poolG == last.poolG && f.poolFDs == last.poolFDs || time.Now().After(deadline) {
			return f
		}
		last = f
		time.Sleep(500 * time.Millisecond)
	}
}

// settle reads the figures until done says so or within has passed.
func settle(mx *mcpxProc, port int, within time.Duration, done func(procFigures) bool) (procFigures, bool) {
	deadline := time.Now().Add(within)
	for {
		f, err := mx.figures(port)
		if err == nil && done(f) {
			return f, true
		}
		if time.Now().After(deadline) {
			return f, false
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// TestLoadChecksReplies: the load run's check of a reply catches a reply
// to another request (its id, or another request's token), a lost one
// (an HTTP error, a JSON-RPC error), and counts a call its client
// abandoned as abandoned, not lost; the right reply passes, from a JSON
// body and from an SSE stream.
func TestLoadChecksReplies(t *testing.T) {
	var mode atomic.Value
	var last atomic.Value // the previous request's token
	last.Store("")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			ID     int64 `json:"id"`
			Params struct {
				Arguments struct {
					Token string `json:"token"`
					MS    int    `json:"ms"`
				} `json:"arguments"`
			} `json:"params"`
		}
		json.NewDecoder(r.Body).Decode(&req)
		token, id := req.Params.Arguments.Token, req.ID
		prev := last.Swap(token).(string)
		reply := func(id int64, text string) string {
			return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"result":{"content":[{"type":"text","text":%q}]}}`, id, text)
		}
		switch mode.Load() {
		case "right":
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, reply(id, token))
		case "sse":
			w.Header().Set("Content-Type", "text/event-stream")
			io.WriteString(w, "event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{}}\n\n")
			io.WriteString(w, "event: message\ndata: "+reply(id, token)+"\n\n")
		case "other-id":
			io.WriteString(w, reply(id+1, token))
		case "other-token":
			io.WriteString(w, reply(id, prev))
		case "http-error":
			http.Error(w, "busy", http.StatusServiceUnavailable)
		case "rpc-error":
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%d,"error":{"code":-32603,"message":"broke"}}`, id)
		case "hang":
			<-r.Context().Done()
		}
	}))
	defer srv.Close()
	c := newLoadClient(1, modernRev, srv.URL)
	defer c.end()
	for _, tc := range []struct {
		mode                       string
		abandon                    time.Duration
		ok, wrong, lost, abandoned int
	}{
		{mode: "right", ok: 1},
		{mode: "sse", ok: 1},
		{mode: "other-id", wrong: 1},
		{mode: "other-token", wrong: 1},
		{mode: "http-error", lost: 1},
		{mode: "rpc-error", lost: 1},
		{mode: "hang", abandon: 50 * time.Millisecond, abandoned: 1},
	} {
		mode.Store(tc.mode)
		var st loadStats
		c.do(call{kind: "echo"}, tc.abandon, &st)
		if st.ok != tc.ok || st.wrong != tc.wrong || st.lost != tc.lost || st.abandoned != tc.abandoned {
			t.Errorf("%s: ok %d, crossed %d, lost %d, abandoned %d; want %d, %d, %d, %d (%v)",
				tc.mode, st.ok, st.wrong, st.lost, st.abandoned, tc.ok, tc.wrong, tc.lost, tc.abandoned, st.problems)
		}
	}
}
