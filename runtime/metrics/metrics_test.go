package metrics

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/mcpx-dev/mcpx/generated/mcp"
	"github.com/mcpx-dev/mcpx/runtime/jsonrpc"
	"github.com/mcpx-dev/mcpx/runtime/observe"
)

// TestLabelsAreBounded: a method outside the generated table, a namespace
// the config does not name, a revision mcpx does not serve and an error
// code mcpx does not send each become one bounded value, however many
// distinct ones arrive.
func TestLabelsAreBounded(t *testing.T) {
	m := New([]string{"a", "b"})
	ctx := context.Background()
	for i := range 1000 {
		r := &observe.Request{Method: "x/" + strings.Repeat("y", i%50), Revision: "1999-01-01", Namespace: "n" + string(rune('a'+i%26)), Code: int64(-1 - i), Start: time.Now()}
		m.RequestEnd(ctx, r)
		m.CallEnd(ctx, &observe.Call{Upstream: "zz" + string(rune('a'+i%26)), Revision: "?", Code: int64(i), Start: time.Now()})
	}
	if got := testutil.ToFloat64(m.requests.WithLabelValues(Other, "", Other, Other)); got != 1000 {
		t.Errorf("unknown method, revision, namespace, code: %v requests under other; want 1000", got)
	}
	if n := testutil.CollectAndCount(m.requests); n != 1 {
		t.Errorf("%d request series; want 1", n)
	}
	if n := testutil.CollectAndCount(m.calls); n != 1 {
		t.Errorf("%d upstream call series; want 1", n)
	}
	// The known ones keep their names.
	m.RequestEnd(ctx, &observe.Request{Method: mcp.MethodToolsCall, Revision: string(mcp.Rev20250618), Namespace: "a", Code: jsonrpc.InvalidParams, Start: time.Now()})
	m.RequestEnd(ctx, &observe.Request{Method: mcp.MethodToolsCall, Revision: string(mcp.Rev20250618), Namespace: "a", Code: observe.OK, Start: time.Now()})
	m.RequestEnd(ctx, &observe.Request{Method: mcp.MethodToolsCall, Revision: string(mcp.Rev20250618), Namespace: "a", Code: observe.Cancelled, Start: time.Now()})
	for _, out := range []string{"-32602", "ok", "cancelled"} {
		if got := testutil.ToFloat64(m.requests.WithLabelValues(mcp.MethodToolsCall, string(mcp.Rev20250618), "a", out)); got != 1 {
			t.Errorf("outcome %s: %v; want 1", out, got)
		}
	}
	if got := testutil.ToFloat64(m.calls.WithLabelValues(Other, "", "ok")); got != 0 {
		t.Errorf("code 0 from an upstream counted ok: %v", got)
	}
}

// TestMaxNamespaces: past MaxNamespaces configured names, the rest share
// other.
func TestMaxNamespaces(t *testing.T) {
	var names []string
	for i := range MaxNamespaces + 10 {
		names = append(names, "ns"+strings.Repeat("x", i))
	}
	m := New(names)
	if got := len(m.ns.Load().names) - 2; got != MaxNamespaces {
		t.Errorf("%d namespace labels; want %d", got, MaxNamespaces)
	}
	if m.namespace(names[len(names)-1]) != 1 {
		t.Errorf("a namespace past the cap is not other")
	}
}

// TestAddNamespaces: a namespace a reload adds counts under its own name
// from then on (before, as other); the names there were keep their
// series, and a name added twice is one label.
func TestAddNamespaces(t *testing.T) {
	m := New([]string{"a"})
	ctx := context.Background()
	req := func(ns string) {
		m.RequestEnd(ctx, &observe.Request{Method: mcp.MethodToolsCall, Revision: string(mcp.Rev20250618), Namespace: ns, Code: observe.OK, Start: time.Now()})
	}
	count := func(ns string) float64 {
		return testutil.ToFloat64(m.requests.WithLabelValues(mcp.MethodToolsCall, string(mcp.Rev20250618), ns, "ok"))
	}
	req("a")
	req("b")
	if count("b") != 0 || count(Other) != 1 {
		t.Fatalf("before the reload b counted %v, other %v; want 0 and 1", count("b"), count(Other))
	}
	m.AddNamespaces([]string{"a", "b", "b"})
	req("a")
	req("b")
	if count("a") != 2 || count("b") != 1 || count(Other) != 1 {
		t.Errorf("after the reload a %v, b %v, other %v; want 2, 1, 1", count("a"), count("b"), count(Other))
	}
	if got := len(m.ns.Load().names); got != 4 {
		t.Errorf("%d labels (none, other, a, b); want 4", got)
	}
}

// TestObserveAllocatesNothing: once a label tuple has been seen, counting
// a request and an upstream call allocates nothing (the children are
// cached; no label strings are built).
func TestObserveAllocatesNothing(t *testing.T) {
	m := New([]string{"a"})
	ctx := context.Background()
	r := &observe.Request{Method: mcp.MethodToolsCall, Revision: string(mcp.Rev20260728), Namespace: "a", Code: observe.OK, Start: time.Now()}
	c := &observe.Call{Upstream: "a", Method: mcp.MethodToolsCall, Revision: string(mcp.Rev20260728), Code: observe.OK, Start: time.Now()}
	m.RequestEnd(ctx, r)
	m.CallEnd(ctx, c)
	if n := testing.AllocsPerRun(1000, func() {
		m.RequestStart(ctx, r)
		m.RequestEnd(ctx, r)
		m.CallStart(ctx, c)
		m.CallEnd(ctx, c)
	}); n != 0 {
		t.Errorf("%v allocations per request and call; want 0", n)
	}
}

// TestScrapedSources: the gauges read what the Watch functions return,
// when scraped; before, 0.
func TestScrapedSources(t *testing.T) {
	m := New(nil)
	gauge := func(name string) float64 {
		t.Helper()
		fams, err := m.Registry().Gather()
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range fams {
			if f.GetName() == name {
				return f.GetMetric()[0].GetGauge().GetValue()
			}
		}
		t.Fatalf("no %s", name)
		return 0
	}
	if gauge("mcpx_tasks") != 0 {
		t.Errorf("tasks before WatchTasks: want 0")
	}
	n := 3
	m.WatchTasks(func() int { return n })
	m.WatchParked(func() int { return 2 * n })
	m.WatchSessions(func() int { return 5 }, func() int { return 7 })
	n = 4
	for name, want := range map[string]float64{"mcpx_tasks": 4, "mcpx_parked_calls": 8, "mcpx_sessions": 5, "mcpx_streams": 7} {
		if got := gauge(name); got != want {
			t.Errorf("%s = %v; want %v", name, got, want)
		}
	}
}

// BenchmarkRequestEnd is the cost of counting one request.
func BenchmarkRequestEnd(b *testing.B) {
	m := New([]string{"a"})
	ctx := context.Background()
	r := &observe.Request{Method: mcp.MethodToolsCall, Revision: string(mcp.Rev20260728), Namespace: "a", Code: observe.OK, Start: time.Now()}
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			m.RequestStart(ctx, r)
			m.RequestEnd(ctx, r)
		}
	})
}
