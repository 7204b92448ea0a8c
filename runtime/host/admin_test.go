package host_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"

	"github.com/mcpx-dev/mcpx/generated/mcp"
	"github.com/mcpx-dev/mcpx/runtime/admin"
	"github.com/mcpx-dev/mcpx/runtime/config"
	"github.com/mcpx-dev/mcpx/runtime/host"
	"github.com/mcpx-dev/mcpx/runtime/metrics"
	"github.com/mcpx-dev/mcpx/testkit/wiretest"
)

// observed is a gateway of config text served over HTTP with metrics and
// an admin listener, as `mcpx serve --admin` has them.
type observed struct {
	m     *metrics.Metrics
	admin string // http://host:port of the admin listener
	mcp   string // the MCP endpoint's URL
	ups   []host.Upstream
	log   *wiretest.LockedBuffer
}

func serveObserved(t *testing.T, cfgText string) *observed {
	t.Helper()
	cfg, err := config.Parse("observed.json", []byte(cfgText), nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var names []string
	for _, s := range cfg.Servers {
		names = append(names, s.Name)
	}
	o := &observed{m: metrics.New(names), log: &wiretest.LockedBuffer{}}
	log := slog.New(slog.NewTextHandler(o.log, &slog.HandlerOptions{Level: slog.LevelInfo}))
	srv := admin.New(o.m.Handler())
	bound, _, err := admin.Serve(ctx, "127.0.0.1:0", srv)
	if err != nil {
		t.Fatal(err)
	}
	o.admin = "http://" + bound
	if code, body := get(t, o.admin+"/readyz"); code != http.StatusServiceUnavailable || !strings.Contains(body, "starting") {
		t.Errorf("/readyz before the gateway is built: %d %s; want 503, starting", code, body)
	}
	info := mcp.Implementation{Name: "mcpx", Version: "test"}
	g, ups, err := host.GatewayWith(ctx, cfg, info, log, host.GatewayOptions{Observer: o.m})
	if err != nil {
		t.Fatal(err)
	}
	o.ups = ups
	host.Watch(srv, o.m, g, func() []host.Upstream { return ups })
	urls, done := make(chan string, 1), make(chan error, 1)
	go func() {
		done <- host.HTTP(ctx, host.Config{NS: g, Info: info, Log: log, Metrics: o.m}, "127.0.0.1:0", func(u string) { urls <- u })
	}()
	t.Cleanup(func() {
		cancel()
		<-done
		g.Close()
	})
	select {
	case o.mcp = <-urls:
	case err := <-done:
		t.Fatalf("host.HTTP: %v", err)
	case <-time.After(10 * time.Second):
		t.Fatal("not serving within 10s")
	}
	return o
}

func get(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// post sends one JSON-RPC message; session and rev go in the headers when
// set. It returns the session id the answer names and the body.
func post(t *testing.T, url, session, rev, body string) (string, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if session != "" {
		req.Header.Set("Mcp-Session-Id", session)
	}
	if rev != "" {
		req.Header.Set("MCP-Protocol-Version", rev)
	}
	if rev == string(modern) { // the 2026-07-28 headers mirror the body
		var m struct {
			Method string
			Params struct{ Name string }
		}
		json.Unmarshal([]byte(body), &m)
		req.Header.Set("Mcp-Method", m.Method)
		if m.Params.Name != "" {
			req.Header.Set("Mcp-Name", m.Params.Name)
		}
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.Header.Get("Mcp-Session-Id"), string(b)
}

// value is the metric name with exactly labels (a subset of its labels
// for want), summed over matching series: a counter's or gauge's value, a
// histogram's count. found is false when no series matches.
func (o *observed) value(t *testing.T, name string, labels map[string]string) (v float64, found bool) {
	t.Helper()
	fams, err := o.m.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fams {
		if f.GetName() != name {
			continue
		}
	series:
		for _, s := range f.GetMetric() {
			have := map[string]string{}
			for _, l := range s.GetLabel() {
				have[l.GetName()] = l.GetValue()
			}
			for k, want := range labels {
				if have[k] != want {
					continue series
				}
			}
			found = true
			switch f.GetType() {
			case dto.MetricType_COUNTER:
				v += s.GetCounter().GetValue()
			case dto.MetricType_GAUGE:
				v += s.GetGauge().GetValue()
			case dto.MetricType_HISTOGRAM:
				v += float64(s.GetHistogram().GetSampleCount())
			}
		}
	}
	return v, found
}

func (o *observed) want(t *testing.T, name string, labels map[string]string, ok func(float64) bool, what string) {
	t.Helper()
	v, found := o.value(t, name, labels)
	if !found || !ok(v) {
		t.Errorf("%s%v = %v (found %v); want %s", name, labels, v, found, what)
	}
}

func eq(n float64) func(float64) bool { return func(v float64) bool { return v == n } }
func atLeast(n float64) func(float64) bool {
	return func(v float64) bool { return v >= n }
}

// eagerSelf is this test binary as an eager upstream.
func eagerSelf(t *testing.T) string {
	var m map[string]any
	if err := json.Unmarshal([]byte(self(t, nil)), &m); err != nil {
		t.Fatal(err)
	}
	m["mcpx"] = map[string]any{"start": "eager"}
	b, _ := json.Marshal(m)
	return string(b)
}

const modern = mcp.Rev20260728

func modernCall(id int, method, params string) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%q,"params":{%s"_meta":{"io.modelcontextprotocol/protocolVersion":%q,"io.modelcontextprotocol/clientCapabilities":{}}}}`,
		id, method, params, modern)
}

// TestMetricsAfterTraffic: every metric family, read from the registry
// /metrics serves, after real traffic through the gateway: a legacy
// session and a 2026-07-28 client, calls that succeed and fail, an SSE
// stream held, bytes both ways; the labels are the bounded ones (an
// unknown method is "other", a tool's name is in no label).
func TestMetricsAfterTraffic(t *testing.T) {
	o := serveObserved(t, `{"mcpServers": {"up": `+eagerSelf(t)+`, "lazy": `+self(t, nil)+`}}`)
	legacy := string(mcp.Rev20250618)
	sid, body := post(t, o.mcp, "", "", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"`+legacy+`","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	if sid == "" {
		t.Fatalf("initialize: no session: %s", body)
	}
	post(t, o.mcp, sid, legacy, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	const calls = 20
	for i := range calls {
		if _, body := post(t, o.mcp, sid, legacy, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"up__echo"}}`, 10+i)); !strings.Contains(body, `"echo"`) {
			t.Fatalf("tools/call up__echo: %s", body)
		}
	}
	post(t, o.mcp, sid, legacy, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
	post(t, o.mcp, sid, legacy, `{"jsonrpc":"2.0","id":3,"method":"no/such/method"}`)
	if _, body := post(t, o.mcp, "", string(modern), modernCall(4, "tools/call", `"name":"up__echo",`)); !strings.Contains(body, `"echo"`) {
		t.Fatalf("a 2026-07-28 tools/call: %s", body)
	}

	// A GET stream held on the session: the streams gauge counts it.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, o.mcp, nil)
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Mcp-Session-Id", sid)
	req.Header.Set("MCP-Protocol-Version", legacy)
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET stream: %v %v", err, resp)
	}
	defer resp.Body.Close()

	call := map[string]string{"method": "tools/call", "namespace": "up"}
	o.want(t, "mcpx_requests_total", map[string]string{"method": "tools/call", "revision": legacy, "namespace": "up", "outcome": "ok"}, eq(calls), fmt.Sprint(calls))
	o.want(t, "mcpx_requests_total", map[string]string{"method": "tools/call", "revision": string(modern), "namespace": "up", "outcome": "ok"}, eq(1), "1")
	o.want(t, "mcpx_requests_total", map[string]string{"method": "initialize", "revision": legacy, "namespace": "", "outcome": "ok"}, eq(1), "1")
	o.want(t, "mcpx_requests_total", map[string]string{"method": "tools/list", "namespace": "", "outcome": "ok"}, eq(1), "1")
	o.want(t, "mcpx_requests_total", map[string]string{"method": "other", "outcome": "-32601"}, eq(1), "1 (an unknown method is other)")
	o.want(t, "mcpx_request_duration_seconds", call, eq(calls+1), fmt.Sprint(calls+1, " observations"))
	o.want(t, "mcpx_requests_in_flight", nil, eq(0), "0 once answered")
	o.want(t, "mcpx_upstream_calls_total", map[string]string{"upstream": "up", "outcome": "ok"}, atLeast(calls+1), fmt.Sprint(">= ", calls+1, " (the calls, and the lists)"))
	o.want(t, "mcpx_upstream_call_duration_seconds", map[string]string{"upstream": "up"}, atLeast(calls+1), fmt.Sprint(">= ", calls+1))
	o.want(t, "mcpx_upstream_state", map[string]string{"upstream": "up", "state": "up"}, eq(1), "1")
	o.want(t, "mcpx_upstream_state", map[string]string{"upstream": "up"}, eq(1), "1 summed over the states: one state at a time")
	o.want(t, "mcpx_upstream_state", map[string]string{"upstream": "lazy", "state": "up"}, eq(1), "1: started by the client's first contact")
	o.want(t, "mcpx_upstream_restarts_total", map[string]string{"upstream": "up"}, eq(0), "0")
	o.want(t, "mcpx_sessions", nil, eq(1), "1")
	o.want(t, "mcpx_streams", nil, eq(1), "1 (the GET stream)")
	o.want(t, "mcpx_parked_calls", nil, eq(0), "0")
	o.want(t, "mcpx_tasks", nil, eq(0), "0 (nothing feeds it yet)")
	o.want(t, "mcpx_client_bytes_total", map[string]string{"transport": "http", "direction": "in"}, atLeast(float64(calls*50)), "the request bodies")
	o.want(t, "mcpx_client_bytes_total", map[string]string{"transport": "http", "direction": "out"}, atLeast(float64(calls*50)), "the responses")

	// No label carries a tool's name or an id.
	_, text := get(t, o.admin+"/metrics")
	for _, leak := range []string{"up__echo", `"echo"`, sid} {
		if strings.Contains(text, leak) {
			t.Errorf("/metrics names %q", leak)
		}
	}
	if !strings.Contains(text, "mcpx_requests_total{") {
		t.Errorf("/metrics does not serve the registry:\n%s", text)
	}
}

// TestReadinessFollowsAnEagerUpstream: /readyz is 200 while the eager
// upstream is up, 503 naming it and why once its process died, and 200
// again when the gateway has restarted it (its backoff, 1 s at first);
// the restart is counted and the state metric follows.
func TestReadinessFollowsAnEagerUpstream(t *testing.T) {
	o := serveObserved(t, `{"mcpServers": {"crashy": `+eagerSelf(t)+`, "lazy": `+self(t, nil)+`}}`)
	ready := func() (int, admin.Readiness) {
		t.Helper()
		code, body := get(t, o.admin+"/readyz")
		var rd admin.Readiness
		if err := json.Unmarshal([]byte(body), &rd); err != nil {
			t.Fatalf("/readyz: %v: %s", err, body)
		}
		return code, rd
	}
	if code, rd := ready(); code != http.StatusOK || !rd.Ready || rd.Upstreams["crashy"].State != "up" {
		t.Fatalf("/readyz with the eager upstream up: %d %+v", code, rd)
	}
	if _, ok := o.value(t, "mcpx_upstream_state", map[string]string{"upstream": "lazy", "state": "idle"}); !ok {
		t.Errorf("the lazy upstream has no state before any client")
	}
	post(t, o.mcp, "", string(modern), modernCall(1, "tools/call", `"name":"crashy__crash",`))
	await := func(what string, ok func(int, admin.Readiness) bool) admin.Readiness {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for {
			code, rd := ready()
			if ok(code, rd) {
				return rd
			}
			if time.Now().After(deadline) {
				t.Fatalf("/readyz never %s: %d %+v", what, code, rd)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	rd := await("said the upstream is down", func(code int, rd admin.Readiness) bool {
		return code == http.StatusServiceUnavailable && !rd.Ready && rd.Upstreams["crashy"].State != "up"
	})
	if u := rd.Upstreams["crashy"]; !strings.Contains(u.Reason, "exit status 3") {
		t.Errorf("/readyz down: %+v; want the reason, exit status 3", u)
	}
	if _, ok := rd.Upstreams["lazy"]; ok {
		t.Errorf("/readyz names the lazy upstream: %+v", rd)
	}
	o.want(t, "mcpx_upstream_state", map[string]string{"upstream": "crashy", "state": "up"}, eq(0), "0 while it is down")
	o.want(t, "mcpx_upstream_calls_total", map[string]string{"upstream": "crashy", "outcome": "error"}, eq(1), "1: the call its process died in")
	await("said it is up again", func(code int, rd admin.Readiness) bool {
		return code == http.StatusOK && rd.Ready && rd.Upstreams["crashy"].State == "up"
	})
	o.want(t, "mcpx_upstream_restarts_total", map[string]string{"upstream": "crashy"}, eq(1), "1")
	o.want(t, "mcpx_upstream_state", map[string]string{"upstream": "crashy", "state": "up"}, eq(1), "1 once restarted")
}

// TestSuccessfulCallsLogNothing: at the default level (info) a burst of
// successful calls adds no line to mcpx's log: one line per upstream
// event, none per call.
func TestSuccessfulCallsLogNothing(t *testing.T) {
	o := serveObserved(t, `{"mcpServers": {"up": `+eagerSelf(t)+`}}`)
	// The first contact's lines (the upstream connected) come first.
	post(t, o.mcp, "", string(modern), modernCall(1, "tools/list", ""))
	before := o.log.String()
	if !strings.Contains(before, "upstream connected") {
		t.Fatalf("the upstream's start was not logged: %q", before)
	}
	var failed atomic.Int32
	done := make(chan struct{})
	for w := range 4 {
		go func() {
			defer func() { done <- struct{}{} }()
			for i := range 50 {
				if _, body := post(t, o.mcp, "", string(modern), modernCall(100*w+i, "tools/call", `"name":"up__echo",`)); !strings.Contains(body, `"echo"`) {
					failed.Add(1)
				}
			}
		}()
	}
	for range 4 {
		<-done
	}
	if failed.Load() > 0 {
		t.Fatalf("%d calls failed", failed.Load())
	}
	o.want(t, "mcpx_requests_total", map[string]string{"method": "tools/call", "outcome": "ok"}, eq(200), "200")
	if after := o.log.String(); after != before {
		t.Errorf("200 successful calls logged at info:\n%s", strings.TrimPrefix(after, before))
	}
}
