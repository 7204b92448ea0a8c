package stdio_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/mcpx-dev/mcpx/runtime/budget"
	"github.com/mcpx-dev/mcpx/runtime/transport/stdio"
	"github.com/mcpx-dev/mcpx/testkit/leakcheck"
)

// TestLargeLineBudget: while the process's large-message budget is held
// elsewhere, a large line waits the budget's time, then is answered
// -32603 (with its id, found as the line went by) saying the server is
// busy with large messages; the lines after it are read as before, and
// once there is room the same line is served.
func TestLargeLineBudget(t *testing.T) {
	leakcheck.Check(t)
	old := budget.Default()
	b := budget.New(3<<20, 1<<20, 300*time.Millisecond)
	budget.SetDefault(b)
	t.Cleanup(func() { budget.SetDefault(old) })
	s := start(t, stdio.Options{})
	line := `{"jsonrpc":"2.0","method":"ping","params":{"_meta":{"pad":"` + strings.Repeat("p", 2<<20) + `"}},"id":9}`

	other := b.Hold()
	if err := other.Add(context.Background(), 2<<20+512<<10); err != nil {
		t.Fatal(err)
	}
	s.send(line)
	if got := s.recv(); !strings.Contains(got, `"id":9`) || !strings.Contains(got, `"code":-32603`) || !strings.Contains(got, "busy with large messages") {
		t.Fatalf("answer with the budget held: %.300s; want -32603 to id 9 saying the server is busy with large messages", got)
	}
	s.send(`{"jsonrpc":"2.0","id":10,"method":"ping"}`)
	if got := s.recv(); !strings.Contains(got, `"id":10`) || strings.Contains(got, "error") {
		t.Fatalf("the next line: %.300s", got)
	}
	other.Release()
	s.send(line)
	if got := s.recv(); !strings.Contains(got, `"id":9`) || strings.Contains(got, "busy") {
		t.Fatalf("answer once the budget has room: %.300s", got)
	}
	// Given back once the answer is written, which the client may read
	// a moment before.
	for deadline := time.Now().Add(2 * time.Second); b.Used() != 0 && time.Now().Before(deadline); {
		time.Sleep(time.Millisecond)
	}
	if n := b.Used(); n != 0 {
		t.Errorf("%d bytes of the budget still held once answered", n)
	}
}
