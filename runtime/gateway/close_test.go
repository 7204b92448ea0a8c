package gateway

import (
	"strings"
	"testing"
	"time"

	"github.com/mcpx-dev/mcpx/testkit/leakcheck"
)

// slowClose is an upstream whose Close takes wait, as a process given its
// grace period does.
type slowClose struct {
	*fake
	wait time.Duration
}

func (s slowClose) Close() error {
	time.Sleep(s.wait)
	return s.fake.Close()
}

// TestCloseIsParallel: upstreams are closed at once, not one after
// another; 11 that take 1 s each close in about 1 s, not 11.
func TestCloseIsParallel(t *testing.T) {
	leakcheck.Check(t)
	var ups []any
	var fakes []*fake
	for _, n := range []string{"a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k"} {
		f := newFake(n, "t")
		fakes = append(fakes, f)
		ups = append(ups, slowClose{f, time.Second})
	}
	g, _ := gateway(t, ups...)
	start := time.Now()
	if err := g.Close(); err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took > 3*time.Second {
		t.Fatalf("Close took %v for 11 upstreams of 1 s each; want about 1 s", took)
	}
	for _, f := range fakes {
		f.mu.Lock()
		closed := f.closed
		f.mu.Unlock()
		if !closed {
			t.Errorf("upstream %s not closed", f.name)
		}
	}
}

// TestCloseHasADeadline: an upstream that does not finish closing does
// not hold Close past its deadline; the error names it.
func TestCloseHasADeadline(t *testing.T) {
	leakcheck.Check(t)
	stuck := newFake("stuck", "t")
	g, _ := gateway(t, slowClose{newFake("quick", "t"), 0}, slowClose{stuck, 3 * time.Second})
	start := time.Now()
	err := g.CloseWithin(500 * time.Millisecond)
	if took := time.Since(start); took > 2*time.Second {
		t.Fatalf("CloseWithin(500ms) took %v", took)
	}
	if err == nil || !strings.Contains(err.Error(), `"stuck"`) || strings.Contains(err.Error(), `"quick"`) {
		t.Fatalf("err = %v; want one naming the stuck upstream only", err)
	}
	// The stuck one still finishes closing, in the background (and the
	// leak check then finds nothing left).
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		stuck.mu.Lock()
		closed := stuck.closed
		stuck.mu.Unlock()
		if closed {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the stuck upstream was never closed")
		}
	}
}
