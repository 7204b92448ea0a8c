// Package gcfloor keeps the Go collector from running before the heap has
// grown to a floor.
//
// The collector's goal is the live heap plus GOGC percent of the live
// heap, the goroutine stacks and the globals, and at least 4 MiB. A
// gateway's live heap is small (~3 MiB serving 32 clients) and what it
// allocates per call is not (~10 kB for a small tools/call, ~500 kB for
// 64 kB of arguments echoed back), so at GOGC's default it collected 25
// times a second under load, and every few calls of a large payload. Each
// cycle costs more than its mark work: assists, write barriers, a cold
// cache, and on a small machine the idle mark workers take cores the
// upstream and the clients wait for.
//
// With a floor F, the GOGC percent is set after every cycle so that the
// next goal is max(F, the goal of the percent the process started with):
// a heap that outgrows F/2 is collected as before. GOMEMLIMIT, when set,
// still bounds the heap.
//
// A percent set for a small live heap multiplies a large one as well, so
// it must be put back soon after the cycle that marked the large one. A
// watcher goroutine reads the cycle count every 10 ms while the collector
// runs, and once a second when it has not run for a while. (An earlier
// version adjusted from a cleanup on a sentinel object. Cleanups run when
// the sweeper reaches their object, which under load was up to a second and
// a cycle late: a 1,000-client load run reached a 185 MB goal over a 26 MB
// live heap, and mcpx peaked at 362 MiB of RSS against 139 MiB without a
// floor; BENCHMARKS.md, tenth round.)
package gcfloor

import (
	"math"
	"runtime/debug"
	"runtime/metrics"
	"sync"
	"sync/atomic"
	"time"
)

// maxPercent bounds the percent set for a tiny live heap.
const maxPercent = 10_000

// minHeap is the runtime's least goal at GOGC 100. That minimum scales
// with the percent, so the percent is computed for at least this much
// heap: else, for a tiny heap, the minimum alone would pass the floor.
const minHeap = 4 << 20

// How often the watcher reads the cycle count: busyPoll until the
// collector has not run for idleAfter, then idlePoll.
const (
	busyPoll  = 10 * time.Millisecond
	idlePoll  = time.Second
	idleAfter = 5 * time.Second
)

// The runtime/metrics the percent is computed from, in sample order.
var sampleNames = [...]string{
	"/gc/cycles/total:gc-cycles",
	"/gc/heap/live:bytes",
	"/gc/scan/stack:bytes",
	"/gc/scan/globals:bytes",
}

// Floor is a running floor; the zero value is not one (see [Start]).
type Floor struct {
	floor uint64
	base  int
	set   atomic.Int64 // the percent last set

	// Owned by the watcher once Start returns.
	samples [len(sampleNames)]metrics.Sample
	cycles  uint64 // the cycle count adjust last saw

	stopOnce sync.Once
	stop     chan struct{} // closed by Stop
	done     chan struct{} // closed when the watcher has returned
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
	f := &Floor{floor: floor, base: base, stop: make(chan struct{}), done: make(chan struct{})}
	for i, name := range sampleNames {
		f.samples[i].Name = name
	}
	f.set.Store(int64(base))
	f.adjust(true)
	go f.watch()
	return f
}

// watch adjusts the percent after each cycle until Stop.
func (f *Floor) watch() {
	defer close(f.done)
	t := time.NewTimer(busyPoll)
	defer t.Stop()
	lastCycle := time.Now()
	for {
		select {
		case <-f.stop:
			return
		case now := <-t.C:
			if f.adjust(false) {
				lastCycle = now
			}
			if now.Sub(lastCycle) < idleAfter {
				t.Reset(busyPoll)
			} else {
				t.Reset(idlePoll)
			}
		}
	}
}

// adjust sets the percent from what the last cycle marked, if a cycle has
// ended since it last looked or force is set; it reports whether one had.
func (f *Floor) adjust(force bool) bool {
	metrics.Read(f.samples[:])
	cycles := uint64Of(f.samples[0])
	if cycles == f.cycles && !force {
		return false
	}
	f.cycles = cycles
	p := percent(f.floor, uint64Of(f.samples[1]), uint64Of(f.samples[2])+uint64Of(f.samples[3]), f.base)
	if int64(p) != f.set.Load() {
		debug.SetGCPercent(p)
		f.set.Store(int64(p))
	}
	return true
}

// percent is the GOGC percent whose goal is floor, for a live heap and
// the stacks and globals the cycle scanned, if that is above base; else
// base. The runtime's goal is live + (live + roots) × percent / 100.
func percent(floor, live, roots uint64, base int) int {
	if floor <= live {
		return base
	}
	want := float64(floor-live) / float64(max(live+roots, minHeap)) * 100
	if want <= float64(base) {
		return base
	}
	return int(math.Min(want, maxPercent))
}

// uint64Of is s's value, or 0 for a metric this runtime does not have.
func uint64Of(s metrics.Sample) uint64 {
	if s.Value.Kind() == metrics.KindUint64 {
		return s.Value.Uint64()
	}
	return 0
}

// Percent is the GOGC percent f last set.
func (f *Floor) Percent() int { return int(f.set.Load()) }

// Stop ends the floor, waits for its watcher, and puts back the percent
// the process had. It may be called on a nil Floor, and more than once.
func (f *Floor) Stop() {
	if f == nil {
		return
	}
	f.stopOnce.Do(func() { close(f.stop) })
	<-f.done
	debug.SetGCPercent(f.base)
	f.set.Store(int64(f.base))
}
