package gcfloor_test

import (
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"testing"
	"time"

	"github.com/mcpx-dev/mcpx/runtime/gcfloor"
)

// percent is the process's GOGC percent now.
func percent() int {
	p := debug.SetGCPercent(100)
	debug.SetGCPercent(p)
	return p
}

// waitPercent collects until f has set a percent that ok accepts, or
// fails after a few seconds.
func waitPercent(t *testing.T, f *gcfloor.Floor, ok func(int) bool) int {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		runtime.GC()
		time.Sleep(20 * time.Millisecond) // the watcher looks every 10 ms
		if p := f.Percent(); ok(p) && percent() == p {
			return p
		}
	}
	t.Fatalf("the percent stayed %d (process %d)", f.Percent(), percent())
	return 0
}

// heapGoal is the runtime's heap goal now.
func heapGoal() uint64 {
	s := []metrics.Sample{{Name: "/gc/heap/goal:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

var retained [][]byte

// TestFloor: a small live heap gets a percent whose goal is the floor;
// one past half the floor gets the base percent back, and Stop restores
// the process's percent.
func TestFloor(t *testing.T) {
	base := percent()
	if base != 100 {
		t.Skipf("GOGC is %d here; the test assumes 100", base)
	}
	const floor = 64 << 20
	f := gcfloor.Start(floor)
	defer f.Stop()
	// Live heap of a test binary: a few MiB; the goal is the floor.
	p := waitPercent(t, f, func(p int) bool { return p > 500 })
	goal := heapGoal()
	t.Logf("small heap: GOGC %d, goal %.1f MiB", p, float64(goal)/(1<<20))
	if goal > floor || goal < floor*9/10 {
		t.Errorf("the runtime's goal is %d bytes, want the floor (%d) or a little under", goal, floor)
	}

	// 48 MiB live, past half the floor: the base percent.
	for range 48 {
		retained = append(retained, make([]byte, 1<<20))
	}
	waitPercent(t, f, func(p int) bool { return p == base })
	retained = nil

	f.Stop()
	if got := percent(); got != base {
		t.Errorf("after Stop GOGC is %d, want %d", got, base)
	}
	runtime.GC()
	time.Sleep(10 * time.Millisecond)
	if got := percent(); got != base {
		t.Errorf("a cycle after Stop set GOGC %d", got)
	}
}

// TestZeroFloor: no floor changes nothing.
func TestZeroFloor(t *testing.T) {
	before := percent()
	if f := gcfloor.Start(0); f != nil {
		t.Fatal("Start(0) returned a floor")
	}
	var f *gcfloor.Floor
	f.Stop() // a nil floor's Stop does nothing
	if percent() != before {
		t.Errorf("GOGC %d, was %d", percent(), before)
	}
}
