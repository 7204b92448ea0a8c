// Command gwtable reads the output of several runs of the issue-17
// benchmarks (`make bench-gateway`; each run starts with a line
// "=== run N") and prints the targets table: each ratio is taken within
// its run, then the median of the runs is shown with their range. With
// -ab base.txt new.txt it reads the two sides of an A/B instead
// (scripts/bench-ab, `make bench-ab`) and shows the figures both measured
// side by side.
package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// run is one run's figures: benchmark name (no -GOMAXPROCS suffix) ->
// unit -> value.
type run map[string]map[string]float64

// loads is the load average (1, 5, 15 min) as each run began.
var loads []string

var procsSuffix = regexp.MustCompile(`-\d+$`)

func parse(r io.Reader) []run {
	var runs []run
	s := bufio.NewScanner(r)
	s.Buffer(make([]byte, 1<<20), 1<<20)
	for s.Scan() {
		line := s.Text()
		if strings.HasPrefix(line, "=== run") {
			runs = append(runs, run{})
			if i := strings.Index(line, "("); i >= 0 {
				loads = append(loads, strings.TrimSuffix(strings.TrimSuffix(line[i+1:], ")"), " load"))
			}
			continue
		}
		if len(runs) == 0 {
			continue
		}
		f := strings.Fields(line)
		if len(f) < 4 || !strings.HasPrefix(f[0], "Benchmark") {
			continue
		}
		name := procsSuffix.ReplaceAllString(f[0], "")
		m := map[string]float64{}
		for i := 2; i+1 < len(f); i += 2 {
			if v, err := strconv.ParseFloat(f[i], 64); err == nil {
				m[f[i+1]] = v
			}
		}
		runs[len(runs)-1][name] = m
	}
	return runs
}

// figure is one row of the table: what it is, the figure before
// this work and its target, and how to compute it from one run.
type figure struct {
	name, unit, target string
	of                 func(run) (float64, bool)
}

func get(r run, name, unit string) (float64, bool) {
	v, ok := r[name][unit]
	return v, ok
}

func ratio(a, b, unit string) func(run) (float64, bool) {
	return func(r run) (float64, bool) {
		x, ok1 := get(r, a, unit)
		y, ok2 := get(r, b, unit)
		return x / y, ok1 && ok2 && y != 0
	}
}

func diff(a, b, unit string, scale float64) func(run) (float64, bool) {
	return func(r run) (float64, bool) {
		x, ok1 := get(r, a, unit)
		y, ok2 := get(r, b, unit)
		return (x - y) / scale, ok1 && ok2
	}
}

func value(a, unit string) func(run) (float64, bool) {
	return func(r run) (float64, bool) { return get(r, a, unit) }
}

const (
	gw    = "BenchmarkGateway/"
	large = "BenchmarkGatewayLarge/procs/mcpx/c1/"
	work  = "BenchmarkGatewayWorkLarge/mcpx/"
	res   = "BenchmarkGatewayResult/1MB/"
)

var figures = []figure{
	{"c=32 throughput through mcpx ÷ through the floor, mcpx upstream", "×", "≥ 0.85", ratio(gw+"procs/mcpx/c32/gateway", gw+"procs/mcpx/c32/floor", "req/s")},
	{"  (mcpx req/s, floor req/s, direct req/s)", "", "", nil},
	{"c=32 throughput through mcpx ÷ through the floor, Go SDK upstream", "×", "≥ 0.95", ratio(gw+"procs/gosdk/c32/gateway", gw+"procs/gosdk/c32/floor", "req/s")},
	{"mcpx process CPU per call ÷ floor process CPU per call, c=32, mcpx upstream", "×", "≤ 1.3", ratio(gw+"procs/mcpx/c32/gateway", gw+"procs/mcpx/c32/floor", "proxy-cpu-µs/op")},
	{"  mcpx process CPU per call, c=32, mcpx upstream", "µs", "", value(gw+"procs/mcpx/c32/gateway", "proxy-cpu-µs/op")},
	{"  floor process CPU per call, c=32, mcpx upstream", "µs", "", value(gw+"procs/mcpx/c32/floor", "proxy-cpu-µs/op")},
	{"  same ratio, Go SDK upstream", "×", "", ratio(gw+"procs/gosdk/c32/gateway", gw+"procs/gosdk/c32/floor", "proxy-cpu-µs/op")},
	{"  same ratio at one steady load (both paced to 0.5 × mcpx's c=32 rate), mcpx upstream", "×", "", ratio(gw+"procs/mcpx/c32/gateway-paced", gw+"procs/mcpx/c32/floor-paced", "proxy-cpu-µs/op")},
	{"    mcpx process CPU per call, paced", "µs", "", value(gw+"procs/mcpx/c32/gateway-paced", "proxy-cpu-µs/op")},
	{"    floor process CPU per call, paced", "µs", "", value(gw+"procs/mcpx/c32/floor-paced", "proxy-cpu-µs/op")},
	{"    paced req/s, mcpx ÷ floor (the pacing: about 1)", "×", "", ratio(gw+"procs/mcpx/c32/gateway-paced", gw+"procs/mcpx/c32/floor-paced", "req/s")},
	{"  same at one steady load, Go SDK upstream", "×", "", ratio(gw+"procs/gosdk/c32/gateway-paced", gw+"procs/gosdk/c32/floor-paced", "proxy-cpu-µs/op")},
	{"  same ratio at a high steady load (both paced to 0.85 × mcpx's c=32 rate), mcpx upstream", "×", "", ratio(gw+"procs/mcpx/c32/gateway-paced85", gw+"procs/mcpx/c32/floor-paced85", "proxy-cpu-µs/op")},
	{"    mcpx process CPU per call, paced at 0.85", "µs", "", value(gw+"procs/mcpx/c32/gateway-paced85", "proxy-cpu-µs/op")},
	{"    floor process CPU per call, paced at 0.85", "µs", "", value(gw+"procs/mcpx/c32/floor-paced85", "proxy-cpu-µs/op")},
	{"    paced req/s, mcpx ÷ floor (the pacing: about 1)", "×", "", ratio(gw+"procs/mcpx/c32/gateway-paced85", gw+"procs/mcpx/c32/floor-paced85", "req/s")},
	{"  same at a high steady load, Go SDK upstream", "×", "", ratio(gw+"procs/gosdk/c32/gateway-paced85", gw+"procs/gosdk/c32/floor-paced85", "proxy-cpu-µs/op")},
	{"added p50 at c=1 over direct, one process, mcpx upstream", "µs", "≤ 50", diff(gw+"oneproc/mcpx/c1/gateway", gw+"oneproc/mcpx/c1/direct", "p50-µs", 1)},
	{"  same through the floor (one byte-forwarding hop: the bound), mcpx upstream", "µs", "", diff(gw+"oneproc/mcpx/c1/floor", gw+"oneproc/mcpx/c1/direct", "p50-µs", 1)},
	{"  mcpx's p50 beyond the floor's (what MCP adds to the hop), mcpx upstream", "µs", "", diff(gw+"oneproc/mcpx/c1/gateway", gw+"oneproc/mcpx/c1/floor", "p50-µs", 1)},
	{"  added p50 at c=1 over direct, one process, Go SDK upstream", "µs", "", diff(gw+"oneproc/gosdk/c1/gateway", gw+"oneproc/gosdk/c1/direct", "p50-µs", 1)},
	{"  same through the floor, Go SDK upstream", "µs", "", diff(gw+"oneproc/gosdk/c1/floor", gw+"oneproc/gosdk/c1/direct", "p50-µs", 1)},
	{"64 kB arguments echoed back: MB/s through mcpx ÷ direct, procs, c=1", "×", "≥ 0.75", ratio(large+"gateway", large+"direct", "MB/s")},
	{"  MB/s through mcpx", "MB/s", "", value(large+"gateway", "MB/s")},
	{"  MB/s direct", "MB/s", "", value(large+"direct", "MB/s")},
	{"  same ratio through the floor (one byte-forwarding hop: the bound)", "×", "", ratio(large+"floor", large+"direct", "MB/s")},
	{"  mcpx process CPU per call ÷ floor process CPU per call, 64 kB", "×", "", ratio(large+"gateway", large+"floor", "proxy-cpu-µs/op")},
	{"  same ratio in memory (BenchmarkGatewayWorkLarge)", "×", "", ratio(work+"gateway", work+"direct", "MB/s")},
	{"1 MB result: bytes allocated by mcpx per call ÷ payload size (in memory)", "×", "≤ 3", diff(res+"gateway", res+"direct", "B/op", 1<<20)},
	{"  allocations by mcpx per call, 1 MB result", "allocs", "", diff(res+"gateway", res+"direct", "allocs/op", 1)},
	{"small call in memory: mcpx's allocations per call (BenchmarkGatewayWork, mcpx upstream)", "allocs", "", diff("BenchmarkGatewayWork/mcpx/gateway", "BenchmarkGatewayWork/mcpx/direct", "allocs/op", 1)},
	{"  mcpx's bytes per call", "B", "", diff("BenchmarkGatewayWork/mcpx/gateway", "BenchmarkGatewayWork/mcpx/direct", "B/op", 1)},
	{"  mcpx's time per call", "µs", "", diff("BenchmarkGatewayWork/mcpx/gateway", "BenchmarkGatewayWork/mcpx/direct", "ns/op", 1000)},
}

func format(v float64, unit string) string {
	switch {
	case unit == "×":
		return fmt.Sprintf("%.2f", v)
	case v >= 100 || v <= -100 || unit == "allocs" || unit == "B":
		return fmt.Sprintf("%.0f", v)
	default:
		return fmt.Sprintf("%.1f", v)
	}
}

func main() {
	if len(os.Args) == 4 && os.Args[1] == "-ab" {
		compare(os.Args[2], os.Args[3])
		return
	}
	if len(os.Args) != 1 {
		fmt.Fprintln(os.Stderr, "usage: gwtable < runs.txt, or gwtable -ab base.txt new.txt")
		os.Exit(2)
	}
	runs := parse(os.Stdin)
	fmt.Printf("%d runs; medians, range in parentheses; each ratio within its run\n", len(runs))
	fmt.Printf("load average as each run began: %s\n\n", strings.Join(loads, "; "))
	fmt.Println("| figure | measured (range) | target |")
	fmt.Println("|---|---:|---|")
	for _, f := range figures {
		if f.of == nil {
			fmt.Printf("| %s | %s | |\n", f.name, triple(runs))
			continue
		}
		v, ok := f.summary(runs)
		if !ok {
			v = "not measured"
		}
		fmt.Printf("| %s | %s | %s |\n", f.name, v, f.target)
	}
}

// compare prints the figures measured in both files, the runs of an A/B
// (scripts/bench-ab) side by side: each figure within each run, then the
// median of each side's runs with their range.
func compare(basePath, newPath string) {
	var sides [2][]run
	for i, path := range []string{basePath, newPath} {
		f, err := os.Open(path)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		sides[i] = parse(f)
		f.Close()
	}
	fmt.Printf("%d base runs, %d new runs; medians, range in parentheses; each ratio within its run\n\n", len(sides[0]), len(sides[1]))
	fmt.Println("| figure | base | new | target |")
	fmt.Println("|---|---:|---:|---|")
	for _, f := range figures {
		if f.of == nil {
			continue
		}
		b, ok1 := f.summary(sides[0])
		n, ok2 := f.summary(sides[1])
		if ok1 && ok2 {
			fmt.Printf("| %s | %s | %s | %s |\n", f.name, b, n, f.target)
		}
	}
}

// summary is the figure's median over the runs that measured it, with
// its range, formatted; false when no run did.
func (f figure) summary(runs []run) (string, bool) {
	var vs []float64
	for _, r := range runs {
		if v, ok := f.of(r); ok {
			vs = append(vs, v)
		}
	}
	if len(vs) == 0 {
		return "", false
	}
	slices.Sort(vs)
	med := vs[len(vs)/2]
	if len(vs)%2 == 0 {
		med = (vs[len(vs)/2-1] + vs[len(vs)/2]) / 2
	}
	u := " " + f.unit
	if f.unit == "×" {
		u = f.unit
	}
	return fmt.Sprintf("%s%s (%s–%s)", format(med, f.unit), u, format(vs[0], f.unit), format(vs[len(vs)-1], f.unit)), true
}

// triple is the medians of the c=32 req/s of the three paths, mcpx upstream.
func triple(runs []run) string {
	var out []string
	for _, p := range []string{"gateway", "floor", "direct"} {
		var vs []float64
		for _, r := range runs {
			if v, ok := get(r, gw+"procs/mcpx/c32/"+p, "req/s"); ok {
				vs = append(vs, v)
			}
		}
		if len(vs) == 0 {
			out = append(out, "-")
			continue
		}
		slices.Sort(vs)
		out = append(out, fmt.Sprintf("%.0f", vs[len(vs)/2]))
	}
	return strings.Join(out, " / ") + " req/s"
}
