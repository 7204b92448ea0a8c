package streamhttp

import (
	"net/http"
	"strconv"
	"testing"
)

// headerOnly is a ResponseWriter keeping only its header.
type headerOnly struct{ h http.Header }

func (w *headerOnly) Header() http.Header         { return w.h }
func (w *headerOnly) Write(b []byte) (int, error) { return len(b), nil }
func (w *headerOnly) WriteHeader(int)             {}

// TestWriteBodyHeaders: a JSON answer says its type and length, the
// type's value shared by every answer rather than made for each (one
// allocation before it, for every answer), and so is the length's value
// of an answer under 4 kB (two before).
func TestWriteBodyHeaders(t *testing.T) {
	w := &headerOnly{h: http.Header{}}
	body := make([]byte, 12345)
	writeBody(w, http.StatusOK, body[:1], body[1:])
	if ct, cl := w.h.Get("Content-Type"), w.h.Get("Content-Length"); ct != "application/json" || cl != "12345" {
		t.Errorf("Content-Type %q, Content-Length %q; want application/json, 12345", ct, cl)
	}
	if n := testing.AllocsPerRun(100, func() { writeBody(w, http.StatusOK, body) }); n > 2 {
		t.Errorf("writeBody: %v allocations, want at most 2 (the length and its value)", n)
	}
	small := body[:345]
	writeBody(w, http.StatusOK, small[:1], small[1:])
	if cl := w.h.Get("Content-Length"); cl != "345" {
		t.Errorf("Content-Length %q, want 345", cl)
	}
	if n := testing.AllocsPerRun(100, func() { writeBody(w, http.StatusOK, small) }); n > 0 {
		t.Errorf("writeBody of 345 bytes: %v allocations, want none", n)
	}
	for _, n := range []int{0, 99, 4095, 4096} {
		if got := contentLength(n); len(got) != 1 || got[0] != strconv.Itoa(n) {
			t.Errorf("contentLength(%d) = %q", n, got)
		}
	}
}
