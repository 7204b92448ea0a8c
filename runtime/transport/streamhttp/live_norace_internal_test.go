//go:build !race

package streamhttp

import "testing"

// TestLiveSetAllocations: recording a running POST for the shutdown
// allocates nothing (context.AfterFunc on Handler.running was two
// allocations per request).
func TestLiveSetAllocations(t *testing.T) {
	h := New(nil, Options{})
	defer h.Close()
	s := &stream{cancel: func() {}}
	h.posts.add(h, s).remove(s)
	if n := testing.AllocsPerRun(100, func() { h.posts.add(h, s).remove(s) }); n > 0 {
		t.Errorf("add and remove: %v allocations, want none", n)
	}
}
