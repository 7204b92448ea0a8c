//go:build !race

package upstream

import "testing"

// TestNameHeaderAllocations: a name sent before is its shared value (one
// allocation a request before).
func TestNameHeaderAllocations(t *testing.T) {
	h := &httpConn{}
	h.nameHeader("echo")
	if n := testing.AllocsPerRun(100, func() { h.nameHeader("echo") }); n != 0 {
		t.Errorf("nameHeader of a name sent before: %v allocations, want 0", n)
	}
}
