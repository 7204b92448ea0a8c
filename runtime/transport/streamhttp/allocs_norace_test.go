//go:build !race

package streamhttp_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/mcpx-dev/mcpx/runtime/transport/streamhttp"
)

// nullWriter is a ResponseWriter that keeps nothing: what a POST allocates
// is then the handler's alone.
type nullWriter struct {
	h    http.Header
	code int
}

func (d *nullWriter) Header() http.Header         { return d.h }
func (d *nullWriter) Write(b []byte) (int, error) { return len(b), nil }
func (d *nullWriter) WriteHeader(code int)        { d.code = code }

// TestPostAllocations counts what one small 2026-07-28 tools/call costs
// the handler and the edge behind it, in memory: 48. The request's
// context is one cancellation that its client's side and a shutdown both
// end (two nested ones were 5 allocations more), the stream's
// ResponseController is part of the stream (one more), and a small
// answer's Content-Length value is shared (TestWriteBodyHeaders; two),
// so are the reserved _meta keys the transport reads
// (TestReadPeekAllocations; two), and the shutdown's watch on the request
// is an entry in Handler.posts (TestLiveSetAllocations; two); the
// request's budget scope and its stream are one allocation (one), with
// its response, its peek and its 2026-07-28 edge session (three; 52
// before), and the handler context's notifier and asker are part of the
// edge's call (one).
func TestPostAllocations(t *testing.T) {
	if testing.Short() {
		t.Skip("counts allocations")
	}
	h := streamhttp.New(newEdge(), streamhttp.Options{})
	defer h.Close()
	body := []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"progress",` + modernMeta + `}}`)
	req := httptest.NewRequestWithContext(context.Background(), http.MethodPost, "/mcp", nil)
	for k, v := range modern("tools/call", "progress") {
		req.Header.Set(k, v)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	rd := bytes.NewReader(body)
	w := &nullWriter{h: http.Header{}}
	serve := func() {
		rd.Reset(body)
		req.Body, req.ContentLength = io.NopCloser(rd), int64(len(body))
		clear(w.h)
		w.code = 0
		h.ServeHTTP(w, req)
		if w.code != http.StatusOK {
			t.Fatalf("status %d", w.code)
		}
	}
	serve()
	n := testing.AllocsPerRun(200, serve)
	t.Logf("%v allocations a POST", n)
	if n > 48 {
		t.Errorf("a POST: %v allocations, want at most 48", n)
	}
}
