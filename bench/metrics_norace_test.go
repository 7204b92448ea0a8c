//go:build !race

package bench

import "testing"

// Without the race detector only: under it sync.Pool drops items at
// random, and the counts move by a few between runs.

// TestMetricsAllocations pins what observing a call costs in allocations
// through the whole gateway: at most 3 more per tools/call than without
// metrics (the request's context carrying its observe.Request, the
// upstream call's observe.Call, the counting body and writer).
func TestMetricsAllocations(t *testing.T) {
	if testing.Short() {
		t.Skip("allocation counts")
	}
	u := gatewayUpstreams[0]
	allocs := map[bool]float64{}
	for _, on := range []bool{false, true} {
		rt, _ := metricsPath(t, u, on)
		s := connectVia(t, "http://127.0.0.1/mcp", u.rev, rt)
		id := int64(0)
		allocs[on] = testing.AllocsPerRun(300, func() {
			id++
			if err := callEcho(s, "up__echo", id); err != nil {
				t.Fatal(err)
			}
		})
	}
	if d := allocs[true] - allocs[false]; d > 3 {
		t.Errorf("metrics on: %v allocations per call, off: %v; want at most 3 more", allocs[true], allocs[false])
	}
	t.Logf("allocations per call: off %v, on %v", allocs[false], allocs[true])
}
