package main

import (
	"strings"
	"testing"
)

// TestSummary checks that a figure is taken within each run and its
// median and range over the runs, for an odd and an even count of runs.
func TestSummary(t *testing.T) {
	const out = `=== run 1 (0.5 0.4 0.3 load)
BenchmarkGateway/procs/mcpx/c32/floor-2   100  1 ns/op  1000 req/s
BenchmarkGateway/procs/mcpx/c32/gateway-2 100  1 ns/op   800 req/s
=== run 2 (0.5 0.4 0.3 load)
BenchmarkGateway/procs/mcpx/c32/floor-2   100  1 ns/op  1000 req/s
BenchmarkGateway/procs/mcpx/c32/gateway-2 100  1 ns/op   900 req/s
=== run 3 (0.5 0.4 0.3 load)
BenchmarkGateway/procs/mcpx/c32/floor-2   100  1 ns/op  2000 req/s
BenchmarkGateway/procs/mcpx/c32/gateway-2 100  1 ns/op  1400 req/s
`
	f := figures[0] // c=32 throughput through mcpx ÷ through the floor
	runs := parse(strings.NewReader(out))
	for _, c := range []struct {
		runs []run
		want string
	}{
		{runs, "0.80× (0.70–0.90)"},
		{runs[:2], "0.85× (0.80–0.90)"},
	} {
		got, ok := f.summary(c.runs)
		if !ok || got != c.want {
			t.Errorf("%d runs: got %q, %v; want %q", len(c.runs), got, ok, c.want)
		}
	}
	if _, ok := f.summary(nil); ok {
		t.Error("no runs: measured")
	}
}
