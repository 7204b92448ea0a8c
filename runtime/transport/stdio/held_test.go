package stdio_test

import (
	"context"
	"fmt"
	"io"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/mcpx-dev/mcpx/runtime/transport/stdio"
	"github.com/mcpx-dev/mcpx/testkit/leakcheck"
)

// TestStdioListensHoldNoGoroutine: open listens on stdio are held by the
// edge as registrations (HandleHeld): 100 of them add no goroutine each
// (there was one waiting a listen), and the client's notifications/cancelled
// for one still ends it silently while the others go on.
func TestStdioListensHoldNoGoroutine(t *testing.T) {
	leakcheck.Check(t)
	s := startWith(t, context.Background(), newChangingNS(), stdio.Options{})
	io.WriteString(s.in, `{"jsonrpc":"2.0","id":"ping0","method":"ping"}`+"\n")
	if got := s.recv(); !strings.Contains(got, `"id":"ping0"`) {
		t.Fatalf("ping: %s", got)
	}
	time.Sleep(50 * time.Millisecond)
	before := runtime.NumGoroutine()
	const n = 100
	go func() {
		for i := range n {
			if _, err := io.WriteString(s.in, listenLine(fmt.Sprint("L", i), `{"toolsListChanged":true}`)+"\n"); err != nil {
				return
			}
		}
	}()
	for range n {
		if got := s.recv(); !strings.Contains(got, "notifications/subscriptions/acknowledged") {
			t.Fatalf("want an acknowledgement: %s", got)
		}
	}
	var during int
	deadline := time.Now().Add(5 * time.Second)
	for during = runtime.NumGoroutine(); during-before > 10 && time.Now().Before(deadline); during = runtime.NumGoroutine() {
		time.Sleep(10 * time.Millisecond)
	}
	if during-before > 10 {
		t.Fatalf("goroutines: %d before, %d with %d listens open: want no goroutine a listen", before, during, n)
	}
	// The client cancels one: nothing is sent for it; the next ping is
	// answered, nothing of L7 before it.
	io.WriteString(s.in, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"L7"}}`+"\n")
	io.WriteString(s.in, `{"jsonrpc":"2.0","id":"ping1","method":"ping"}`+"\n")
	if got := s.recv(); !strings.Contains(got, `"id":"ping1"`) {
		t.Fatalf("after cancelling L7, want the ping's answer: %s", got)
	}
}
