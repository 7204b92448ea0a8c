// Package gcfloor keeps the Go collector from running before the heap has
// grown to a floor.
//
// The collector's goal is the live heap times (1 + GOGC/100), and at least
// 4 MiB. A gateway's live heap is small (~3 MiB serving 32 clients) and
// what it allocates per call is not (~10 kB for a small tools/call,
// ~500 kB for 64 kB of arguments echoed back), so at GOGC's default it
// collected 25 times a second under load, and every few calls of a large
// payload. Each cycle costs more than its mark work: assists, write
// barriers, a cold cache, and on a small machine the idle mark workers
// take cores the upstream and the clients wait for.
//
// With a floor F, the GOGC percent is set after every cycle so that the
// next goal is max(F, live heap × (1 + base/100)), base being the percent
// the process started with: a heap that outgrows F/2 is collected as
// before. GOMEMLIMIT, when set, still bounds the heap.
package gcfloor

import (
	"math"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
	"sync/atomic"
)

// maxPercent bounds the percent set for a tiny live heap.
const maxPercent = 10_000

// liveMin is the least live heap the percent is computed from.
const liveMin = 1 << 20

// Floor is a running floor; the zero value is not one (see [Start]).
type Floor struct {
	floor uint64
	base  int
	set   atomic.Int64 // the percent last set

	mu      sync.Mutex // adjust against Stop
	stopped bool
	sample  [1]metrics.Sample
}

// sentinel is allocated for each cycle; its cleanup runs once the
// collector has found it unreachable, which is after the next cycle.
type sentinel struct {
	_ *int // not a tiny allocation, which may never be collected alone
	_ [8]byte
}

// Start sets the collector's goal to at least floor bytes of heap, from
// now until Stop, and returns the Floor; floor 0 returns nil, and nothing
// changes. It should be called once, by a program's main: the GOGC percent
// is the process's.
func Start(floor uint64) *Floor {
	if floor == 0 {
		return nil
	}
	base := debug.SetGCPercent(100)
	debug.SetGCPercent(base)
	if base < 0 { // GOGC=off: the collector is the memory limit's alone
		return nil
	}
	f := &Floor{floor: floor, base: base}
	f.sample[0].Name = "/gc/heap/live:bytes"
	f.adjust()
	f.arm()
	return f
}

// arm has adjust run after the next cycle.
func (f *Floor) arm() {
	runtime.AddCleanup(new(sentinel), func(f *Floor) {
		if f.adjust() {
			f.arm()
		}
	}, f)
}

// adjust sets the percent from the live heap the last cycle marked;
// false once f is stopped.
func (f *Floor) adjust() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.stopped {
		return false
	}
	metrics.Read(f.sample[:])
	live := uint64(liveMin)
	if s := f.sample[0]; s.Value.Kind() == metrics.KindUint64 {
		live = max(live, s.Value.Uint64())
	}
	p := f.base
	if want := (float64(f.floor)/float64(live) - 1) * 100; want > float64(p) {
		p = int(math.Min(want, maxPercent))
	}
	if int64(p) != f.set.Load() {
		debug.SetGCPercent(p)
		f.set.Store(int64(p))
	}
	return true
}

// Percent is the GOGC percent f last set.
func (f *Floor) Percent() int { return int(f.set.Load()) }

// Stop ends the floor and puts back the percent the process had. It may
// be called on a nil Floor.
func (f *Floor) Stop() {
	if f == nil {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.stopped {
		f.stopped = true
		debug.SetGCPercent(f.base)
	}
}
