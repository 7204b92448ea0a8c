package streamhttp_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/mcpx-dev/mcpx/runtime/transport/streamhttp"
	"github.com/mcpx-dev/mcpx/testkit/leakcheck"
)

// TestFullSessionTableEvictsOldestIdle: when the table is full, a new
// initialize ends the session unused the longest among those with no
// request in progress and no stream held, instead of locking new clients
// out until the idle timeout.
func TestFullSessionTableEvictsOldestIdle(t *testing.T) {
	leakcheck.Check(t)
	srv, h := start(t, streamhttp.Options{MaxSessions: 3})
	held := openSession(t, srv, "2025-11-25") // the oldest, but in use
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stream := do(t, ctx, http.MethodGet, srv.URL, hdr{"Mcp-Session-Id": held, "Accept": "text/event-stream"}, "")
	defer stream.Body.Close()
	eventually(t, "the GET stream open", func() bool { return h.OpenStreams() == 1 })
	older := openSession(t, srv, "2025-11-25")
	time.Sleep(5 * time.Millisecond)
	newer := openSession(t, srv, "2025-11-25")
	time.Sleep(5 * time.Millisecond)
	ping := `{"jsonrpc":"2.0","id":2,"method":"ping"}`
	decode(t, post(t, srv, hdr{"Mcp-Session-Id": older}, ping), http.StatusOK) // newer is now the oldest idle
	openSession(t, srv, "2025-11-25")
	if n := h.OpenSessions(); n != 3 {
		t.Errorf("%d sessions held, want 3", n)
	}
	wantError(t, post(t, srv, hdr{"Mcp-Session-Id": newer}, ping), http.StatusNotFound, -32600, "2")
	decode(t, post(t, srv, hdr{"Mcp-Session-Id": older}, ping), http.StatusOK)
	decode(t, post(t, srv, hdr{"Mcp-Session-Id": held}, ping), http.StatusOK)
}

// TestEvery503HasRetryAfter: the 503s besides MaxInFlight's (MaxStreams,
// shutting down) carry Retry-After too.
func TestEvery503HasRetryAfter(t *testing.T) {
	leakcheck.Check(t)
	srv, h := start(t, streamhttp.Options{MaxStreams: 1, Logger: discard()})
	sid := openSession(t, srv, "2025-11-25")
	get := hdr{"Mcp-Session-Id": sid, "Accept": "text/event-stream"}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	first := do(t, ctx, http.MethodGet, srv.URL, get, "")
	defer first.Body.Close()
	eventually(t, "first stream open", func() bool { return h.OpenStreams() == 1 })
	listen := `{"jsonrpc":"2.0","id":5,"method":"subscriptions/listen","params":{"notifications":{},` + modernMeta + `}}`
	check := func(what string, resp *http.Response) {
		t.Helper()
		if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" {
			t.Errorf("%s: %d, Retry-After %q", what, resp.StatusCode, resp.Header.Get("Retry-After"))
		}
		resp.Body.Close()
	}
	check("GET beyond MaxStreams", do(t, nil, http.MethodGet, srv.URL, get, ""))
	check("listen beyond MaxStreams", post(t, srv, modern("subscriptions/listen", ""), listen))
	h.Close()
	check("shutting down", post(t, srv, nil, `{"jsonrpc":"2.0","id":1,"method":"ping"}`))
}
