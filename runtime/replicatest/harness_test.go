package replicatest

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/mcpx-dev/mcpx/testkit/testbin"
)

// The binaries, built once by TestMain.
var mcpxBin, fixtureBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "replicatest")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := func() int {
		defer os.RemoveAll(dir)
		if mcpxBin, err = testbin.Build(dir, "./cmd/mcpx"); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		if fixtureBin, err = testbin.Build(dir, "./cmd/mcpx-fixture"); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		return m.Run()
	}()
	os.Exit(code)
}

// Two principals, static tokens of the replicas' auth block.
const (
	aliceToken = "alice-0123456789abcdef"
	bobToken   = "bob-0123456789abcdef00"
)

// freePort is a loopback port free a moment ago.
func freePort(t testing.TB) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// redisProc is a real redis-server the test can stop and start again on
// the same port and data directory.
type redisProc struct {
	t       testing.TB
	port    int
	dir     string
	persist bool
	pass    string // requirepass, when set
	tls     *tlsFiles
	cmd     *exec.Cmd
}

// startRedis starts redis-server on a free loopback port, or skips (fails
// under CI, where .ci/run installs it). With persist, it keeps its data
// in an append-only file (appendfsync always) in a directory of the
// test's, so a restart finds what was written before it.
func startRedis(t testing.TB, persist bool, pass string, tls *tlsFiles) *redisProc {
	t.Helper()
	if _, err := exec.LookPath("redis-server"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("redis-server is not installed (.ci/run installs Debian's redis-server)")
		}
		t.Skip("redis-server is not installed; apt-get install redis-server")
	}
	r := &redisProc{t: t, port: freePort(t), dir: t.TempDir(), persist: persist, pass: pass, tls: tls}
	r.start()
	t.Cleanup(r.stop)
	return r
}

func (r *redisProc) addr() string { return fmt.Sprintf("127.0.0.1:%d", r.port) }

func (r *redisProc) start() {
	r.t.Helper()
	args := []string{"--port", fmt.Sprint(r.port), "--bind", "127.0.0.1", "--dir", r.dir, "--save", ""}
	if r.tls != nil { // TLS only, on the same port
		args = append(args, "--port", "0", "--tls-port", fmt.Sprint(r.port), "--tls-cert-file", r.tls.cert, "--tls-key-file", r.tls.key, "--tls-auth-clients", "no")
	}
	if r.pass != "" {
		args = append(args, "--requirepass", r.pass)
	}
	if r.persist {
		args = append(args, "--appendonly", "yes", "--appendfsync", "always")
	} else {
		args = append(args, "--appendonly", "no")
	}
	r.cmd = exec.Command("redis-server", args...)
	if err := r.cmd.Start(); err != nil {
		r.t.Fatal(err)
	}
	waitDial(r.t, r.addr())
}

// stop ends redis-server (SIGTERM: it flushes its append-only file).
func (r *redisProc) stop() {
	if r.cmd == nil {
		return
	}
	r.cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan struct{})
	go func() { r.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		r.cmd.Process.Kill()
		<-done
	}
	r.cmd = nil
}

func waitDial(t testing.TB, addr string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		c, err := net.Dial("tcp", addr)
		if err == nil {
			c.Close()
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("nothing listens on %s", addr)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// proc is a process of the harness that prints its URL on stderr.
type proc struct {
	cmd  *exec.Cmd
	url  string
	mu   sync.Mutex
	logs bytes.Buffer
	done chan struct{}
}

var servingAt = regexp.MustCompile(`(http://127\.0\.0\.1:\d+/mcp)`)

// startProc runs bin with args until the test ends, and waits for the
// URL it prints on stderr.
func startProc(t testing.TB, name string, env []string, bin string, args ...string) *proc {
	t.Helper()
	p := &proc{cmd: exec.Command(bin, args...), done: make(chan struct{})}
	if env != nil {
		p.cmd.Env = append(os.Environ(), env...)
	}
	stderr, err := p.cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	urls := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			line := sc.Text()
			p.mu.Lock()
			p.logs.WriteString(line + "\n")
			p.mu.Unlock()
			if m := servingAt.FindStringSubmatch(line); m != nil {
				select {
				case urls <- m[1]:
				default:
				}
			}
		}
		p.cmd.Wait()
		close(p.done)
	}()
	t.Cleanup(func() {
		p.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-p.done:
		case <-time.After(10 * time.Second):
			p.cmd.Process.Kill()
			<-p.done
		}
		if t.Failed() {
			t.Logf("%s's log:\n%s", name, p.log())
		}
	})
	select {
	case p.url = <-urls:
	case <-p.done:
		t.Fatalf("%s exited: %s", name, p.log())
	case <-time.After(30 * time.Second):
		t.Fatalf("%s is not serving: %s", name, p.log())
	}
	return p
}

func (p *proc) log() string { p.mu.Lock(); defer p.mu.Unlock(); return p.logs.String() }

// kill ends the process at once (SIGKILL): no shutdown, as a crash.
func (p *proc) kill() {
	p.cmd.Process.Kill()
	<-p.done
}

// setup is what a suite runs on.
type setup struct {
	replicas int
	redis    bool
	persist  bool          // Redis keeps an append-only file
	lease    time.Duration // --task-lease; 0 for mcpx's default
	// password: Redis requires it; the replicas' mcpx.store names it as
	// ${MCPX_TEST_REDIS_PASSWORD}, set in their environment only.
	password string
	// tls: Redis speaks TLS only, with a certificate of its own CA; the
	// replicas name rediss:// and trust that CA by SSL_CERT_FILE (Go's
	// roots on Linux), nothing of mcpx's own.
	tls bool
}

// cluster is a running setup: its replicas behind the proxy.
type cluster struct {
	setup
	redisProc *redisProc
	fixture   *proc
	procs     []*proc
	proxy     *rrProxy
	url       string // the proxy's /mcp
}

// stateKey is the requestState key every replica is configured with.
func stateKey(t testing.TB) string {
	b := make([]byte, 32)
	rand.Read(b)
	return base64.StdEncoding.EncodeToString(b)
}

// start runs the setup: Redis (if asked), the shared fixture over HTTP,
// the replicas (each running its own stdio fixture), and the proxy.
func start(t testing.TB, s setup) *cluster {
	t.Helper()
	c := &cluster{setup: s}
	mcpxBlock := map[string]any{
		"stateKey":  stateKey(t),
		"taskAfter": "100ms",
		"auth": map[string]any{"tokens": []map[string]string{
			{"name": "alice", "token": aliceToken}, {"name": "bob", "token": bobToken},
		}},
	}
	var env []string
	if s.redis {
		var tf *tlsFiles
		scheme := "redis://"
		if s.tls {
			tf = newTLSFiles(t)
			scheme = "rediss://"
			env = append(env, "SSL_CERT_FILE="+tf.cert)
		}
		c.redisProc = startRedis(t, s.persist, s.password, tf)
		mcpxBlock["store"] = scheme + c.redisProc.addr()
		if s.password != "" {
			mcpxBlock["store"] = scheme + ":${MCPX_TEST_REDIS_PASSWORD}@" + c.redisProc.addr()
			env = append(env, "MCPX_TEST_REDIS_PASSWORD="+s.password)
		}
	}
	c.fixture = startProc(t, "mcpx-fixture", nil, fixtureBin, "--listen", "127.0.0.1:0")
	cfg := map[string]any{
		"mcpServers": map[string]any{
			"fx": map[string]any{"url": c.fixture.url},
			// Each replica runs its own: the upstream's own requestState
			// must then open on every replica's, so they share a key.
			"local": map[string]any{"command": fixtureBin, "env": map[string]string{"MCPX_STATE_KEY": mcpxBlock["stateKey"].(string)}},
		},
		"mcpx": mcpxBlock,
	}
	raw, _ := json.MarshalIndent(cfg, "", "  ")
	file := filepath.Join(t.TempDir(), "mcpx.json")
	if err := os.WriteFile(file, raw, 0o600); err != nil {
		t.Fatal(err)
	}
	args := []string{"serve", "--config", file, "--listen", "127.0.0.1:0", "--log-level", "warn"}
	if s.lease > 0 {
		args = append(args, "--task-lease", s.lease.String())
	}
	for i := range s.replicas {
		c.procs = append(c.procs, startProc(t, fmt.Sprintf("replica %d", i), env, mcpxBin, args...))
	}
	for _, p := range c.procs {
		waitListed(t, p.url)
	}
	t.Cleanup(client.CloseIdleConnections) // none left to this cluster's processes
	c.proxy = newProxy(t, c.procs, false)
	c.url = c.proxy.url + "/mcp"
	return c
}

// waitListed waits until the replica at url lists both upstreams' tools.
// A list waits for an upstream still starting only so long (the
// gateway's first wait, 2 s), and on a loaded machine a replica's stdio
// fixture can take longer: the scenarios start once every replica has
// both.
func waitListed(t testing.TB, url string) {
	t.Helper()
	m := &modern{t: t, url: url, token: aliceToken}
	deadline := time.Now().Add(60 * time.Second)
	for {
		got := text(m.do("tools/list", "", "").result())
		if strings.Contains(got, "fx__greet") && strings.Contains(got, "local__greet") {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s still lists neither or one of the two upstreams after 60 s: %.300s", url, got)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// rrProxy is a round-robin load balancer: every request to the next
// replica, whatever it is.
type rrProxy struct {
	url  string
	next atomic.Uint64
	mu   sync.Mutex
	hits []int // the replica each request went to, in order
}

// newProxy starts a proxy over replicas. With lateEOF, the proxy
// Transport's last read of each request body (after its last byte,
// net/http reads once more for its EOF) waits until the answer's first
// bytes went to the client, and the answer's copy waits for that read:
// the race of golang/go#40747 made certain, for TestProxyAnswersWhole.
func newProxy(t testing.TB, replicas []*proc, lateEOF bool) *rrProxy {
	p := &rrProxy{}
	// Its own connections to this cluster's replicas, closed with it: a
	// pool shared with the tests' client and earlier clusters held
	// connections to replicas killed or stopped before.
	tr := keepAliveTransport()
	t.Cleanup(tr.CloseIdleConnections)
	var backends []*httputil.ReverseProxy
	for _, r := range replicas {
		u, _ := url.Parse(r.url)
		u.Path = ""
		backends = append(backends, &httputil.ReverseProxy{
			Rewrite:       func(pr *httputil.ProxyRequest) { pr.SetURL(u) },
			FlushInterval: -1, // SSE as it comes
			Transport:     tr,
		})
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// Full duplex, or an answer is cut under load: net/http's HTTP/1
		// server closes the inbound body when the proxy writes the
		// answer's headers, the proxy's Transport then reads that body
		// once more for its EOF, fails, and closes its connection to the
		// replica in mid-answer ("read error during body copy: use of
		// closed network connection", golang/go#40747; the same as
		// streamhttp's TestListenThroughReverseProxy).
		http.NewResponseController(w).EnableFullDuplex()
		if lateEOF && r.ContentLength > 0 {
			body := &lateEOFBody{ReadCloser: r.Body, begun: make(chan struct{}), read: make(chan struct{})}
			r.Body, w = body, &lateEOFWriter{ResponseWriter: w, body: body}
		}
		i := int(p.next.Add(1)-1) % len(backends)
		p.mu.Lock()
		p.hits = append(p.hits, i)
		p.mu.Unlock()
		backends[i].ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	p.url = srv.URL
	return p
}

// lateEOFBody is a request body whose end is read late: a Read after the
// one that returned its last bytes waits until begun is closed (the
// answer's first bytes were sent), and closes read once it is done.
type lateEOFBody struct {
	io.ReadCloser
	ended       bool
	begun, read chan struct{}
}

func (b *lateEOFBody) Read(p []byte) (int, error) {
	if b.ended {
		select {
		case <-b.begun:
		case <-time.After(5 * time.Second):
		}
		defer close(b.read)
	}
	n, err := b.ReadCloser.Read(p)
	b.ended = b.ended || err == io.EOF
	return n, err
}

// lateEOFWriter sends the answer's first bytes, then waits for the
// body's last read and for the Transport to act on it before the rest.
type lateEOFWriter struct {
	http.ResponseWriter
	body  *lateEOFBody
	wrote bool
}

func (w *lateEOFWriter) Write(p []byte) (int, error) {
	n, err := w.ResponseWriter.Write(p)
	if !w.wrote {
		w.wrote = true
		http.NewResponseController(w.ResponseWriter).Flush()
		close(w.body.begun)
		select {
		case <-w.body.read:
			time.Sleep(50 * time.Millisecond) // the Transport's writeLoop closing its connection, if it does
		case <-time.After(5 * time.Second):
		}
	}
	return n, err
}

func (w *lateEOFWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// spread is which replicas the requests since mark went to.
func (p *rrProxy) spread(mark int) map[int]int {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := map[int]int{}
	for _, i := range p.hits[mark:] {
		out[i]++
	}
	return out
}

// following is the replica the request at mark went to.
func (p *rrProxy) at(mark int) int { p.mu.Lock(); defer p.mu.Unlock(); return p.hits[mark] }

// nextIs is the replica the next request goes to.
func (p *rrProxy) nextIs(n int) int { return int(p.next.Load()) % n }

func (p *rrProxy) mark() int { p.mu.Lock(); defer p.mu.Unlock(); return len(p.hits) }

// keepAliveTransport keeps enough idle connections for the benchmarks'
// concurrency (net/http's default keeps 2 a host), for the client and the
// proxy alike.
func keepAliveTransport() *http.Transport {
	return &http.Transport{MaxIdleConnsPerHost: 256, IdleConnTimeout: time.Minute}
}

// client is the tests' client; each cluster closes its idle connections
// when it ends (start).
var client = &http.Client{Transport: keepAliveTransport()}

// answer is a JSON-RPC answer as the tests read it.
type answer struct {
	status int
	header http.Header
	msg    map[string]any
}

func (a answer) result() map[string]any { r, _ := a.msg["result"].(map[string]any); return r }

func (a answer) err() (float64, string) {
	e, _ := a.msg["error"].(map[string]any)
	if e == nil {
		return 0, ""
	}
	code, _ := e["code"].(float64)
	m, _ := e["message"].(string)
	return code, m
}

func (a answer) String() string {
	b, _ := json.Marshal(a.msg)
	return fmt.Sprintf("HTTP %d %s", a.status, b)
}

// post sends one JSON-RPC message to url as token's principal. An
// answer cut short (its body ends before its length) fails the test.
func post(t testing.TB, url, token string, hdr map[string]string, body string) answer {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("an answer was cut short (%v): %.120s", err, body)
	}
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		var last []byte
		sc := bufio.NewScanner(bytes.NewReader(raw))
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			if d, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
				last = []byte(d)
			}
		}
		raw = last
	}
	a := answer{status: resp.StatusCode, header: resp.Header}
	if json.Unmarshal(raw, &a.msg) != nil {
		a.msg = map[string]any{"unparsed": string(raw)}
	}
	return a
}

// modern is a 2026-07-28 client: every request stands alone.
type modern struct {
	t     testing.TB
	url   string
	token string
	n     int
}

// meta declares the tasks extension and elicitation on every request.
const meta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{"form":{}},"extensions":{"io.modelcontextprotocol/tasks":{}}}}`

// do sends method with params (a JSON object's members after _meta, may
// be ""); name is the Mcp-Name header ("" for none).
func (m *modern) do(method, name, params string) answer {
	m.t.Helper()
	m.n++
	hdr := map[string]string{"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": method}
	if name != "" {
		hdr["Mcp-Name"] = name
	}
	if params != "" {
		params = "," + params
	}
	return post(m.t, m.url, m.token, hdr, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%q,"params":{%s%s}}`, m.n, method, meta, params))
}

func (m *modern) call(tool, args, extra string) answer {
	m.t.Helper()
	return m.do("tools/call", tool, fmt.Sprintf(`"name":%q,"arguments":%s%s`, tool, args, extra))
}

func (m *modern) task(method, id, extra string) answer {
	m.t.Helper()
	return m.do(method, id, fmt.Sprintf(`"taskId":%q%s`, id, extra))
}

// until polls tasks/get until ok, within d.
func (m *modern) until(id string, d time.Duration, ok func(map[string]any) bool) map[string]any {
	m.t.Helper()
	deadline := time.Now().Add(d)
	for {
		a := m.task("tasks/get", id, "")
		res := a.result()
		if a.status == 503 && a.header.Get("Retry-After") != "" && time.Now().Before(deadline) {
			time.Sleep(100 * time.Millisecond) // the store is back in a moment: as asked, try again
			continue
		}
		if res == nil {
			m.t.Fatalf("tasks/get %s: %v", id, a)
		}
		if ok(res) {
			return res
		}
		if time.Now().After(deadline) {
			m.t.Fatalf("task %s not as wanted within %v: %v", id, d, res)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func status(s string) func(map[string]any) bool {
	return func(r map[string]any) bool { return r["status"] == s }
}

func text(res map[string]any) string {
	b, _ := json.Marshal(res)
	return string(b)
}
