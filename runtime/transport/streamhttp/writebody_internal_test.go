package streamhttp

import (
	"net/http"
	"testing"
)

// headerOnly is a ResponseWriter keeping only its header.
type headerOnly struct{ h http.Header }

func (w *headerOnly) Header() http.Header         { return w.h }
func (w *headerOnly) Write(b []byte) (int, error) { return len(b), nil }
func (w *headerOnly) WriteHeader(int)             {}

// TestWriteBodyHeaders: a JSON answer says its type and length, the
// type's value shared by every answer rather than made for each (one
// allocation before it, for every answer).
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
}
