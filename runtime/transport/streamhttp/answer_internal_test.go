package streamhttp

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/mcpx-dev/mcpx/runtime/jsonrpc"
)

// TestAnswerNilMessage: a reply whose message is a nil *jsonrpc.Message
// (held.go passes Reply.Msg on as it is, nil when the client ended its
// listen before the acknowledgement was written) is answered as no
// message at all, not dereferenced (it panicked in the handler).
func TestAnswerNilMessage(t *testing.T) {
	h := New(nil, Options{})
	defer h.Close()
	rec := httptest.NewRecorder()
	w := &response{ResponseWriter: rec}
	var m *jsonrpc.Message
	h.answer(w, newStream(h, w, func() {}), accepts{json: true, sse: true}, m, http.StatusOK)
	if rec.Code != http.StatusNoContent {
		t.Errorf("status %d, want 204 (nothing to say)", rec.Code)
	}
}
