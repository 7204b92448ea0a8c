package streamhttp_test

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/mcpx-dev/mcpx/runtime/transport/streamhttp"
	"github.com/mcpx-dev/mcpx/testkit/leakcheck"
)

// rawPost opens a connection to srv and sends the headers of a POST whose
// Content-Length is declared, then the first bytes of its body; the rest
// is the caller's to send, or not.
func rawPost(t *testing.T, srv *httptest.Server, declared int64, first string) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	fmt.Fprintf(c, "POST / HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: %d\r\n\r\n%s",
		srv.Listener.Addr(), declared, first)
	return c
}

// rawResponse reads the response on c, failing when none comes within 3s.
func rawResponse(t *testing.T, c net.Conn) *http.Response {
	t.Helper()
	c.SetReadDeadline(time.Now().Add(3 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("no response: %v", err)
	}
	return resp
}

// TestDeclaredOversizeBodyIs413AtOnce: a Content-Length over MaxBody is
// answered 413 before any of the body is sent.
func TestDeclaredOversizeBodyIs413AtOnce(t *testing.T) {
	leakcheck.Check(t)
	srv, _ := start(t, streamhttp.Options{MaxBody: 1024})
	c := rawPost(t, srv, 10<<20, "")
	wantError(t, rawResponse(t, c), http.StatusRequestEntityTooLarge, -32600, "null")
}

// TestSlowBodyIs408: a body that stops arriving is answered 408 once
// BodyTimeout has passed, not waited for forever.
func TestSlowBodyIs408(t *testing.T) {
	leakcheck.Check(t)
	srv, _ := start(t, streamhttp.Options{BodyTimeout: 100 * time.Millisecond})
	ping := `{"jsonrpc":"2.0","id":1,"method":"ping"}`
	c := rawPost(t, srv, int64(len(ping)), ping[:10])
	r := wantError(t, rawResponse(t, c), http.StatusRequestTimeout, -32600, "null")
	if !strings.Contains(r.Error.Message, "100ms") {
		t.Errorf("message %q does not name the timeout", r.Error.Message)
	}
	// A body that arrives in time is served, and the deadline is gone
	// once it is read: a request that runs longer than it is answered.
	decode(t, post(t, srv, nil, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"slow"}}`), http.StatusOK)
}

// TestBodiesReadWithinInFlightLimit: a POST whose body is still arriving
// counts against MaxInFlight: another is answered 503 with Retry-After
// before its body is read, and is served once the first is done.
func TestBodiesReadWithinInFlightLimit(t *testing.T) {
	leakcheck.Check(t)
	srv, _ := start(t, streamhttp.Options{MaxInFlight: 1, Logger: discard()})
	ping := `{"jsonrpc":"2.0","id":1,"method":"ping"}`
	c := rawPost(t, srv, int64(len(ping)), ping[:10])
	var refused *http.Response
	eventually(t, "a request refused while a body is being read", func() bool {
		resp := post(t, srv, nil, `{"jsonrpc":"2.0","id":2,"method":"ping"}`)
		if resp.StatusCode == http.StatusOK {
			resp.Body.Close()
			return false
		}
		refused = resp
		return true
	})
	if got := refused.Header.Get("Retry-After"); got == "" {
		t.Error("503 without Retry-After")
	}
	wantError(t, refused, http.StatusServiceUnavailable, -32603, "null")
	io.WriteString(c, ping[10:])
	decode(t, rawResponse(t, c), http.StatusOK)
	eventually(t, "served once the first body is read", func() bool {
		resp := post(t, srv, nil, `{"jsonrpc":"2.0","id":3,"method":"ping"}`)
		defer resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	})
}

// TestDeclaredLengthIsNotPreallocated: a large Content-Length within
// MaxBody does not make the server allocate it before the bytes arrive.
func TestDeclaredLengthIsNotPreallocated(t *testing.T) {
	leakcheck.Check(t)
	srv, _ := start(t, streamhttp.Options{MaxBody: 1 << 40})
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	c := rawPost(t, srv, 1<<30, `{"jsonrpc":"2.0","id":1,"method":"ping"}`)
	c.(*net.TCPConn).CloseWrite()
	resp := rawResponse(t, c)
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest {
		t.Errorf("a body shorter than declared: %d, want 400", resp.StatusCode)
	}
	runtime.ReadMemStats(&after)
	if got := after.TotalAlloc - before.TotalAlloc; got > 64<<20 {
		t.Fatalf("a declared 1 GiB body of 40 bytes allocated %d MiB", got>>20)
	}
}
