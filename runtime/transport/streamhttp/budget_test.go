package streamhttp_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mcpx-dev/mcpx/runtime/budget"
	"github.com/mcpx-dev/mcpx/runtime/transport/streamhttp"
	"github.com/mcpx-dev/mcpx/testkit/leakcheck"
)

// TestLargeBodyBudget: while the process's large-message budget is held
// elsewhere, a large request body waits the budget's time, then is
// answered 503 with Retry-After saying the server is busy with large
// messages; once there is room the same request is served, and the
// budget is given back.
func TestLargeBodyBudget(t *testing.T) {
	leakcheck.Check(t)
	old := budget.Default()
	b := budget.New(3<<20, 1<<20, 300*time.Millisecond)
	budget.SetDefault(b)
	t.Cleanup(func() { budget.SetDefault(old) })
	srv, _ := start(t, streamhttp.Options{MaxBody: 8 << 20})
	body := `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"_meta":{"pad":"` + strings.Repeat("p", 2<<20) + `"}}}`

	other := b.Hold()
	if err := other.Add(context.Background(), 2<<20+512<<10); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	resp := post(t, srv, nil, body)
	r := wantError(t, resp, http.StatusServiceUnavailable, -32603, "null")
	if resp.Header.Get("Retry-After") == "" || !strings.Contains(r.Error.Message, "busy with large messages") {
		t.Errorf("503 with Retry-After %q and message %q; want Retry-After and a message saying the server is busy with large messages", resp.Header.Get("Retry-After"), r.Error.Message)
	}
	if d := time.Since(start); d < 250*time.Millisecond {
		t.Errorf("refused after %s, before the budget's wait", d)
	}
	other.Release()

	resp = post(t, srv, nil, body)
	if resp.StatusCode == http.StatusServiceUnavailable {
		t.Fatalf("still 503 once the budget has room")
	}
	if got := decode(t, resp, resp.StatusCode); string(got.ID) != "1" {
		t.Errorf("answer %+v; want one to id 1", got)
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
