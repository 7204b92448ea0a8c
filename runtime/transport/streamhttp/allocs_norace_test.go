//go:build !race

package streamhttp_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
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

// TestReadBodyReadAhead: a body declared longer than the 64 kB read
// ahead allocates one buffer, of its length, as a short one does; the
// read-ahead it fills first is pooled (it was a 64 kB buffer dropped on
// every such request). The bytes are counted too: about the body's
// length, not that and 64 kB more.
func TestReadBodyReadAhead(t *testing.T) {
	read := func(size int) (allocs, bytesPer float64) {
		body := bytes.Repeat([]byte("x"), size)
		r := httptest.NewRequest(http.MethodPost, "/mcp", nil)
		src := bytes.NewReader(body)
		run := func() {
			src.Reset(body)
			r.Body = io.NopCloser(src)
			r.ContentLength = int64(size)
			b, err := streamhttp.ReadLimited(httptest.NewRecorder(), r, 4<<20, nil)
			if err != nil || len(b) != size {
				t.Fatalf("%d bytes: %v, read %d", size, err, len(b))
			}
		}
		run() // the pool's first read-ahead
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		allocs = testing.AllocsPerRun(50, run)
		runtime.ReadMemStats(&after)
		return allocs, float64(after.TotalAlloc-before.TotalAlloc) / 51
	}
	smallAllocs, _ := read(1 << 10)
	for _, size := range []int{64<<10 + 1, 100 << 10} {
		allocs, per := read(size)
		if allocs != smallAllocs {
			t.Errorf("%d bytes: %v allocations, a 1 kB body %v", size, allocs, smallAllocs)
		}
		if per > float64(size)+16<<10 {
			t.Errorf("%d bytes: %.0f bytes allocated a read", size, per)
		}
	}
}
