package gatewaytest

import (
	"encoding/json"
	"testing"
)

// TestCancelledQuestionReachesHTTPClient: over Streamable HTTP, a client
// that cancels its call while mcpx's question waits for its answer gets
// notifications/cancelled naming the question on the call's stream, and
// then the stream ends (a cancelled request is answered nothing). The
// cancellation is queued just before the stream ends; streamhttp writes
// what is queued before it closes a stream that has no final response
// (flushQueue), where it used to drop it. Bridge 1 (a legacy upstream
// over stdio and HTTP) and bridge 3 (a 2026-07-28 upstream), several
// times each, since the loss was a race between the queue and the end.
func TestCancelledQuestionReachesHTTPClient(t *testing.T) {
	legacyGW, _ := askGateway(t, askUpstream{ns: "s", rev: "2025-06-18"}, askUpstream{ns: "h", rev: "2025-11-25", http: true})
	modernGW, _ := b3Gateway(t)
	for _, tc := range []struct {
		name string
		c    *askingClient
		tool string
	}{
		{"bridge1/up-stdio", newHTTPAskingClient(t, legacyGW, "2025-11-25", declaresAll), "s__elicit"},
		{"bridge1/up-http", newHTTPAskingClient(t, legacyGW, "2025-11-25", declaresAll), "h__elicit"},
		{"bridge3/up-http", newHTTPAskingClient(t, modernGW, "2025-11-25", declaresAll), "up__ask"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for i := range 10 {
				s := b3Start(t, tc.c, tc.tool)
				q, ok := s.next()
				if !ok || q.Method != "elicitation/create" {
					s.done()
					t.Fatalf("run %d: got %+v, want the question", i, q)
				}
				s.cancel()
				f, ok := s.next()
				var p struct {
					RequestID json.RawMessage `json:"requestId"`
				}
				json.Unmarshal(f.Params, &p)
				if !ok || f.Method != "notifications/cancelled" || string(p.RequestID) != string(q.ID) {
					t.Errorf("run %d: after the cancel the stream carried %+v (ok %v), want notifications/cancelled for the question %s", i, f, ok, q.ID)
				}
				if f, ok := s.next(); ok {
					t.Errorf("run %d: after the cancellation the stream carried %+v, want its end", i, f)
				}
				s.done()
			}
		})
	}
}
