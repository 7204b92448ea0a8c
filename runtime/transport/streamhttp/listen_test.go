package streamhttp_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpx-dev/mcpx/generated/mcp"
	"github.com/mcpx-dev/mcpx/runtime/edge"
	"github.com/mcpx-dev/mcpx/runtime/server"
	"github.com/mcpx-dev/mcpx/runtime/transport/streamhttp"
	"github.com/mcpx-dev/mcpx/testkit/leakcheck"
)

// changingNS tells of list changes (server.Changer) and of parts removed
// (server.Remover), as the gateway does: a removal takes capabilities
// away, then calls the OnRemove functions.
type changingNS struct {
	fakeNS
	changes chan string

	mu      sync.Mutex
	caps    mcp.ServerCapabilities
	removed map[int]func(string)
	n       int
}

func newChangingNS() *changingNS {
	return &changingNS{changes: make(chan string, 16), removed: map[int]func(string){}, caps: mcp.ServerCapabilities{
		Tools: &mcp.ServerCapabilitiesTools{}, Prompts: &mcp.ServerCapabilitiesPrompts{}, Resources: &mcp.ServerCapabilitiesResources{}}}
}

func (n *changingNS) Capabilities() mcp.ServerCapabilities {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.caps
}
func (n *changingNS) Changes() <-chan string { return n.changes }
func (n *changingNS) OnRemove(f func(string)) func() {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.n++
	id := n.n
	n.removed[id] = f
	return func() { n.mu.Lock(); delete(n.removed, id); n.mu.Unlock() }
}

// remove drops the part name, which took the prompts with it.
func (n *changingNS) remove(name string) {
	// The edge registers when WatchChanges starts, in its own goroutine.
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		n.mu.Lock()
		watched := len(n.removed) > 0
		n.mu.Unlock()
		if watched {
			break
		}
	}
	n.mu.Lock()
	n.caps.Prompts = nil
	fns := make([]func(string), 0, len(n.removed))
	for _, f := range n.removed {
		fns = append(fns, f)
	}
	n.mu.Unlock()
	for _, f := range fns {
		f(name)
	}
}

var (
	_ server.Changer = (*changingNS)(nil)
	_ server.Remover = (*changingNS)(nil)
)

// startChanging serves ns with its changes watched.
func startChanging(t *testing.T, ns server.Namespace, opt streamhttp.Options) (*httptest.Server, *streamhttp.Handler) {
	t.Helper()
	e := &edge.Edge{Server: &server.Server{NS: ns, Info: mcp.Implementation{Name: "mcpx-test", Version: "0.0.1"}, TTLMs: 1000}}
	ctx, cancel := context.WithCancel(context.Background())
	watched := make(chan struct{})
	go func() { defer close(watched); e.WatchChanges(ctx) }()
	h := streamhttp.New(e, opt)
	srv := httptest.NewServer(h)
	t.Cleanup(func() { h.Close(); srv.Close(); cancel(); <-watched })
	return srv, h
}

func listenBody(id, filter string) string {
	return `{"jsonrpc":"2.0","id":"` + id + `","method":"subscriptions/listen","params":{"notifications":` + filter + `,` + modernMeta + `}}`
}

// openListen opens a listen stream and reads its acknowledgement.
func openListen(t *testing.T, ctx context.Context, url, id, filter string) <-chan sseEvent {
	t.Helper()
	resp := do(t, ctx, http.MethodPost, url, modern("subscriptions/listen", ""), listenBody(id, filter))
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("listen %s: %d %v", id, resp.StatusCode, resp.Header)
	}
	ch := readSSE(resp.Body)
	if ack, ok := next(t, ch, nil); !ok || ack.Method != "notifications/subscriptions/acknowledged" || !strings.Contains(string(ack.Params), `"io.modelcontextprotocol/subscriptionId":"`+id+`"`) {
		t.Fatalf("listen %s, first event: %+v %s", id, ack, ack.Params)
	}
	return ch
}

// wantEndedByServer checks what mcpx sends when it ends listen id:
// notifications/cancelled naming it (with reason), then the listen
// result tagged with its subscriptionId, then the end of the stream.
func wantEndedByServer(t *testing.T, ch <-chan sseEvent, id, reason string) {
	t.Helper()
	c, ok := next(t, ch, nil)
	if !ok || c.Method != "notifications/cancelled" || !strings.Contains(string(c.Params), `"requestId":"`+id+`"`) || !strings.Contains(string(c.Params), reason) {
		t.Fatalf("listen %s: first event at its end: %+v %s", id, c, c.Params)
	}
	r, ok := next(t, ch, nil)
	if !ok || string(r.ID) != `"`+id+`"` || r.Result == nil {
		t.Fatalf("listen %s: second event at its end: %+v", id, r)
	}
	meta, _ := r.Result["_meta"].(map[string]any)
	if meta["io.modelcontextprotocol/subscriptionId"] != id || r.Result["resultType"] != "complete" {
		t.Errorf("listen %s result: %v", id, r.Result)
	}
	waitEnd(t, ch)
}

// TestListenEndedWhenItsSourceStops: a part of the namespace removed (an
// upstream, on reload) ends the listens it was the source of: the one
// promised prompt changes, which nothing can produce any more, gets
// notifications/cancelled for its id, then its result; the one that
// follows tools goes on and hears the next tools change.
func TestListenEndedWhenItsSourceStops(t *testing.T) {
	leakcheck.Check(t)
	ns := newChangingNS()
	srv, h := startChanging(t, ns, streamhttp.Options{})
	prompts := openListen(t, nil, srv.URL, "P", `{"promptsListChanged":true}`)
	tools := openListen(t, nil, srv.URL, "T", `{"toolsListChanged":true}`)
	ns.remove("b")
	wantEndedByServer(t, prompts, "P", `\"b\" was removed`)
	ns.changes <- mcp.MethodNotificationsToolsListChanged
	if n, ok := next(t, tools, nil); !ok || n.Method != mcp.MethodNotificationsToolsListChanged || !strings.Contains(string(n.Params), `"io.modelcontextprotocol/subscriptionId":"T"`) {
		t.Fatalf("the tools listen after the removal: %+v %s", n, n.Params)
	}
	eventually(t, "the ended listen gives its slot back", func() bool { return h.OpenStreams() == 1 })
}

// TestListenEndedAtClose: Close (mcpx shutting down) ends every listen
// with notifications/cancelled for its id, then its result.
func TestListenEndedAtClose(t *testing.T) {
	leakcheck.Check(t)
	srv, h := startChanging(t, newChangingNS(), streamhttp.Options{})
	a := openListen(t, nil, srv.URL, "A", `{"toolsListChanged":true}`)
	b := openListen(t, nil, srv.URL, "B", `{}`)
	h.Close()
	wantEndedByServer(t, a, "A", "closing")
	wantEndedByServer(t, b, "B", "closing")
}

// TestListenClosedByClientIsNotAnswered: a client that closes its listen
// stream ended it; mcpx must not then write the cancellation and result
// it sends when it ends a stream itself. The response is recorded, so
// anything written after the client left is seen.
func TestListenClosedByClientIsNotAnswered(t *testing.T) {
	leakcheck.Check(t)
	e := &edge.Edge{Server: &server.Server{NS: newChangingNS(), Info: mcp.Implementation{Name: "mcpx-test", Version: "0.0.1"}}}
	h := streamhttp.New(e, streamhttp.Options{})
	defer h.Close()
	ctx, cancel := context.WithCancel(context.Background())
	req := httptest.NewRequestWithContext(ctx, http.MethodPost, "http://127.0.0.1/mcp", strings.NewReader(listenBody("C", `{"toolsListChanged":true}`)))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range modern("subscriptions/listen", "") {
		req.Header.Set(k, v)
	}
	rec := &lockedRecorder{ResponseRecorder: httptest.NewRecorder()}
	served := make(chan struct{})
	go func() { defer close(served); h.ServeHTTP(rec, req) }()
	eventually(t, "the acknowledgement", func() bool { return strings.Contains(rec.body(), "acknowledged") })
	cancel()
	select {
	case <-served:
	case <-time.After(5 * time.Second):
		t.Fatal("the listen was still served 5s after its client left")
	}
	if b := rec.body(); strings.Contains(b, "notifications/cancelled") || strings.Contains(b, `"result"`) {
		t.Errorf("written after the client closed its stream:\n%s", b)
	}
}

// lockedRecorder is a ResponseRecorder read while the handler writes.
type lockedRecorder struct {
	mu sync.Mutex
	*httptest.ResponseRecorder
}

func (r *lockedRecorder) Write(b []byte) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.ResponseRecorder.Write(b)
}
func (r *lockedRecorder) WriteHeader(code int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.ResponseRecorder.WriteHeader(code)
}
func (r *lockedRecorder) Flush() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.ResponseRecorder.Flush()
}
func (r *lockedRecorder) body() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.Body.String()
}

// TestSeveralListensEachItsFilter: one client holds several listen
// streams, each with its own filter; each hears only what it asked for,
// tagged with its own id.
func TestSeveralListensEachItsFilter(t *testing.T) {
	leakcheck.Check(t)
	ns := newChangingNS()
	srv, _ := startChanging(t, ns, streamhttp.Options{})
	streams := map[string]<-chan sseEvent{
		"tools":   openListen(t, nil, srv.URL, "tools", `{"toolsListChanged":true}`),
		"prompts": openListen(t, nil, srv.URL, "prompts", `{"promptsListChanged":true}`),
		"both":    openListen(t, nil, srv.URL, "both", `{"toolsListChanged":true,"resourcesListChanged":true}`),
	}
	ns.changes <- mcp.MethodNotificationsPromptsListChanged
	ns.changes <- mcp.MethodNotificationsResourcesListChanged
	ns.changes <- mcp.MethodNotificationsToolsListChanged
	want := map[string][]string{
		"tools":   {mcp.MethodNotificationsToolsListChanged},
		"prompts": {mcp.MethodNotificationsPromptsListChanged},
		"both":    {mcp.MethodNotificationsResourcesListChanged, mcp.MethodNotificationsToolsListChanged},
	}
	for id, ch := range streams {
		for _, method := range want[id] {
			n, ok := next(t, ch, nil)
			if !ok || n.Method != method || !strings.Contains(string(n.Params), `"io.modelcontextprotocol/subscriptionId":"`+id+`"`) {
				t.Errorf("listen %s: got %+v %s, want %s", id, n, n.Params, method)
			}
		}
	}
	// Nothing more on any: the tools change was the last, and each
	// stream's next event would be it or something it did not ask for.
	time.Sleep(100 * time.Millisecond)
	for id, ch := range streams {
		select {
		case ev := <-ch:
			if !ev.comment {
				t.Errorf("listen %s heard more: %+v", id, ev)
			}
		default:
		}
	}
}

// TestListenDisconnectLeavesNoGoroutine: clients that drop their
// connections mid-stream leave no goroutine behind: counted with the
// streams open, and after they went (and by leakcheck at the end).
func TestListenDisconnectLeavesNoGoroutine(t *testing.T) {
	leakcheck.Check(t)
	ns := newChangingNS()
	srv, h := startChanging(t, ns, streamhttp.Options{KeepAlive: 20 * time.Millisecond, Logger: discard()})
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr}
	before := runtime.NumGoroutine()
	const n = 20
	var bodies []io.ReadCloser
	for i := range n {
		req, _ := http.NewRequest(http.MethodPost, srv.URL, strings.NewReader(listenBody("L"+string(rune('a'+i)), `{"toolsListChanged":true}`)))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		for k, v := range modern("subscriptions/listen", "") {
			req.Header.Set(k, v)
		}
		resp, err := client.Do(req)
		if err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("listen %d: %v %v", i, err, resp)
		}
		bodies = append(bodies, resp.Body)
	}
	eventually(t, "every stream open", func() bool { return h.OpenStreams() == n })
	ns.changes <- mcp.MethodNotificationsToolsListChanged // mid-stream: something to write
	during := runtime.NumGoroutine()
	for _, b := range bodies {
		b.Close() // the client drops the connection
	}
	tr.CloseIdleConnections()
	eventually(t, "every stream ended", func() bool { return h.OpenStreams() == 0 })
	eventually(t, "the goroutines gone", func() bool { return runtime.NumGoroutine() <= before })
	t.Logf("goroutines: %d before, %d with %d streams open, %d after", before, during, n, runtime.NumGoroutine())
}
