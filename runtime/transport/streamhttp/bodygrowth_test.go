package streamhttp_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/mcpx-dev/mcpx/runtime/transport/streamhttp"
)

// TestReadBodyGrowth: a body over the 64 kB read ahead grows once to its
// declared length (it grew by quarters, 65 kB of arguments allocating
// ~230 kB), and a declared length the body does not have is never
// allocated ahead beyond twice what arrived.
func TestReadBodyGrowth(t *testing.T) {
	for _, size := range []int{100, 64 << 10, 64<<10 + 1, 100 << 10, 1 << 20} {
		body := strings.Repeat("x", size)
		r := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(body))
		b, err := streamhttp.ReadLimited(httptest.NewRecorder(), r, 4<<20, nil)
		if err != nil || string(b) != body {
			t.Fatalf("%d bytes: %v, read %d", size, err, len(b))
		}
		if cap(b) != size+1 {
			t.Errorf("%d bytes declared and sent: a buffer of %d", size, cap(b))
		}
		r = httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(body))
		r.ContentLength = 3 << 20 // a claim the body does not keep
		b, _ = streamhttp.ReadLimited(httptest.NewRecorder(), r, 4<<20, nil)
		if len(b) != size || cap(b) > max(2*size+2, 64<<10+1) {
			t.Errorf("%d bytes sent of 3 MB declared: read %d into %d", size, len(b), cap(b))
		}
	}
}
