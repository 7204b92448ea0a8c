package metrics

import (
	"io"
	"net/http"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"
)

// UpstreamStatus is one upstream's state as a scrape reads it.
type UpstreamStatus struct {
	Name     string
	State    string // one of States
	Restarts uint64
}

// sources are what the scraped gauges read: functions set once the
// gateway and the transport exist (nil reads as nothing), so that
// nothing on a request's path counts sessions, streams or states.
type sources struct {
	upstreams atomic.Pointer[func() []UpstreamStatus]
	states    atomic.Pointer[[]string]
	sessions  atomic.Pointer[func() int]
	streams   atomic.Pointer[func() int]
	parked    atomic.Pointer[func() int]
	tasks     atomic.Pointer[func() int]
}

func read(p *atomic.Pointer[func() int]) float64 {
	if f := p.Load(); f != nil {
		return float64((*f)())
	}
	return 0
}

func (s *sources) register(reg *prometheus.Registry) {
	gauge := func(name, help string, p *atomic.Pointer[func() int]) prometheus.Collector {
		return prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: name, Help: help}, func() float64 { return read(p) })
	}
	reg.MustRegister(
		gauge("mcpx_sessions", "Legacy client sessions held (Streamable HTTP).", &s.sessions),
		gauge("mcpx_streams", "SSE streams held open to clients: GET, subscriptions/listen and streamed POST responses.", &s.streams),
		gauge("mcpx_parked_calls", "Upstream calls parked while a 2026-07-28 client answers their question (input_required).", &s.parked),
		gauge("mcpx_tasks", "Tasks alive (the tasks extension).", &s.tasks),
		upstreamCollector{s},
	)
}

// WatchUpstreams sets where the upstream state and restart metrics are
// read from; states lists every state, each exported as 0 or 1.
func (m *Metrics) WatchUpstreams(states []string, f func() []UpstreamStatus) {
	m.sources.states.Store(&states)
	m.sources.upstreams.Store(&f)
}

// WatchSessions sets where the sessions and streams gauges are read from.
func (m *Metrics) WatchSessions(sessions, streams func() int) {
	m.sources.sessions.Store(&sessions)
	m.sources.streams.Store(&streams)
}

// WatchParked sets where the parked calls gauge is read from.
func (m *Metrics) WatchParked(f func() int) { m.sources.parked.Store(&f) }

// WatchTasks sets where the live tasks gauge is read from: the hook for
// the tasks extension's store (nothing sets it yet; it reads 0).
func (m *Metrics) WatchTasks(f func() int) { m.sources.tasks.Store(&f) }

var (
	stateDesc = prometheus.NewDesc("mcpx_upstream_state",
		"1 for the state each upstream is in (idle: not started yet; starting; up; backing_off: failed, waiting out its backoff; down: failed, restarted by the next call, or closed), 0 for the others.",
		[]string{"upstream", "state"}, nil)
	restartsDesc = prometheus.NewDesc("mcpx_upstream_restarts_total",
		"Starts of an upstream after its first: after a failed start or the end of its connection.",
		[]string{"upstream"}, nil)
)

// upstreamCollector reads the upstreams' states when scraped.
type upstreamCollector struct{ s *sources }

func (upstreamCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- stateDesc
	ch <- restartsDesc
}

func (c upstreamCollector) Collect(ch chan<- prometheus.Metric) {
	f, states := c.s.upstreams.Load(), c.s.states.Load()
	if f == nil || states == nil {
		return
	}
	for _, u := range (*f)() {
		for _, st := range *states {
			v := 0.0
			if st == u.State {
				v = 1
			}
			ch <- prometheus.MustNewConstMetric(stateDesc, prometheus.GaugeValue, v, u.Name, st)
		}
		ch <- prometheus.MustNewConstMetric(restartsDesc, prometheus.CounterValue, float64(u.Restarts), u.Name)
	}
}

// CountHTTP counts the bytes of h's request bodies read and responses
// written (headers aside).
func (m *Metrics) CountHTTP(h http.Handler) http.Handler {
	return countingHandler{h, m.bytesIn, m.bytesOut}
}

type countingHandler struct {
	h       http.Handler
	in, out prometheus.Counter
}

// counted is a request's body and writer, counting, in one allocation.
type counted struct {
	body countingBody
	w    countingWriter
}

func (c countingHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	cn := &counted{w: countingWriter{w, c.out}}
	if r.Body != nil && r.Body != http.NoBody {
		cn.body = countingBody{r.Body, c.in}
		r.Body = &cn.body
	}
	c.h.ServeHTTP(&cn.w, r)
}

// Close passes on to h (streamhttp's Handler ends its held streams).
func (c countingHandler) Close() {
	if cl, ok := c.h.(interface{ Close() }); ok {
		cl.Close()
	}
}

type countingBody struct {
	io.ReadCloser
	n prometheus.Counter
}

func (b *countingBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if n > 0 {
		b.n.Add(float64(n))
	}
	return n, err
}

type countingWriter struct {
	http.ResponseWriter
	n prometheus.Counter
}

func (w *countingWriter) Write(p []byte) (int, error) {
	n, err := w.ResponseWriter.Write(p)
	if n > 0 {
		w.n.Add(float64(n))
	}
	return n, err
}

// Unwrap lets http.ResponseController reach the connection (flushes,
// write deadlines of SSE streams).
func (w *countingWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// Flush is for writers that type-assert http.Flusher.
func (w *countingWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}
