// Package metrics is mcpx's Prometheus metrics: an [observe.Observer] for
// requests and upstream calls, counters of the bytes clients send and
// receive, and gauges read when scraped (upstream states, sessions,
// streams, parked calls, tasks). It has a registry of its own, never the
// global one, served by [Metrics.Handler] (the admin listener's /metrics).
//
// Labels stay bounded: a method is one of the generated method table's
// (else "other"), a revision one mcpx serves, a namespace or upstream
// one the config names (else "other"), an outcome "ok", "cancelled",
// "timeout", "error" or a JSON-RPC code mcpx itself sends (else "other").
// No tool names, no ids. The hot path finds its counter and histogram in a
// copy-on-write map keyed by the label tuple's indexes: an atomic load and
// a map read, no lock and no allocation once a tuple has been seen.
package metrics

import (
	"context"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/mcpx-dev/mcpx/generated/mcp"
	"github.com/mcpx-dev/mcpx/runtime/edge"
	"github.com/mcpx-dev/mcpx/runtime/jsonrpc"
	"github.com/mcpx-dev/mcpx/runtime/observe"
)

// Other is the label of a value outside a label's bounded set.
const Other = "other"

// MaxNamespaces bounds the namespace and upstream labels: a config names
// at most 256 servers; names beyond are "other".
const MaxNamespaces = 256

// Buckets are the latency histograms' bounds, in seconds: from a cached
// list (well under a millisecond) to a long tool call.
var Buckets = []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60}

// Metrics is the registry and what feeds it. Make it with [New].
type Metrics struct {
	observe.Nop
	reg *prometheus.Registry

	requests    *prometheus.CounterVec
	latency     *prometheus.HistogramVec
	inFlight    prometheus.Gauge
	calls       *prometheus.CounterVec
	callLatency *prometheus.HistogramVec
	bytesIn     prometheus.Counter // Streamable HTTP; mcpx stdio has no admin listener
	bytesOut    prometheus.Counter

	methods  map[string]uint64 // method -> index+1; 0 is Other
	methodOf []string
	revs     map[string]uint64 // revision -> index+1; 0 is none ("")
	revOf    []string
	// The namespace labels, replaced whole by AddNamespaces (a reload):
	// the hot path reads them without a lock, and an index once given
	// keeps its name, so the children cached by index stay right.
	ns atomic.Pointer[namespaces]

	reqs    cache[reqChild]
	upcalls cache[callChild]

	sources sources
}

type reqChild struct {
	count prometheus.Counter
	took  prometheus.Observer
}

type callChild = reqChild

// HTTP is the transport whose bytes are counted.
const HTTP = "http"

// New returns metrics for a gateway of the namespaces named (the config's
// servers, in order; the first MaxNamespaces count).
func New(names []string) *Metrics {
	m := &Metrics{reg: prometheus.NewRegistry()}
	m.reg.MustRegister(prometheus.NewGoCollector(), prometheus.NewProcessCollector(prometheus.ProcessCollectorOpts{}))

	m.methods, m.methodOf = map[string]uint64{}, []string{Other}
	for _, cm := range mcp.ClientMethods {
		if _, dup := m.methods[cm.Name]; !dup {
			m.methodOf = append(m.methodOf, cm.Name)
			m.methods[cm.Name] = uint64(len(m.methodOf) - 1)
		}
	}
	if _, ok := m.methods[mcp.MethodInitialize]; !ok {
		m.methodOf = append(m.methodOf, mcp.MethodInitialize)
		m.methods[mcp.MethodInitialize] = uint64(len(m.methodOf) - 1)
	}
	m.revs, m.revOf = map[string]uint64{}, []string{""}
	for _, r := range edge.RevisionLabels() {
		m.revOf = append(m.revOf, r)
		m.revs[r] = uint64(len(m.revOf) - 1)
	}
	m.ns.Store((&namespaces{index: map[string]uint64{}, names: []string{"", Other}}).with(names))

	m.requests = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "mcpx_requests_total",
		Help: "Client requests answered, by method, the client's revision, the namespace routed to (\"\" for none) and outcome (ok, cancelled, or the JSON-RPC error code).",
	}, []string{"method", "revision", "namespace", "outcome"})
	m.latency = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "mcpx_request_duration_seconds",
		Help:    "How long client requests took to answer, by method and namespace.",
		Buckets: Buckets,
	}, []string{"method", "namespace"})
	m.inFlight = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "mcpx_requests_in_flight",
		Help: "Client requests being served now.",
	})
	m.calls = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "mcpx_upstream_calls_total",
		Help: "Calls to upstreams, by upstream, its revision and outcome (ok, cancelled, timeout, error, or the JSON-RPC error code it answered).",
	}, []string{"upstream", "revision", "outcome"})
	m.callLatency = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "mcpx_upstream_call_duration_seconds",
		Help:    "How long calls to upstreams took, by upstream.",
		Buckets: Buckets,
	}, []string{"upstream"})
	bytes := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "mcpx_client_bytes_total",
		Help: "Bytes read from clients (direction in: request bodies) and written to them (out: response bodies and SSE streams), by transport.",
	}, []string{"transport", "direction"})
	m.bytesIn, m.bytesOut = bytes.WithLabelValues(HTTP, "in"), bytes.WithLabelValues(HTTP, "out")
	m.reg.MustRegister(m.requests, m.latency, m.inFlight, m.calls, m.callLatency, bytes)
	m.sources.register(m.reg)
	return m
}

// Registry is the metrics' own registry.
func (m *Metrics) Registry() *prometheus.Registry { return m.reg }

// Handler serves the registry in the Prometheus exposition formats.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{Registry: m.reg})
}

func (m *Metrics) method(name string) uint64 { return m.methods[name] }

func (m *Metrics) revision(r string) uint64 {
	if i, ok := m.revs[r]; ok {
		return i
	}
	return 0
}

// namespaces are the namespace and upstream labels: index 0 is none (""),
// 1 is Other, then the names in the order they were first named.
type namespaces struct {
	index map[string]uint64
	names []string
}

// with returns the labels with the names not yet among them added, while
// there is room (MaxNamespaces); n itself is not changed.
func (n *namespaces) with(names []string) *namespaces {
	next := &namespaces{index: maps.Clone(n.index), names: slices.Clip(n.names)}
	for _, name := range names {
		if _, dup := next.index[name]; dup || len(next.names)-2 >= MaxNamespaces || name == "" {
			continue
		}
		next.names = append(next.names, name)
		next.index[name] = uint64(len(next.names) - 1)
	}
	return next
}

// AddNamespaces lets the namespaces named be labels of their own from now
// on (a reload's new servers; until then they count as "other"). Labels
// are never taken away: a removed server's series keep its name.
func (m *Metrics) AddNamespaces(names []string) {
	for {
		cur := m.ns.Load()
		if m.ns.CompareAndSwap(cur, cur.with(names)) {
			return
		}
	}
}

func (m *Metrics) namespace(n string) uint64 {
	if n == "" {
		return 0
	}
	if i, ok := m.ns.Load().index[n]; ok {
		return i
	}
	return 1
}

func (m *Metrics) namespaceName(i uint64) string { return m.ns.Load().names[i] }

// outcomes are the outcome labels: index 0 to 3 for observe's OK,
// Cancelled, Timeout and Failed, then mcpx's own codes, then Other.
var outcomes, outcomeOf = func() (map[int64]uint64, []string) {
	idx := map[int64]uint64{observe.OK: 0, observe.Cancelled: 1, observe.Timeout: 2, observe.Failed: 3}
	names := []string{"ok", "cancelled", "timeout", "error"}
	for _, c := range jsonrpc.Codes {
		idx[c] = uint64(len(names))
		names = append(names, strconv.FormatInt(c, 10))
	}
	return idx, append(names, Other)
}()

func outcome(code int64) uint64 {
	if i, ok := outcomes[code]; ok {
		return i
	}
	return uint64(len(outcomeOf) - 1)
}

// RequestStart counts the request in flight.
func (m *Metrics) RequestStart(ctx context.Context, _ *observe.Request) context.Context {
	m.inFlight.Inc()
	return ctx
}

// RequestEnd counts the request by its labels and observes its latency.
func (m *Metrics) RequestEnd(_ context.Context, r *observe.Request) {
	took := time.Since(r.Start).Seconds()
	m.inFlight.Dec()
	meth, rev, ns, out := m.method(r.Method), m.revision(r.Revision), m.namespace(r.Namespace), outcome(r.Code)
	c := m.reqs.get(meth<<48|rev<<40|ns<<16|out, func() reqChild {
		return reqChild{
			count: m.requests.WithLabelValues(m.methodOf[meth], m.revOf[rev], m.namespaceName(ns), outcomeOf[out]),
			took:  m.latency.WithLabelValues(m.methodOf[meth], m.namespaceName(ns)),
		}
	})
	c.count.Inc()
	c.took.Observe(took)
}

// CallEnd counts the upstream call and observes its latency.
func (m *Metrics) CallEnd(_ context.Context, c *observe.Call) {
	took := time.Since(c.Start).Seconds()
	up, rev, out := m.namespace(c.Upstream), m.revision(c.Revision), outcome(c.Code)
	ch := m.upcalls.get(up<<40|rev<<32|out, func() callChild {
		return callChild{
			count: m.calls.WithLabelValues(m.namespaceName(up), m.revOf[rev], outcomeOf[out]),
			took:  m.callLatency.WithLabelValues(m.namespaceName(up)),
		}
	})
	ch.count.Inc()
	ch.took.Observe(took)
}

// maxCached bounds a cache: past it, a new tuple's children are looked up
// in the vector each time (correct, only slower) rather than copied in.
const maxCached = 4096

// cache is a copy-on-write map: reads take no lock; a new key copies the
// map under mu. Keys are bounded label tuples, so writes are rare.
type cache[V any] struct {
	m  atomic.Pointer[map[uint64]V]
	mu sync.Mutex
}

func (c *cache[V]) get(k uint64, mk func() V) V {
	if p := c.m.Load(); p != nil {
		if v, ok := (*p)[k]; ok {
			return v
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	old := map[uint64]V{}
	if p := c.m.Load(); p != nil {
		old = *p
	}
	if v, ok := old[k]; ok {
		return v
	}
	v := mk()
	if len(old) >= maxCached {
		return v
	}
	n := make(map[uint64]V, len(old)+1)
	for k, v := range old {
		n[k] = v
	}
	n[k] = v
	c.m.Store(&n)
	return v
}

var _ observe.Observer = (*Metrics)(nil)
