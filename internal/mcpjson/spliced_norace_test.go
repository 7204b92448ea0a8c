//go:build !race

package mcpjson

import (
	"runtime"
	"strings"
	"testing"
)

// TestSplicedAllocations: a 64 kB text (with escapes) is copied into the
// pooled buffer and nowhere else: besides it, 3 allocations and under
// 1 kB a call (MarshalPooled has 2; the third is the splicer's record). Not under
// -race, which empties the pools.
func TestSplicedAllocations(t *testing.T) {
	v := splicedValue(`{"text":"` + strings.Repeat("x", 64<<10) + `"}`)
	run := func() {
		b, n, err := marshalSpliced(v)
		if err != nil || n != 1 {
			t.Fatalf("%d spliced, %v", n, err)
		}
		b.Free()
	}
	if n := testing.AllocsPerRun(100, run); n > 3 {
		t.Errorf("%v allocations, want at most 3", n)
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	const runs = 100
	for range runs {
		run()
	}
	runtime.ReadMemStats(&after)
	if per := (after.TotalAlloc - before.TotalAlloc) / runs; per > 1024 {
		t.Errorf("%d bytes a call, want under 1 kB", per)
	}
}
