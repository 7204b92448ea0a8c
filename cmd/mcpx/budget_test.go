package main

import (
	"strings"
	"testing"

	"github.com/mcpx-dev/mcpx/runtime/budget"
)

// TestLargeBudgetFlag: --large-budget sets the process's large-message
// budget: with 1.5 MB, a 2 MiB line (over the 1 MiB threshold and the
// whole budget) is refused at once with -32603 saying the server is busy
// with large messages; a small one is served.
func TestLargeBudgetFlag(t *testing.T) {
	old, oldIn := budget.Default(), stdin
	t.Cleanup(func() { budget.SetDefault(old); stdin = oldIn })
	big := `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"_meta":{"pad":"` + strings.Repeat("p", 2<<20) + `"}}}`
	stdin = strings.NewReader(big + "\n" + `{"jsonrpc":"2.0","id":2,"method":"ping"}` + "\n")
	code, out, errOut := mcpx(t, "stdio", "--large-budget", "1500000")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 2 || !strings.Contains(lines[0], `"id":1`) || !strings.Contains(lines[0], "-32603") || !strings.Contains(lines[0], "busy with large messages") ||
		lines[1] != `{"jsonrpc":"2.0","id":2,"result":{}}` {
		t.Errorf("answers:\n%.400s\nwant the large line refused, busy, and the small one served", out)
	}
	if got := budget.Default().Size(); got != 1500000 {
		t.Errorf("the budget is %d bytes, want 1500000", got)
	}
}
