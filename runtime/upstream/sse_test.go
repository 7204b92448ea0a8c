package upstream

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpx-dev/mcpx/generated/mcp"
	"github.com/mcpx-dev/mcpx/runtime/jsonrpc"

	"github.com/mcpx-dev/mcpx/testkit/leakcheck"
	"github.com/mcpx-dev/mcpx/testkit/revs"
)

// TestSSEUpstreams runs the upstream client against the go-sdk's server
// on the 2024-11-05 HTTP+SSE transport (sdk.NewSSEHandler), at every
// legacy revision it speaks: the revision found by initialize as on the
// other transports, every method, progress, questions, and what mcpx
// POSTed closed-world checked for that revision.
func TestSSEUpstreams(t *testing.T) {
	leakcheck.Check(t)
	for _, rev := range goSDKRevisions() {
		if !revs.IsLegacy(rev) {
			continue
		}
		t.Run(string(rev), func(t *testing.T) {
			t.Parallel()
			f := sdkFeatures(-32602)
			m := &marks{}
			f.marks = m
			s := goSDKServer(string(rev), m.mark)
			rec := &recorder{next: sdk.NewSSEHandler(func(*http.Request) *sdk.Server { return s }, nil)}
			srv := httptest.NewServer(rec)
			defer srv.Close()
			cl := New(Spec{Name: "sse-" + string(rev), URL: srv.URL + "/sse", SSE: true, Timeout: 10 * time.Second}, mcpxInfo, testLog(t))
			closed := false
			defer func() {
				if !closed {
					cl.Close()
				}
			}()
			exercise(t, cl, rev, f)
			closed = true
			if err := cl.Close(); err != nil {
				t.Errorf("Close: %v", err)
			}
			checkLines(t, rec.lines(), rev)
		})
	}
}

// fakeSSE is a 2024-11-05 HTTP+SSE server small enough to misbehave on
// purpose: GET /sse is the stream, whose first event names /msg (or
// endpoint, when set); what is POSTed there is answered on the stream.
type fakeSSE struct {
	endpoint  string         // the endpoint event's data; "" is /msg?session=1
	noEnd     bool           // send no endpoint event at all
	endStream bool           // end the stream right after the endpoint event (or instead of it)
	refuse    map[string]int // method -> the status its POST gets, with a body
	pingFirst bool           // before answering tools/call, ask a ping and wait for its reply
	stall     bool           // never answer tools/call (set under mu)
	hang      bool           // never answer the GET
	big       bool           // answer tools/call with bigAnswer bytes of text

	mu      sync.Mutex
	streams int           // GETs served
	posts   []http.Header // each POST's headers
	getHdr  http.Header
	out     chan string   // the current stream's events
	drop    chan struct{} // closed to end the current stream
	pinged  chan struct{} // the ping's reply arrived
	seenID  atomic.Int64
}

func (f *fakeSSE) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch {
	case r.Method == http.MethodGet && r.URL.Path == "/sse" && f.hang:
		<-r.Context().Done() // headers never sent
	case r.Method == http.MethodGet && r.URL.Path == "/sse":
		f.mu.Lock()
		f.streams++
		f.getHdr = r.Header.Clone()
		out, drop := make(chan string, 64), make(chan struct{})
		f.out, f.drop = out, drop
		f.mu.Unlock()
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		if !f.noEnd {
			ep := f.endpoint
			if ep == "" {
				ep = "/msg?session=1"
			}
			fmt.Fprintf(w, "event: endpoint\ndata: %s\n\n", ep)
		}
		w.(http.Flusher).Flush()
		if f.endStream {
			return
		}
		for {
			select {
			case ev := <-out:
				fmt.Fprintf(w, "event: message\ndata: %s\n\n", ev)
				w.(http.Flusher).Flush()
			case <-drop:
				return
			case <-r.Context().Done():
				return
			}
		}
	case r.Method == http.MethodPost && r.URL.Path == "/msg":
		body, _ := io.ReadAll(r.Body)
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Result json.RawMessage `json:"result"`
		}
		_ = json.Unmarshal(body, &m)
		f.mu.Lock()
		f.posts = append(f.posts, r.Header.Clone())
		out := f.out
		f.mu.Unlock()
		if code := f.refuse[m.Method]; code != 0 {
			http.Error(w, "no "+m.Method+" here", code)
			return
		}
		w.WriteHeader(http.StatusAccepted)
		if m.Method == "" && string(m.ID) == `"ping-1"` {
			close(f.pinged)
			return
		}
		if m.ID == nil || m.Method == "" {
			return // a notification or a reply
		}
		go f.answer(out, m.ID, m.Method)
	default:
		http.NotFound(w, r)
	}
}

func (f *fakeSSE) answer(out chan string, id json.RawMessage, method string) {
	reply := func(result string) { out <- fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":%s}`, id, result) }
	switch method {
	case "initialize":
		reply(`{"protocolVersion":"2024-11-05","capabilities":{"tools":{}},"serverInfo":{"name":"fake-sse","version":"1"}}`)
	case "tools/list":
		reply(`{"tools":[{"name":"echo","inputSchema":{"type":"object"}}]}`)
	case "tools/call":
		f.mu.Lock()
		stall := f.stall
		f.mu.Unlock()
		if stall {
			return
		}
		if f.pingFirst {
			out <- `{"jsonrpc":"2.0","id":"ping-1","method":"ping"}`
			select {
			case <-f.pinged:
			case <-time.After(5 * time.Second):
				reply(`{"content":[{"type":"text","text":"no reply to the ping"}],"isError":true}`)
				return
			}
		}
		if f.big {
			reply(`{"content":[{"type":"text","text":"` + strings.Repeat("b", bigAnswer) + `"}]}`)
			return
		}
		reply(`{"content":[{"type":"text","text":"echo: again"}]}`)
	default:
		out <- fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"error":{"code":-32601,"message":"no %s"}}`, id, method)
	}
}

// dropStream ends the stream being served.
func (f *fakeSSE) dropStream() {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.drop != nil {
		close(f.drop)
		f.drop = nil
	}
}

func (f *fakeSSE) count() (streams, posts int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.streams, len(f.posts)
}

func startFakeSSE(t *testing.T, f *fakeSSE, timeout time.Duration) (*Client, *httptest.Server) {
	t.Helper()
	f.pinged = make(chan struct{})
	srv := httptest.NewServer(f)
	cl := New(Spec{Name: "fake", URL: srv.URL + "/sse", SSE: true, Timeout: timeout,
		Headers: map[string]string{"Authorization": "Bearer t0ken"}}, mcpxInfo, testLog(t))
	t.Cleanup(func() {
		cl.Close()
		srv.Close()
	})
	return cl, srv
}

// TestSSEFake: the endpoint event's relative URI is resolved against the
// SSE URL and every message is POSTed there with the configured headers;
// the server's request on the stream (a ping) is answered by a POST.
func TestSSEFake(t *testing.T) {
	leakcheck.Check(t)
	f := &fakeSSE{pingFirst: true}
	cl, _ := startFakeSSE(t, f, 5*time.Second)
	ctx := t.Context()
	if err := echo(ctx, cl); err != nil {
		t.Fatalf("tools/call: %v", err)
	}
	streams, posts := f.count()
	if streams != 1 || posts < 4 { // initialize, initialized, tools/call, the ping's reply (server/discover too)
		t.Errorf("%d streams and %d posts; want 1 stream and every message posted", streams, posts)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if got := f.getHdr.Get("Accept"); got != "text/event-stream" {
		t.Errorf("the GET's Accept is %q", got)
	}
	for i, h := range append([]http.Header{f.getHdr}, f.posts...) {
		if h.Get("Authorization") != "Bearer t0ken" {
			t.Errorf("request %d lacks the configured Authorization header", i)
		}
	}
}

// TestSSEStreamDrops: the stream ending fails the call waiting on it,
// saying so, and takes the upstream down; after the backoff the next call
// opens a new stream and succeeds.
func TestSSEStreamDrops(t *testing.T) {
	leakcheck.Check(t)
	f := &fakeSSE{}
	cl, _ := startFakeSSE(t, f, 5*time.Second)
	ctx := t.Context()
	if err := echo(ctx, cl); err != nil {
		t.Fatalf("tools/call: %v", err)
	}
	// A call in flight when the stream drops: its answer never comes.
	hold := make(chan error, 1)
	f.mu.Lock()
	f.stall = true
	f.mu.Unlock()
	go func() { hold <- echo(ctx, cl) }()
	time.Sleep(100 * time.Millisecond)
	f.dropStream()
	err := within(t, 5*time.Second, "the call whose stream dropped", func() error { return <-hold })
	if err == nil || !strings.Contains(err.Error(), "SSE stream ended") {
		t.Fatalf("the call in flight: %v; want it failed saying the SSE stream ended", err)
	}
	if ev := within(t, 5*time.Second, "the down event", func() string { return <-cl.Changes() }); ev != "down" {
		t.Errorf("Changes: %q, want down", ev)
	}
	f.mu.Lock()
	f.stall = false
	f.mu.Unlock()
	if err := echo(ctx, cl); err == nil || !strings.Contains(err.Error(), "retries in") {
		t.Errorf("a call within the backoff: %v; want it refused saying when mcpx retries", err)
	}
	time.Sleep(minBackoff + 50*time.Millisecond)
	if err := echo(ctx, cl); err != nil {
		t.Fatalf("a call after the backoff: %v", err)
	}
	if streams, _ := f.count(); streams != 2 {
		t.Errorf("%d streams opened; want 2 (the restart's)", streams)
	}
}

// TestSSEFailures: each way the transport can go wrong is a clear error
// from the call, naming what was wrong, and never a hang.
func TestSSEFailures(t *testing.T) {
	leakcheck.Check(t)
	cases := []struct {
		name string
		f    *fakeSSE
		want string
		post bool // whether anything may have been POSTed
	}{
		{"no endpoint event, the stream ends", &fakeSSE{noEnd: true, endStream: true}, "SSE stream ended before its endpoint event", false},
		{"the GET never answered", &fakeSSE{hang: true}, "GET the SSE stream: no answer in time", false},
		{"no endpoint event in time", &fakeSSE{noEnd: true}, "sent no endpoint event in time", false},
		{"endpoint on another origin", &fakeSSE{endpoint: "http://127.0.0.2:1/msg?k=secret"}, "not on the SSE url's origin", false},
		{"endpoint on another scheme", &fakeSSE{endpoint: "https://" + "HOST" + "/msg"}, "not on the SSE url's origin", false},
		{"empty endpoint", &fakeSSE{endpoint: " "}, "endpoint event is not a URI", false},
		{"POST 400 on initialize", &fakeSSE{refuse: map[string]int{"initialize": 400}}, "refused the message with HTTP 400: no initialize here", true},
		{"POST 500 on tools/call", &fakeSSE{refuse: map[string]int{"tools/call": 500}}, "refused the message with HTTP 500: no tools/call here", true},
		{"POST 404: the server forgot the connection", &fakeSSE{refuse: map[string]int{"tools/call": 404}}, "HTTP 404", true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cl, srv := startFakeSSE(t, c.f, time.Second)
			if strings.Contains(c.f.endpoint, "HOST") {
				c.f.endpoint = strings.Replace(c.f.endpoint, "HOST", strings.TrimPrefix(srv.URL, "http://"), 1)
			}
			err := within(t, 5*time.Second, "the call", func() error { return echo(t.Context(), cl) })
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got %v; want an error saying %q", err, c.want)
			}
			if !strings.Contains(err.Error(), `upstream "fake"`) {
				t.Errorf("%v does not name the upstream", err)
			}
			if strings.Contains(err.Error(), "secret") {
				t.Errorf("%v quotes the endpoint's query", err)
			}
			if _, posts := c.f.count(); !c.post && posts != 0 {
				t.Errorf("%d messages were POSTed; want none", posts)
			}
		})
	}
}

// TestSSENotAnEventStream: a url that answers the GET with something else
// (a Streamable HTTP server, a 404) says so and what to do.
func TestSSENotAnEventStream(t *testing.T) {
	leakcheck.Check(t)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
	}))
	defer srv.Close()
	cl := New(Spec{Name: "fake", URL: srv.URL + "/mcp", SSE: true, Timeout: time.Second}, mcpxInfo, testLog(t))
	defer cl.Close()
	_, err := cl.Capabilities(context.Background())
	if err == nil || !strings.Contains(err.Error(), "HTTP 405") || !strings.Contains(err.Error(), `"type" is "http"`) {
		t.Fatalf("got %v; want HTTP 405 and the hint to use type http", err)
	}
}

// TestSSELimits: the limits of the other transports hold on this one: a
// call the upstream never answers times out naming it, and a large answer
// the large-message budget has no room for fails its call with -32603
// (not a hang, not a lost answer), the same call being answered once
// there is room.
func TestSSELimits(t *testing.T) {
	leakcheck.Check(t)
	t.Run("timeout", func(t *testing.T) {
		f := &fakeSSE{stall: true}
		cl, _ := startFakeSSE(t, f, 300*time.Millisecond)
		err := within(t, 5*time.Second, "a call never answered", func() error { return echo(t.Context(), cl) })
		if err == nil || !strings.Contains(err.Error(), `upstream "fake" did not answer tools/call within 300ms`) {
			t.Fatalf("got %v; want the timeout naming the upstream", err)
		}
	})
	t.Run("budget", func(t *testing.T) {
		b := smallBudget(t)
		f := &fakeSSE{big: true}
		cl, _ := startFakeSSE(t, f, 10*time.Second)
		ctx := context.Background()
		if err := cl.Start(ctx); err != nil {
			t.Fatal(err)
		}
		other := b.Hold() // another large message in flight
		if err := other.Add(ctx, 2<<20+512<<10); err != nil {
			t.Fatal(err)
		}
		call := func() error {
			_, err := mcp.CallTool(ctx, cl, &mcp.CallToolRequestParams{Name: "echo", Arguments: []byte(`{}`)})
			return err
		}
		err := within(t, 5*time.Second, "a call whose answer the budget has no room for", call)
		var rpc *jsonrpc.Error
		if !errors.As(err, &rpc) || rpc.Code != jsonrpc.InternalError || !strings.Contains(rpc.Message, "busy with large messages") {
			t.Fatalf("got %v; want -32603 saying the server is busy with large messages", err)
		}
		other.Release()
		if err := within(t, 5*time.Second, "the call with room", call); err != nil {
			t.Fatalf("with room in the budget: %v", err)
		}
		if n := b.Used(); n != 0 {
			t.Errorf("%d bytes of the budget still held", n)
		}
	})
}
