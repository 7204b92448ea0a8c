//go:build !race

package mcpjson

import (
	"runtime"
	"strings"
	"testing"
)

// TestRawSplicedAllocations: MarshalLong of 64 kB canonical arguments
// allocates its result and little else: 4 allocations (Marshal has 3: it
// compacts the arguments into its encoder's buffer instead) and under
// 1 kB a call besides the result's pages. Not under -race, which empties the pools.
func TestRawSplicedAllocations(t *testing.T) {
	v := rawValue([]byte(`{"text":"` + strings.Repeat("x", 64<<10) + `","n":1}`))
	out, err := MarshalLong(v)
	if err != nil {
		t.Fatal(err)
	}
	run := func() {
		if _, err := MarshalLong(v); err != nil {
			t.Fatal(err)
		}
	}
	if n := testing.AllocsPerRun(100, run); n > 4 {
		t.Errorf("%v allocations, want at most 4", n)
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	const runs = 100
	for range runs {
		run()
	}
	runtime.ReadMemStats(&after)
	limit := uint64(cap(out)+8191)/8192*8192 + 1024 // the result is a large object: whole 8 kB pages
	if per := (after.TotalAlloc - before.TotalAlloc) / runs; per > limit {
		t.Errorf("%d bytes a call, want under %d", per, limit)
	}
}
