package tracing_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/mcpx-dev/mcpx/generated/mcp"
	"github.com/mcpx-dev/mcpx/runtime/config"
	"github.com/mcpx-dev/mcpx/runtime/edge"
	"github.com/mcpx-dev/mcpx/runtime/fixture"
	"github.com/mcpx-dev/mcpx/runtime/host"
	"github.com/mcpx-dev/mcpx/runtime/server"
	"github.com/mcpx-dev/mcpx/runtime/tracing"
	"github.com/mcpx-dev/mcpx/runtime/transport/streamhttp"
	"github.com/mcpx-dev/mcpx/testkit/closedworld"
	"github.com/mcpx-dev/mcpx/testkit/wiretest"
)

// An upstream call as the test upstream received it.
type received struct {
	header   string // the traceparent header
	meta     string // params._meta.traceparent
	metaSt   string // params._meta.tracestate
	rev      string // its MCP-Protocol-Version header
	body     []byte
	hasState bool
}

// recorder keeps the tools/call requests an upstream receives.
type recorder struct {
	mu    sync.Mutex
	calls []received
}

func (rc *recorder) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		var m struct {
			Method string `json:"method"`
			Params struct {
				Meta map[string]json.RawMessage `json:"_meta"`
			} `json:"params"`
		}
		if json.Unmarshal(body, &m) == nil && m.Method == mcp.MethodToolsCall {
			got := received{header: r.Header.Get("traceparent"), rev: r.Header.Get("MCP-Protocol-Version"), body: body}
			json.Unmarshal(m.Params.Meta["traceparent"], &got.meta)
			if raw, ok := m.Params.Meta["tracestate"]; ok {
				got.hasState = true
				json.Unmarshal(raw, &got.metaSt)
			}
			rc.mu.Lock()
			rc.calls = append(rc.calls, got)
			rc.mu.Unlock()
		}
		h.ServeHTTP(w, r)
	})
}

func (rc *recorder) last(t *testing.T) received {
	t.Helper()
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if len(rc.calls) == 0 {
		t.Fatal("the upstream received no tools/call")
	}
	return rc.calls[len(rc.calls)-1]
}

// sdkUpstream is the official Go SDK's server with an echo tool: a legacy
// upstream (stateful Streamable HTTP, sessions from initialize).
func sdkUpstream() http.Handler {
	s := sdk.NewServer(&sdk.Implementation{Name: "go-sdk", Version: "test"}, nil)
	s.AddTool(&sdk.Tool{Name: "echo", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "echo"}}}, nil
		})
	return sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return s }, &sdk.StreamableHTTPOptions{JSONResponse: true})
}

// gatewayRig is mcpx (`mcpx serve` as host.HTTP runs it) fronting two
// upstreams over HTTP: "modern", mcpx's own fixture (2026-07-28, itself
// traced: its server span is the upstream's span), and "legacy", the Go
// SDK's server.
type gatewayRig struct {
	url              string
	modern, legacy   *recorder
	modernT, legacyT string // a tool of each, as the client names it
}

func startGateway(t *testing.T) *gatewayRig {
	t.Helper()
	rig := &gatewayRig{modern: &recorder{}, legacy: &recorder{}, modernT: "modern__test_simple_text", legacyT: "legacy__echo"}
	fx := streamhttp.New(&edge.Edge{Server: &server.Server{NS: fixture.New(), Info: mcp.Implementation{Name: "fixture", Version: "test"}}}, streamhttp.Options{})
	mu := httptest.NewServer(rig.modern.wrap(fx))
	t.Cleanup(mu.Close)
	lu := httptest.NewServer(rig.legacy.wrap(sdkUpstream()))
	t.Cleanup(lu.Close)
	cfg, err := config.Parse("trace.json", []byte(`{"mcpServers": {"modern": {"url": "`+mu.URL+`/mcp"}, "legacy": {"url": "`+lu.URL+`/mcp"}}}`), nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	info := mcp.Implementation{Name: "mcpx", Version: "test"}
	g, err := host.Gateway(ctx, cfg, info, discard())
	if err != nil {
		t.Fatal(err)
	}
	urls, done := make(chan string, 1), make(chan error, 1)
	go func() {
		done <- host.HTTP(ctx, host.Config{NS: g, Info: info, Log: discard()}, "127.0.0.1:0", func(u string) { urls <- u })
	}()
	t.Cleanup(func() {
		cancel()
		<-done
		g.Close()
	})
	select {
	case rig.url = <-urls:
	case err := <-done:
		t.Fatal(err)
	}
	return rig
}

// client is a test MCP client of one revision over HTTP.
type client struct {
	url, rev, sid string
}

func newClient(t *testing.T, url, rev string) *client {
	t.Helper()
	c := &client{url: url, rev: rev}
	if rev != "2026-07-28" {
		c.post(t, 0, mcp.MethodInitialize, `{"protocolVersion":"`+rev+`","capabilities":{},"clientInfo":{"name":"test","version":"1"}}`, nil)
		c.post(t, -1, "notifications/initialized", `{}`, nil)
	}
	return c
}

// post sends a request (a notification for id -1) with params (the
// revision's _meta added for 2026-07-28) and extra headers; it returns the
// JSON-RPC response.
func (c *client) post(t *testing.T, id int, method, params string, headers map[string]string) map[string]json.RawMessage {
	t.Helper()
	if c.rev == "2026-07-28" {
		params = addMeta(t, params, map[string]any{
			mcp.MetaKeyProtocolVersion: c.rev, mcp.MetaKeyClientCapabilities: map[string]any{},
		})
	}
	body := `{"jsonrpc":"2.0","method":"` + method + `","params":` + params
	if id >= 0 {
		body += fmt.Sprintf(`,"id":%d`, id)
	}
	body += "}"
	req, _ := http.NewRequest("POST", c.url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", c.rev)
	if c.rev == "2026-07-28" {
		req.Header.Set("Mcp-Method", method)
		var p struct{ Name string }
		json.Unmarshal([]byte(params), &p)
		if p.Name != "" {
			req.Header.Set("Mcp-Name", p.Name)
		}
	}
	if c.sid != "" {
		req.Header.Set("Mcp-Session-Id", c.sid)
	}
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if sid := resp.Header.Get("Mcp-Session-Id"); sid != "" {
		c.sid = sid
	}
	if id < 0 {
		return nil
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("%s: HTTP %d, not a JSON-RPC response: %.300s", method, resp.StatusCode, b)
	}
	return m
}

// addMeta merges keys into params' _meta.
func addMeta(t *testing.T, params string, keys map[string]any) string {
	t.Helper()
	var p map[string]any
	if err := json.Unmarshal([]byte(params), &p); err != nil {
		t.Fatal(err)
	}
	meta, _ := p["_meta"].(map[string]any)
	if meta == nil {
		meta = map[string]any{}
	}
	for k, v := range keys {
		meta[k] = v
	}
	p["_meta"] = meta
	b, _ := json.Marshal(p)
	return string(b)
}

// traceparent is sc in the W3C form.
func traceparent(sc trace.SpanContext) string {
	return fmt.Sprintf("00-%s-%s-%s", sc.TraceID(), sc.SpanID(), sc.TraceFlags())
}

// tracer installs a recording provider (every span sampled, exported at
// its end) for the test and returns its spans' exporter and a tracer for
// the test's own client spans.
func tracer(t *testing.T) (*tracetest.InMemoryExporter, trace.Tracer) {
	t.Helper()
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	t.Cleanup(tracing.Install(tp))
	t.Cleanup(func() { tp.Shutdown(context.Background()) })
	return exp, tp.Tracer("test-client")
}

// find waits briefly for the span matching ok (spans end after the
// answer is written) and returns it.
func find(t *testing.T, exp *tracetest.InMemoryExporter, what string, ok func(tracetest.SpanStub) bool) tracetest.SpanStub {
	t.Helper()
	deadline := time.Now().Add(2 * time.Second)
	for {
		for _, s := range exp.GetSpans() {
			if ok(s) {
				return s
			}
		}
		if time.Now().After(deadline) {
			var names []string
			for _, s := range exp.GetSpans() {
				names = append(names, fmt.Sprintf("%s(%s, parent %s)", s.Name, s.SpanKind, s.Parent.SpanID()))
			}
			t.Fatalf("no %s among the spans: %v", what, names)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func attr(s tracetest.SpanStub, key string) string {
	for _, a := range s.Attributes {
		if string(a.Key) == key {
			return a.Value.Emit()
		}
	}
	return ""
}

// joined checks that one trace runs from parent (the client's span)
// through mcpx's span for the request (served in rev) and its upstream
// call's span to what the upstream received, in _meta and in the
// headers; it returns mcpx's request span.
func joined(t *testing.T, exp *tracetest.InMemoryExporter, parent trace.SpanContext, rev, tool, ns string, got received) tracetest.SpanStub {
	t.Helper()
	req := find(t, exp, "mcpx request span under the client's", func(s tracetest.SpanStub) bool {
		return s.SpanKind == trace.SpanKindServer && s.Parent.SpanID() == parent.SpanID() && s.Name == "tools/call "+tool
	})
	if req.SpanContext.TraceID() != parent.TraceID() || !req.Parent.IsRemote() {
		t.Errorf("mcpx's span is in trace %s (remote parent %v), want the client's %s", req.SpanContext.TraceID(), req.Parent.IsRemote(), parent.TraceID())
	}
	for k, want := range map[string]string{"mcp.method.name": "tools/call", "mcp.protocol.version": rev, "gen_ai.tool.name": tool, "mcpx.namespace": ns, "mcpx.outcome": "ok"} {
		if v := attr(req, k); v != want {
			t.Errorf("request span %s = %q, want %q", k, v, want)
		}
	}
	up := find(t, exp, "upstream call span under mcpx's request span", func(s tracetest.SpanStub) bool {
		return s.SpanKind == trace.SpanKindClient && s.Parent.SpanID() == req.SpanContext.SpanID()
	})
	if attr(up, "mcpx.upstream") != ns || attr(up, "mcp.protocol.version") != got.rev || attr(up, "mcpx.outcome") != "ok" {
		t.Errorf("upstream span attributes %v, want upstream %q, revision %q, outcome ok", up.Attributes, ns, got.rev)
	}
	want := traceparent(up.SpanContext)
	if got.header != want || got.meta != want {
		t.Errorf("the upstream received traceparent %q (header) and %q (_meta), want %q, the upstream call's span", got.header, got.meta, want)
	}
	// The request the upstream got is still valid, closed-world, in its
	// revision: the trace context keys are open _meta members everywhere.
	v, err := closedworld.Default()
	if err != nil {
		t.Fatal(err)
	}
	var f wiretest.Frame
	json.Unmarshal(got.body, &f)
	if err := v.Validate(got.rev, "JSONRPCMessage", got.body); err != nil {
		t.Errorf("the upstream's request in %s: %v", got.rev, err)
	}
	if err := wiretest.CheckFramed(v, got.rev, "ClientRequest", &f); err != nil {
		t.Errorf("the upstream's request in %s: %v", got.rev, err)
	}
	return req
}

// TestTraceJoinsClientMcpxUpstream: a client's span, mcpx's span for its
// request, mcpx's span for the upstream call and the upstream's own span
// make one trace, with the client's context in _meta (a 2026-07-28
// client, to mcpx's own fixture, whose edge traces too) or in the HTTP
// headers (a 2025-06-18 session, to the Go SDK's server).
func TestTraceJoinsClientMcpxUpstream(t *testing.T) {
	exp, tr := tracer(t)
	rig := startGateway(t)

	t.Run("meta", func(t *testing.T) {
		_, cs := tr.Start(context.Background(), "client", trace.WithSpanKind(trace.SpanKindClient))
		defer cs.End()
		c := newClient(t, rig.url, "2026-07-28")
		params := addMeta(t, `{"name":"`+rig.modernT+`","arguments":{}}`, map[string]any{"traceparent": traceparent(cs.SpanContext()), "tracestate": "k=v"})
		if r := c.post(t, 1, "tools/call", params, nil); r["error"] != nil {
			t.Fatalf("tools/call: %s", r["error"])
		}
		got := rig.modern.last(t)
		if got.metaSt != "k=v" || got.rev != "2026-07-28" {
			t.Errorf("the upstream received tracestate %q at %s, want the client's k=v at 2026-07-28", got.metaSt, got.rev)
		}
		joined(t, exp, cs.SpanContext(), "2026-07-28", rig.modernT, "modern", got)
		up := find(t, exp, "mcpx upstream span", func(s tracetest.SpanStub) bool {
			return s.SpanKind == trace.SpanKindClient && s.SpanContext.TraceID() == cs.SpanContext().TraceID()
		})
		find(t, exp, "the upstream's own span under mcpx's upstream call", func(s tracetest.SpanStub) bool {
			return s.SpanKind == trace.SpanKindServer && s.Parent.SpanID() == up.SpanContext.SpanID() && s.Name == "tools/call test_simple_text"
		})
	})

	t.Run("headers", func(t *testing.T) {
		_, cs := tr.Start(context.Background(), "client", trace.WithSpanKind(trace.SpanKindClient))
		defer cs.End()
		c := newClient(t, rig.url, "2025-06-18")
		if r := c.post(t, 1, "tools/call", `{"name":"`+rig.legacyT+`","arguments":{}}`, map[string]string{"traceparent": traceparent(cs.SpanContext())}); r["error"] != nil {
			t.Fatalf("tools/call: %s", r["error"])
		}
		got := rig.legacy.last(t)
		if got.hasState {
			t.Errorf("the upstream received a tracestate %q; the client sent none", got.metaSt)
		}
		joined(t, exp, cs.SpanContext(), "2025-06-18", rig.legacyT, "legacy", got)
	})
}

// TestMetaOverHeaders: with trace context in both the headers and _meta,
// _meta names the parent; a _meta traceparent that is not valid leaves
// the headers' in force.
func TestMetaOverHeaders(t *testing.T) {
	exp, tr := tracer(t)
	rig := startGateway(t)
	_, fromMeta := tr.Start(context.Background(), "client-meta")
	_, fromHeader := tr.Start(context.Background(), "client-header")
	defer fromMeta.End()
	defer fromHeader.End()
	hdr := map[string]string{"traceparent": traceparent(fromHeader.SpanContext())}
	c := newClient(t, rig.url, "2025-11-25")

	params := addMeta(t, `{"name":"`+rig.legacyT+`","arguments":{}}`, map[string]any{"traceparent": traceparent(fromMeta.SpanContext())})
	if r := c.post(t, 1, "tools/call", params, hdr); r["error"] != nil {
		t.Fatalf("tools/call: %s", r["error"])
	}
	joined(t, exp, fromMeta.SpanContext(), "2025-11-25", rig.legacyT, "legacy", rig.legacy.last(t))

	params = addMeta(t, `{"name":"`+rig.legacyT+`","arguments":{}}`, map[string]any{"traceparent": "00-not-a-valid-context-01"})
	if r := c.post(t, 2, "tools/call", params, hdr); r["error"] != nil {
		t.Fatalf("tools/call: %s", r["error"])
	}
	joined(t, exp, fromHeader.SpanContext(), "2025-11-25", rig.legacyT, "legacy", rig.legacy.last(t))
}

// TestErrorOutcome: a request answered with an error records its
// JSON-RPC code on mcpx's span.
func TestErrorOutcome(t *testing.T) {
	exp, tr := tracer(t)
	rig := startGateway(t)
	_, cs := tr.Start(context.Background(), "client")
	defer cs.End()
	c := newClient(t, rig.url, "2026-07-28")
	params := addMeta(t, `{"name":"modern__no_such_tool","arguments":{}}`, map[string]any{"traceparent": traceparent(cs.SpanContext())})
	r := c.post(t, 1, "tools/call", params, nil)
	var e struct{ Code int64 }
	if json.Unmarshal(r["error"], &e) != nil || e.Code == 0 {
		t.Fatalf("tools/call of an unknown tool: %v, want an error", r)
	}
	s := find(t, exp, "mcpx request span", func(s tracetest.SpanStub) bool { return s.Parent.SpanID() == cs.SpanContext().SpanID() })
	if got, want := attr(s, "rpc.response.status_code"), fmt.Sprint(e.Code); got != want || attr(s, "mcpx.outcome") != "error" || attr(s, "error.type") != want {
		t.Errorf("span attributes %v, want rpc.response.status_code and error.type %s, outcome error", s.Attributes, want)
	}
}

// TestOffByDefault: with no OTEL_* variable set, Setup leaves tracing
// off: no span is made, and the upstream gets no traceparent header and
// the client's _meta as it was sent.
func TestOffByDefault(t *testing.T) {
	stop, err := tracing.Setup(context.Background(), func(string) (string, bool) { return "", false }, "test", discard())
	if err != nil {
		t.Fatal(err)
	}
	defer stop(context.Background())
	if tracing.Enabled() {
		t.Fatal("tracing is on with no OTEL_* variable set")
	}
	rig := startGateway(t)
	c := newClient(t, rig.url, "2026-07-28")
	const clientTP = "00-0af7651916cd43dd8448eb211c80319c-00f067aa0ba902b7-01"
	params := addMeta(t, `{"name":"`+rig.modernT+`","arguments":{}}`, map[string]any{"traceparent": clientTP})
	if r := c.post(t, 1, "tools/call", params, map[string]string{"traceparent": "00-1af7651916cd43dd8448eb211c80319c-10f067aa0ba902b7-01"}); r["error"] != nil {
		t.Fatalf("tools/call: %s", r["error"])
	}
	got := rig.modern.last(t)
	if got.header != "" || got.meta != clientTP || got.hasState {
		t.Errorf("tracing off, the upstream received traceparent header %q, _meta %q (tracestate: %v); want none, the client's own, none", got.header, got.meta, got.hasState)
	}
	if ctx, sp := tracing.StartRequest(context.Background(), "tools/call", "2026-07-28", json.RawMessage(`1`), nil); sp != nil || trace.SpanFromContext(ctx).SpanContext().IsValid() {
		t.Error("StartRequest made a span with tracing off")
	}
}
