package edge

import (
	"context"
	"testing"
)

// TestSessionInflight: requests tracked in the slot and in the map are
// found, refused a second time, replaced, cancelled and forgotten alike,
// whichever ends first.
func TestSessionInflight(t *testing.T) {
	cancelled := map[string]int{}
	cancelFor := func(id string) context.CancelCauseFunc {
		return func(error) { cancelled[id]++ }
	}
	s := new(Session)
	for _, id := range []string{"1", "2", "3"} {
		if !s.track(id, cancelFor(id)) {
			t.Fatalf("%s refused", id)
		}
	}
	for _, id := range []string{"1", "2", "3"} {
		if s.track(id, cancelFor(id)) {
			t.Errorf("%s tracked twice", id)
		}
		s.Cancel([]byte(id))
	}
	s.retrack("1", cancelFor("1b"))
	s.retrack("3", cancelFor("3b"))
	s.Cancel([]byte("1"))
	s.Cancel([]byte("3"))
	s.untrack("1") // the slot's: "2" and "3" still found
	s.Cancel([]byte("2"))
	s.Cancel([]byte("1"))
	if !s.track("4", cancelFor("4")) || s.track("2", nil) {
		t.Error("after untrack: 4 refused or 2 forgotten")
	}
	s.untrack("2")
	s.untrack("3")
	s.Cancel([]byte("4"))
	s.Cancel([]byte("3"))
	want := map[string]int{"1": 1, "2": 2, "3": 1, "1b": 1, "3b": 1, "4": 1}
	for id, n := range want {
		if cancelled[id] != n {
			t.Errorf("%s cancelled %d times, want %d (%v)", id, cancelled[id], n, cancelled)
		}
	}
	if len(cancelled) != len(want) {
		t.Errorf("cancelled %v", cancelled)
	}
}

// TestSessionTrackOneAllocations: a session's one request (a 2026-07-28
// request's) is tracked without a map (2 allocations before).
func TestSessionTrackOneAllocations(t *testing.T) {
	cancel := context.CancelCauseFunc(func(error) {})
	if n := testing.AllocsPerRun(100, func() {
		s := new(Session)
		if !s.track("1", cancel) {
			t.Fatal("refused")
		}
		s.untrack("1")
	}); n > 1 {
		t.Errorf("%v allocations, want 1 (the session)", n)
	}
}
