package streamhttp

import (
	"sync/atomic"
	"testing"
)

// TestLiveSetCancels: a shutdown cancels the POSTs recorded, and one
// recorded after it is cancelled at once; one removed is not.
func TestLiveSetCancels(t *testing.T) {
	h := New(nil, Options{})
	defer h.Close()
	var n atomic.Int32
	st := func() *stream { return &stream{cancel: func() { n.Add(1) }} }
	a, b, gone := st(), st(), st()
	h.posts.add(h, a)
	h.posts.add(h, b)
	h.posts.add(h, gone).remove(gone)
	if n.Load() != 0 {
		t.Fatal("cancelled before the shutdown")
	}
	h.stopRunning()
	h.posts.cancelAll()
	if got := n.Load(); got != 2 {
		t.Errorf("the shutdown cancelled %d requests, want 2", got)
	}
	h.posts.add(h, st())
	if got := n.Load(); got != 3 {
		t.Error("a request recorded after the shutdown was not cancelled at once")
	}
}
