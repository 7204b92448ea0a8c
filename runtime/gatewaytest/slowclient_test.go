package gatewaytest

// A client that stops reading must cost only itself (ARCHITECTURE
// principle 7): these tests hold a stream unread over real HTTP, with
// small socket buffers, while another client uses the same stdio upstream
// and hears the same list changes.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/mcpx-dev/mcpx/runtime/config"
	"github.com/mcpx-dev/mcpx/runtime/edge"
	"github.com/mcpx-dev/mcpx/runtime/host"
	"github.com/mcpx-dev/mcpx/runtime/server"
	"github.com/mcpx-dev/mcpx/runtime/transport/streamhttp"
)

// floodSteps is how many progress notifications the flood tool sends,
// floodEvery apart, each with a message of about 1 kB.
const (
	floodSteps = 1000
	floodEvery = time.Millisecond
)

// serveFlood is the "flood" upstream: a hand-written stdio server
// (2025-06-18) with three tools. flood sends floodSteps progress
// notifications for the call's token, then answers "flooded"; quick
// answers "quick" at once; churn sends notifications/tools/list_changed,
// then answers. Calls run concurrently, as a server's may.
func serveFlood(in io.Reader) int {
	var mu sync.Mutex
	out := bufio.NewWriter(os.Stdout)
	write := func(v any) {
		b, _ := json.Marshal(v)
		mu.Lock()
		defer mu.Unlock()
		out.Write(b)
		out.WriteByte('\n')
		out.Flush()
	}
	result := func(id json.RawMessage, r any) {
		write(map[string]any{"jsonrpc": "2.0", "id": id, "result": r})
	}
	text := func(s string) any {
		return map[string]any{"content": []any{map[string]any{"type": "text", "text": s}}}
	}
	filler := strings.Repeat("x", 1000)
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				Name string `json:"name"`
				Meta struct {
					Token json.RawMessage `json:"progressToken"`
				} `json:"_meta"`
			} `json:"params"`
		}
		if json.Unmarshal(sc.Bytes(), &m) != nil || m.ID == nil || m.Method == "" {
			continue // notifications and responses
		}
		switch m.Method {
		case "initialize":
			result(m.ID, map[string]any{"protocolVersion": "2025-06-18", "capabilities": map[string]any{"tools": map[string]any{"listChanged": true}},
				"serverInfo": map[string]any{"name": "flood", "version": "1"}})
		case "ping":
			result(m.ID, map[string]any{})
		case "tools/list":
			var tools []any
			for _, n := range []string{"flood", "quick", "churn"} {
				tools = append(tools, map[string]any{"name": n, "inputSchema": map[string]any{"type": "object"}})
			}
			result(m.ID, map[string]any{"tools": tools})
		case "tools/call":
			switch m.Params.Name {
			case "flood":
				go func(id, token json.RawMessage) {
					for i := 1; i <= floodSteps && token != nil; i++ {
						write(map[string]any{"jsonrpc": "2.0", "method": "notifications/progress", "params": map[string]any{
							"progressToken": token, "progress": i, "total": floodSteps, "message": filler}})
						time.Sleep(floodEvery)
					}
					result(id, text("flooded"))
				}(m.ID, m.Params.Meta.Token)
			case "churn":
				write(map[string]any{"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})
				result(m.ID, text("churned"))
			default:
				result(m.ID, text("quick"))
			}
		default:
			write(map[string]any{"jsonrpc": "2.0", "id": m.ID, "error": map[string]any{"code": -32601, "message": "no such method"}})
		}
	}
	return 0
}

// smallBuffers is a listener whose connections have a small send buffer,
// so that a client that stops reading is felt within kilobytes.
type smallBuffers struct{ net.Listener }

func (l smallBuffers) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if tc, ok := c.(*net.TCPConn); ok {
		tc.SetWriteBuffer(1024)
	}
	return c, err
}

// floodServer serves, over HTTP on a loopback port, a gateway whose one
// upstream is the flood server, and returns the endpoint. Everything it
// starts is stopped when the test ends.
func floodServer(t *testing.T, opt streamhttp.Options) string {
	t.Helper()
	data, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{"flood": map[string]any{
		"command": os.Args[0],
		"env": map[string]string{envUpstream: "flood",
			"GORACE": strings.TrimSpace(os.Getenv("GORACE") + " atexit_sleep_ms=0")},
		"mcpx": map[string]any{"timeout": "30s"}}}})
	cfg, err := config.Parse("flood.json", data, func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatal(err)
	}
	_, log := logBuffer()
	gw, err := host.Gateway(context.Background(), cfg, serverInfo, log)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { gw.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
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
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	served := make(chan struct{})
	go func() { defer close(served); srv.Serve(smallBuffers{ln}) }()
	t.Cleanup(func() {
		h.Close()
		sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := srv.Shutdown(sctx); err != nil {
			t.Errorf("shutdown: %v", err)
			srv.Close()
		}
		<-served
	})
	return "http://" + ln.Addr().String() + "/"
}

// rawRequest opens a TCP connection with a small receive buffer, sends an
// HTTP request on it and returns the connection, never read: a client
// that stopped reading. It is closed when the test ends.
func rawRequest(t *testing.T, endpoint, method string, hdr map[string]string, body string) net.Conn {
	t.Helper()
	host := strings.TrimSuffix(strings.TrimPrefix(endpoint, "http://"), "/")
	c, err := net.Dial("tcp", host)
	if err != nil {
		t.Fatal(err)
	}
	c.(*net.TCPConn).SetReadBuffer(1024)
	t.Cleanup(func() { c.Close() })
	var b bytes.Buffer
	fmt.Fprintf(&b, "%s / HTTP/1.1\r\nHost: %s\r\nAccept: application/json, text/event-stream\r\n", method, host)
	for k, v := range hdr {
		fmt.Fprintf(&b, "%s: %s\r\n", k, v)
	}
	if body != "" {
		fmt.Fprintf(&b, "Content-Type: application/json\r\nContent-Length: %d\r\n", len(body))
	}
	b.WriteString("\r\n" + body)
	if _, err := c.Write(b.Bytes()); err != nil {
		t.Fatal(err)
	}
	return c
}

// postJSON posts body and returns the response.
func postJSON(ctx context.Context, hc *http.Client, endpoint string, hdr map[string]string, body string) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, strings.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	return hc.Do(req)
}

// callTool calls a tool (2025-03-26, headerless) and returns the whole
// answer, within d.
func callTool(t *testing.T, hc *http.Client, endpoint, tool string, d time.Duration) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	resp, err := postJSON(ctx, hc, endpoint, nil, `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"`+tool+`","arguments":{}}}`)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return string(b), err
}

func newClient(t *testing.T) *http.Client {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr}
}

// TestUnreadProgressHoldsNoOne: client A calls the flood tool asking for
// progress and never reads its SSE response; meanwhile client B's calls
// to the same stdio upstream answer within their normal time. A's stream
// is ended (its write deadline passes) and nothing of it is left once it
// goes away.
func TestUnreadProgressHoldsNoOne(t *testing.T) {
	ignore := goleak.IgnoreCurrent()
	t.Cleanup(func() { goleak.VerifyNone(t, ignore) })
	endpoint := floodServer(t, streamhttp.Options{WriteTimeout: time.Second})
	hc := newClient(t)
	if got, err := callTool(t, hc, endpoint, "flood__quick", 5*time.Second); err != nil || !strings.Contains(got, "quick") {
		t.Fatalf("before: %q, %v", got, err)
	}

	a := rawRequest(t, endpoint, "POST", nil, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"flood__flood","arguments":{},"_meta":{"progressToken":"a"}}}`)
	time.Sleep(500 * time.Millisecond) // A's socket fills with progress
	deadline := time.Now().Add(floodSteps * floodEvery)
	for n := 0; n < 3 || time.Now().Before(deadline); n++ {
		start := time.Now()
		got, err := callTool(t, hc, endpoint, "flood__quick", 3*time.Second)
		if err != nil || !strings.Contains(got, "quick") {
			t.Fatalf("B's call %d while A does not read: %q, %v (after %s)", n, got, err, time.Since(start).Round(time.Millisecond))
		}
		time.Sleep(100 * time.Millisecond)
	}
	// A's stream was ended once a write to it waited past the deadline:
	// the connection closes (it is not held until the flood ends).
	a.SetReadDeadline(time.Now().Add(10 * time.Second))
	got, err := io.ReadAll(a)
	if ne, ok := err.(net.Error); ok && ne.Timeout() {
		t.Fatalf("A's stream is still open, %d bytes read", len(got))
	}
	a.Close()
}

// TestProgressCoalescedResponseKept: a client that reads late gets the
// final response, and the progress it missed meanwhile coalesced: fewer
// notifications than were sent, increasing, the last one the latest.
func TestProgressCoalescedResponseKept(t *testing.T) {
	endpoint := floodServer(t, streamhttp.Options{WriteTimeout: 20 * time.Second})
	a := rawRequest(t, endpoint, "POST", nil, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"flood__flood","arguments":{},"_meta":{"progressToken":"a"}}}`)
	time.Sleep(2 * time.Second) // hundreds of notifications come unread
	a.SetReadDeadline(time.Now().Add(30 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(a), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var progress []float64
	final := ""
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		data, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok {
			continue
		}
		var m struct {
			Method string `json:"method"`
			Params struct {
				Progress float64 `json:"progress"`
			} `json:"params"`
			Result json.RawMessage `json:"result"`
		}
		if err := json.Unmarshal([]byte(data), &m); err != nil {
			t.Fatalf("%v: %.200s", err, data)
		}
		switch {
		case m.Method == "notifications/progress":
			if final != "" {
				t.Fatalf("progress after the response")
			}
			progress = append(progress, m.Params.Progress)
		case m.Result != nil:
			final = string(m.Result)
		}
	}
	if !strings.Contains(final, "flooded") {
		t.Fatalf("the final response was not delivered; got %d progress notifications and %q", len(progress), final)
	}
	if len(progress) == 0 || len(progress) >= floodSteps {
		t.Fatalf("want progress coalesced, got %d of %d notifications", len(progress), floodSteps)
	}
	for i := 1; i < len(progress); i++ {
		if progress[i] <= progress[i-1] {
			t.Fatalf("progress not increasing: %v then %v", progress[i-1], progress[i])
		}
	}
	if last := progress[len(progress)-1]; last != floodSteps {
		t.Errorf("the last progress is %v, want the latest, %d", last, floodSteps)
	}
	t.Logf("%d progress notifications of %d sent", len(progress), floodSteps)
}

// initSession opens a legacy session (2025-06-18) and returns its id.
func initSession(t *testing.T, hc *http.Client, endpoint string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	resp, err := postJSON(ctx, hc, endpoint, nil, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"slow","version":"1"}}}`)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	sid := resp.Header.Get("Mcp-Session-Id")
	if sid == "" {
		t.Fatalf("initialize: %d, no session id", resp.StatusCode)
	}
	hdr := map[string]string{"Mcp-Session-Id": sid, "MCP-Protocol-Version": "2025-06-18"}
	resp, err = postJSON(ctx, hc, endpoint, hdr, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return sid
}

// TestUnreadGETStreamHoldsNoBroadcast: client A's GET stream is never
// read (keep-alive comments fill its socket); client B's GET stream still
// hears every list change, and A's stream is ended once its write
// deadline passes.
func TestUnreadGETStreamHoldsNoBroadcast(t *testing.T) {
	ignore := goleak.IgnoreCurrent()
	t.Cleanup(func() { goleak.VerifyNone(t, ignore) })
	endpoint := floodServer(t, streamhttp.Options{WriteTimeout: time.Second, KeepAlive: time.Millisecond})
	hc := newClient(t)

	sa := initSession(t, hc, endpoint)
	a := rawRequest(t, endpoint, "GET", map[string]string{"Mcp-Session-Id": sa, "MCP-Protocol-Version": "2025-06-18"}, "")

	sb := initSession(t, hc, endpoint)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, endpoint, nil)
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Mcp-Session-Id", sb)
	req.Header.Set("MCP-Protocol-Version", "2025-06-18")
	resp, err := hc.Do(req)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("B's GET: %v %v", resp, err)
	}
	heard := make(chan string, 100)
	go func() {
		defer resp.Body.Close()
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			if data, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
				heard <- data
			}
		}
	}()

	time.Sleep(700 * time.Millisecond) // A's socket fills with keep-alives
	for i := range 4 {
		if got, err := callTool(t, hc, endpoint, "flood__churn", 5*time.Second); err != nil || !strings.Contains(got, "churned") {
			t.Fatalf("churn %d: %q, %v", i, got, err)
		}
		select {
		case n := <-heard:
			if !strings.Contains(n, "notifications/tools/list_changed") {
				t.Fatalf("B heard %s", n)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("B did not hear list change %d while A's GET stream is not read", i+1)
		}
	}
	a.Close()
	cancel()
}
