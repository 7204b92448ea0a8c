package upstream

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpx-dev/mcpx/generated/mcp"
)

// silentHTTP is a legacy (2025-06-18) Streamable HTTP upstream with a
// session that answers the handshake and then accepts every request but
// answers none of what mcpx sends without waiting for an answer: its
// notifications/cancelled, its replies to the upstream's requests and
// the DELETE of the session are held until release is closed (or mcpx
// gives up on them). tools/call "hang" is never answered either;
// tools/call "pings" sends n pings (arguments {"n":n}) on its response
// stream, then the answer "pong".
type silentHTTP struct {
	release chan struct{}
	mu      sync.Mutex
	got     map[string]int // "cancelled", "reply", "DELETE": how many arrived
}

func newSilentHTTP() *silentHTTP {
	return &silentHTTP{release: make(chan struct{}), got: map[string]int{}}
}

func (s *silentHTTP) count(what string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.got[what]
}

// hold notes what arrived and answers nothing until mcpx gives up or the
// test ends.
func (s *silentHTTP) hold(r *http.Request, what string) {
	s.mu.Lock()
	s.got[what]++
	s.mu.Unlock()
	select {
	case <-r.Context().Done():
	case <-s.release:
	}
}

func (s *silentHTTP) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch r.Method {
	case http.MethodDelete:
		s.hold(r, "DELETE")
		return
	case http.MethodPost:
	default:
		w.WriteHeader(http.StatusMethodNotAllowed)
		return
	}
	b, _ := io.ReadAll(r.Body)
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params struct {
			Name      string `json:"name"`
			Arguments struct {
				N int `json:"n"`
			} `json:"arguments"`
		} `json:"params"`
	}
	if json.Unmarshal(b, &m) != nil {
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	answer := func(result string) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":%s}`, m.ID, result)
	}
	switch {
	case m.Method == "":
		s.hold(r, "reply")
	case m.Method == "notifications/cancelled":
		s.hold(r, "cancelled")
	case m.Method == "notifications/initialized":
		w.WriteHeader(http.StatusAccepted)
	case m.Method == "initialize":
		w.Header().Set("Mcp-Session-Id", "silent-1")
		answer(`{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"silent","version":"1"}}`)
	case m.Method == "tools/call" && m.Params.Name == "hang":
		s.hold(r, "hang")
	case m.Method == "tools/call" && m.Params.Name == "pings":
		w.Header().Set("Content-Type", "text/event-stream")
		for i := range m.Params.Arguments.N {
			fmt.Fprintf(w, "event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":\"srv-%d\",\"method\":\"ping\"}\n\n", i)
		}
		fmt.Fprintf(w, "event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"pong\"}]}}\n\n", m.ID)
	default:
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32601,"message":"method not found"}}`, m.ID)
	}
}

// TestHTTPSendsHaveDeadlines: against an HTTP upstream that accepts every
// request and never answers cancellations, replies or the DELETE, a reply
// to its ping does not hold the answer that follows it on the same stream,
// a call that times out is answered at its timeout while its cancellation
// is still on its way, the cancellations beyond maxPending are dropped
// and logged, and Close ends within the DELETE's deadline.
func TestHTTPSendsHaveDeadlines(t *testing.T) {
	defer noLeaks(t)()
	up := newSilentHTTP()
	srv := httptest.NewServer(up)
	defer srv.Close()
	log, logs := newLogCapture()
	const wait = time.Second
	// No queue: the drops beyond maxPending are what this test looks at.
	c := New(Spec{Name: "silent", URL: srv.URL + "/mcp", Timeout: 300 * time.Millisecond, sendWait: wait, sendQueue: -1}, mcpxInfo, log)
	closed := false
	defer func() {
		if !closed {
			c.Close()
		}
	}()
	defer close(up.release) // first: a failed test's Close is not held
	ctx := context.Background()
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}

	// A ping on the call's response stream: the reply waits on nothing.
	res, err := within(t, 2*time.Second, "a call whose answer follows a ping", func() result {
		r, err := mcp.CallTool(ctx, c, &mcp.CallToolRequestParams{Name: "pings", Arguments: json.RawMessage(`{"n":1}`)})
		return result{r, err}
	}).get()
	if err != nil {
		t.Fatalf("the call after a ping: %v", err)
	}
	if txt, ok := res.Content[0].Value.(*mcp.TextContent); !ok || txt.Text != "pong" {
		t.Errorf("the call after a ping answered %s, want pong", mustJSONStringNoT(res))
	}
	waitFor(t, 2*time.Second, "the reply to the ping reaching the upstream", func() bool { return up.count("reply") == 1 })

	// Calls that time out while their cancellations go unanswered.
	const calls = maxPending + 4
	errs := make(chan error, calls)
	start := time.Now()
	for range calls {
		go func() {
			_, err := mcp.CallTool(ctx, c, &mcp.CallToolRequestParams{Name: "hang"})
			errs <- err
		}()
	}
	for range calls {
		select {
		case err := <-errs:
			if err == nil || !strings.Contains(err.Error(), `upstream "silent" did not answer tools/call within 300ms`) {
				t.Errorf("a call that timed out returned %v", err)
			}
		case <-time.After(3 * time.Second):
			t.Fatalf("a call with a 300ms timeout was not answered within %s", time.Since(start).Round(time.Millisecond))
		}
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("the calls with a 300ms timeout took %s", d.Round(time.Millisecond))
	}
	const dropped = "message to the upstream dropped: too many are waiting to be sent"
	waitFor(t, 3*time.Second, "every cancellation sent or dropped", func() bool {
		return up.count("cancelled")+len(logs.records(dropped)) == calls
	})
	if n := up.count("cancelled"); n > maxPending {
		t.Errorf("%d cancellations were on their way at once, want at most %d", n, maxPending)
	}
	for _, r := range logs.records(dropped) {
		if got := r.attrs["message"].String(); got != "notifications/cancelled" {
			t.Errorf("the drop logged names %q, want notifications/cancelled", got)
		}
	}
	if len(logs.records(dropped)) == 0 {
		t.Errorf("no drop was logged for %d cancellations at once", calls)
	}
	t.Logf("%d cancellations sent, %d dropped", up.count("cancelled"), len(logs.records(dropped)))

	// Close: the DELETE is held, within its deadline.
	start = time.Now()
	closed = true
	within(t, wait+2*time.Second, "Close", c.Close)
	if up.count("DELETE") != 1 {
		t.Errorf("the upstream got %d DELETEs, want 1", up.count("DELETE"))
	}
	t.Logf("Close took %s", time.Since(start).Round(time.Millisecond))
}

// TestCancellationsWaitTheirTurn: a burst of cancellations beyond
// maxPending, to an upstream that holds each until mcpx gives up on it,
// waits in the queue and is sent as the first ones end: every one
// reaches the upstream and none is dropped (before the queue, those
// beyond maxPending were dropped).
func TestCancellationsWaitTheirTurn(t *testing.T) {
	defer noLeaks(t)()
	up := newSilentHTTP()
	srv := httptest.NewServer(up)
	defer srv.Close()
	log, logs := newLogCapture()
	c := New(Spec{Name: "silent", URL: srv.URL + "/mcp", Timeout: 200 * time.Millisecond, sendWait: 300 * time.Millisecond}, mcpxInfo, log)
	defer c.Close()
	defer close(up.release)
	ctx := context.Background()
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	const calls = maxPending + 8
	var wg sync.WaitGroup
	for range calls {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := mcp.CallTool(ctx, c, &mcp.CallToolRequestParams{Name: "hang"}); err == nil {
				t.Error("a call to a tool that hangs succeeded")
			}
		}()
	}
	wg.Wait()
	waitFor(t, 10*time.Second, "every cancellation at the upstream", func() bool { return up.count("cancelled") == calls })
	if n := len(logs.records("message to the upstream dropped: too many are waiting to be sent")); n != 0 {
		t.Errorf("%d cancellations dropped; want none: they fit in the queue", n)
	}
}

type result struct {
	r   *mcp.CallToolResult
	err error
}

func (r result) get() (*mcp.CallToolResult, error) { return r.r, r.err }

// waitFor polls cond until it holds, failing the test after d.
func waitFor(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(d); !cond(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("no %s within %s", what, d)
		}
	}
}

// TestStdioRequestFlood: an upstream that floods mcpx with requests while
// it does not read its input still has its answer read: the replies are
// written off the reader, at most maxPending at once, the rest dropped
// and logged; the upstream is not stopped, and once it reads again the
// next call works.
func TestStdioRequestFlood(t *testing.T) {
	defer noLeaks(t)()
	// Far more replies than the pipe to its stdin holds (64 kB, and the
	// recorder's 32 kB): about 2,000.
	p := newProc(t, "pinger", "raw:pings=10000")
	p.spec.Timeout = 3 * time.Second
	log, logs := newLogCapture()
	c := New(p.spec, mcpxInfo, log)
	closed := false
	defer func() {
		if !closed {
			c.Close()
		}
	}()
	ctx := context.Background()
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	pid := pidOf(t, c)
	if err := within(t, 6*time.Second, "a call answered after a flood of pings", func() error { return echo(ctx, c) }); err != nil {
		t.Fatalf("the call answered after a flood of pings: %v", err)
	}
	const dropped = "message to the upstream dropped: too many are waiting to be sent"
	recs := logs.records(dropped)
	if len(recs) == 0 {
		t.Error("no reply was dropped, or no drop logged")
	}
	for _, r := range recs {
		if got := r.attrs["message"].String(); !strings.HasPrefix(got, `the reply to request "srv-`) {
			t.Errorf("the drop logged names %q, want a reply to a ping", got)
			break
		}
	}
	t.Logf("%d drops logged", len(recs))
	if err := within(t, 6*time.Second, "the next call", func() error { return echo(ctx, c) }); err != nil {
		t.Errorf("the next call: %v", err)
	}
	if got := pidOf(t, c); got != pid {
		t.Errorf("the upstream was restarted (pid %d, was %d)", got, pid)
	}
	closed = true
	within(t, 5*time.Second, "Close", c.Close)
}
