// Package tracing is mcpx's OpenTelemetry tracing: a server span per
// client request, a client span per upstream call beneath it, and W3C
// trace context read from the client and passed on to the upstream, so
// one trace runs from the client through mcpx to the upstream.
//
// It is off unless [Setup] finds an OTLP exporter configured in the
// standard OTEL_* environment variables (or a test calls [Install]).
// Off, every hook here is one atomic load and returns: no span, no
// allocation, and a client's _meta passes to the upstream as it came.
//
// Attributes follow the OpenTelemetry semantic conventions for MCP
// (gen-ai/mcp.md, Development status) where they name one:
// mcp.method.name, mcp.protocol.version, jsonrpc.request.id,
// rpc.response.status_code (the JSON-RPC error code, as a string),
// error.type, gen_ai.tool.name, gen_ai.prompt.name, gen_ai.operation.name
// (execute_tool for tools/call) and mcp.resource.uri. What they have no
// name for is under mcpx.: mcpx.namespace (the namespace a request was
// routed to), mcpx.upstream (the upstream a call went to) and
// mcpx.outcome (ok, error or cancelled).
//
// Trace context is read from the request's params._meta (traceparent,
// tracestate) and, over HTTP, from the request's headers; when both carry
// a valid traceparent, _meta wins. _meta belongs to the message: it is
// what the MCP specification reserves for trace context (2026-07-28,
// "OpenTelemetry trace context"), what the semantic conventions tell
// instrumentations to use, and it names the client's span for this one
// request. The headers belong to the HTTP exchange, which may carry a
// batch or be set by a proxy between the client and mcpx, so they are the
// fallback. To the upstream the context of mcpx's upstream-call span goes
// in _meta on every transport and, over HTTP, in the headers too.
package tracing

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"sync/atomic"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/mcpx-dev/mcpx/generated/mcp"
	"github.com/mcpx-dev/mcpx/runtime/jsonrpc"
)

// ScopeName is the instrumentation scope of mcpx's spans.
const ScopeName = "github.com/mcpx-dev/mcpx"

// The W3C trace context keys, in _meta as in HTTP headers.
const (
	ParentKey = "traceparent"
	StateKey  = "tracestate"
)

// Attribute keys (see the package comment).
const (
	attrMethod    = attribute.Key("mcp.method.name")
	attrRevision  = attribute.Key("mcp.protocol.version")
	attrRequestID = attribute.Key("jsonrpc.request.id")
	attrStatus    = attribute.Key("rpc.response.status_code")
	attrErrorType = attribute.Key("error.type")
	attrTool      = attribute.Key("gen_ai.tool.name")
	attrPrompt    = attribute.Key("gen_ai.prompt.name")
	attrOperation = attribute.Key("gen_ai.operation.name")
	attrURI       = attribute.Key("mcp.resource.uri")
	attrNamespace = attribute.Key("mcpx.namespace")
	attrUpstream  = attribute.Key("mcpx.upstream")
	attrOutcome   = attribute.Key("mcpx.outcome")
)

// state is tracing while on.
type state struct {
	tracer trace.Tracer
	prop   propagation.TraceContext
}

// cur is nil while tracing is off.
var cur atomic.Pointer[state]

// Enabled reports whether spans are being made.
func Enabled() bool { return cur.Load() != nil }

// Install sends mcpx's spans to tp (nil turns tracing off) and returns a
// function that puts back what was installed before. [Setup] calls it;
// tests and benchmarks call it with their own provider.
func Install(tp trace.TracerProvider) (restore func()) {
	var s *state
	if tp != nil {
		s = &state{tracer: tp.Tracer(ScopeName)}
	}
	old := cur.Swap(s)
	return func() { cur.Store(old) }
}

// Span is one of mcpx's spans; nil (tracing off) is a valid Span whose
// methods do nothing.
type Span struct{ s trace.Span }

// StartRequest starts the server span of a client request: method, its
// id and the revision it is served in, and meta, its params._meta as
// read (nil when it has none). The parent is meta's trace context when it
// has a valid one, else whatever ctx carries (the HTTP headers' context,
// see [Handler]). Off, it returns ctx and nil.
func StartRequest(ctx context.Context, method, rev string, id json.RawMessage, meta map[string]json.RawMessage) (context.Context, *Span) {
	st := cur.Load()
	if st == nil {
		return ctx, nil
	}
	if c, ok := metaCarrierOf(meta); ok {
		ctx = st.prop.Extract(ctx, &c) // an invalid traceparent leaves ctx as it was
	}
	// Attributes are set only on a span that records: an unsampled one
	// would drop them, after they cost their slice.
	ctx, s := st.tracer.Start(ctx, method, serverKind)
	if s.IsRecording() {
		s.SetAttributes(attrMethod.String(method), attrRevision.String(rev))
		if len(id) > 0 {
			s.SetAttributes(attrRequestID.String(rawID(id)))
		}
	}
	return ctx, &Span{s}
}

// The span kinds as start options, made once.
var (
	serverKind = trace.WithSpanKind(trace.SpanKindServer)
	clientKind = trace.WithSpanKind(trace.SpanKindClient)
)

// Target records what a request's hub params name: the tool, prompt or
// resource URI; the span is named "method target" for a tool or prompt,
// as the conventions ask (never a URI: too many distinct names).
func (sp *Span) Target(method string, params any) {
	if sp == nil || !sp.s.IsRecording() {
		return
	}
	switch p := params.(type) {
	case *mcp.CallToolRequestParams:
		sp.s.SetName(method + " " + p.Name)
		sp.s.SetAttributes(attrTool.String(p.Name), attrOperation.String("execute_tool"))
	case *mcp.GetPromptRequestParams:
		sp.s.SetName(method + " " + p.Name)
		sp.s.SetAttributes(attrPrompt.String(p.Name))
	case *mcp.ReadResourceRequestParams:
		sp.s.SetAttributes(attrURI.String(p.URI))
	}
}

// End ends a request's span with its answer: resp nil is a request the
// client cancelled (nothing is sent for it). Per the conventions for a
// server span, an error response records its code, and only an internal
// error or one of the server-error range (-32000 to -32099) marks the
// span failed; the client's own mistakes (-32602, say) do not.
func (sp *Span) End(resp *jsonrpc.Message) {
	if sp == nil {
		return
	}
	if sp.s.IsRecording() {
		switch {
		case resp == nil:
			sp.s.SetAttributes(attrOutcome.String("cancelled"))
		case resp.Error != nil:
			code := strconv.FormatInt(resp.Error.Code, 10)
			sp.s.SetAttributes(attrOutcome.String("error"), attrStatus.String(code), attrErrorType.String(code))
			if c := resp.Error.Code; c == jsonrpc.InternalError || (c <= -32000 && c >= -32099) {
				sp.s.SetStatus(codes.Error, resp.Error.Message)
			}
		default:
			sp.s.SetAttributes(attrOutcome.String("ok"))
		}
	}
	sp.s.End()
}

// Namespace records on the request span in ctx the namespace its
// request was routed to.
func Namespace(ctx context.Context, name string) {
	if cur.Load() == nil {
		return
	}
	if s := trace.SpanFromContext(ctx); s.IsRecording() {
		s.SetAttributes(attrNamespace.String(name))
	}
}

// StartUpstream starts the client span of a call to upstream, which
// speaks rev: method and target, the upstream's own tool or prompt name
// or resource URI ("" for none). Off, it returns ctx and nil.
func StartUpstream(ctx context.Context, upstream, rev, method, target string) (context.Context, *Span) {
	st := cur.Load()
	if st == nil {
		return ctx, nil
	}
	ctx, s := st.tracer.Start(ctx, method, clientKind)
	if !s.IsRecording() {
		return ctx, &Span{s}
	}
	s.SetAttributes(attrMethod.String(method), attrRevision.String(rev), attrUpstream.String(upstream))
	switch {
	case target == "":
	case method == mcp.MethodToolsCall:
		s.SetName(method + " " + target)
		s.SetAttributes(attrTool.String(target), attrOperation.String("execute_tool"))
	case method == mcp.MethodPromptsGet:
		s.SetName(method + " " + target)
		s.SetAttributes(attrPrompt.String(target))
	default:
		s.SetAttributes(attrURI.String(target))
	}
	return ctx, &Span{s}
}

// EndCall ends an upstream call's span with its outcome: every JSON-RPC
// error the upstream answered marks a client span failed (the
// conventions' rule for clients), with its code; a call that got no
// answer (timeout, transport failure) is failed with error.type _OTHER,
// and one the client cancelled is only marked so.
func (sp *Span) EndCall(err error) {
	if sp == nil {
		return
	}
	if sp.s.IsRecording() {
		var je *jsonrpc.Error
		switch {
		case err == nil:
			sp.s.SetAttributes(attrOutcome.String("ok"))
		case errors.As(err, &je):
			code := strconv.FormatInt(je.Code, 10)
			sp.s.SetAttributes(attrOutcome.String("error"), attrStatus.String(code), attrErrorType.String(code))
			sp.s.SetStatus(codes.Error, je.Message)
		case errors.Is(err, context.Canceled):
			sp.s.SetAttributes(attrOutcome.String("cancelled"))
		default:
			sp.s.SetAttributes(attrOutcome.String("error"), attrErrorType.String("_OTHER"))
			sp.s.SetStatus(codes.Error, err.Error())
		}
	}
	sp.s.End()
}

// InjectMeta puts the trace context of ctx's span into hub params' _meta
// (replacing whatever traceparent and tracestate the client sent, which
// name the client's span, not mcpx's), for the request about to be
// encoded from params; restore puts the params' _meta back as it was.
// Off, or for params without _meta, it changes nothing.
func InjectMeta(ctx context.Context, params any) (restore func()) {
	st := cur.Load()
	if st == nil {
		return nothing
	}
	env, ok := params.(mcp.Enveloped)
	if !ok || env.Envelope().Meta == nil || !trace.SpanContextFromContext(ctx).IsValid() {
		return nothing
	}
	var c metaCarrier
	st.prop.Inject(ctx, &c)
	meta := env.Envelope().Meta
	saved := *meta
	m := make(mcp.Meta, len(saved)+2)
	for k, v := range saved {
		m[k] = v
	}
	m[ParentKey] = json.RawMessage(`"` + c.parent + `"`) // hex and dashes only: nothing to escape
	if c.state != "" {
		m[StateKey] = jsonString(c.state)
	} else {
		delete(m, StateKey) // the client's, for a span that is not the parent
	}
	*meta = m
	return func() { *meta = saved }
}

func nothing() {}

// InjectHeaders sets the traceparent and tracestate headers of an HTTP
// request to an upstream from ctx's span. Off, it changes nothing.
func InjectHeaders(ctx context.Context, h http.Header) {
	if st := cur.Load(); st != nil {
		st.prop.Inject(ctx, headerCarrier(h))
	}
}

// headerCarrier sets the trace context headers under their canonical
// names directly (http.Header.Set canonicalizes each key anew).
type headerCarrier http.Header

func (h headerCarrier) Get(key string) string { return http.Header(h).Get(key) }
func (h headerCarrier) Keys() []string        { return []string{ParentKey, StateKey} }
func (h headerCarrier) Set(key, value string) {
	switch key {
	case ParentKey:
		h["Traceparent"] = []string{value}
	case StateKey:
		h["Tracestate"] = []string{value}
	default:
		http.Header(h).Set(key, value)
	}
}

// Handler reads the W3C trace context of each request's headers into its
// context, where [StartRequest] finds it when the message's _meta names
// none. It keeps next's Close, if it has one (streamhttp.ListenAndServe
// calls it at shutdown).
func Handler(next http.Handler) http.Handler { return handler{next} }

type handler struct{ next http.Handler }

func (h handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	st := cur.Load()
	if st == nil || r.Header.Get(ParentKey) == "" {
		h.next.ServeHTTP(w, r)
		return
	}
	h.next.ServeHTTP(w, r.WithContext(st.prop.Extract(r.Context(), propagation.HeaderCarrier(r.Header))))
}

func (h handler) Close() {
	if c, ok := h.next.(interface{ Close() }); ok {
		c.Close()
	}
}

// metaCarrier carries trace context to and from _meta without a map.
type metaCarrier struct{ parent, state string }

// metaCarrierOf reads the trace context keys of a request's _meta; ok is
// false when it has no traceparent string.
func metaCarrierOf(meta map[string]json.RawMessage) (metaCarrier, bool) {
	raw, ok := meta[ParentKey]
	if !ok {
		return metaCarrier{}, false
	}
	var c metaCarrier
	if jsonrpc.String(raw, &c.parent) != nil {
		return metaCarrier{}, false
	}
	if raw, ok := meta[StateKey]; ok && jsonrpc.String(raw, &c.state) != nil {
		c.state = ""
	}
	return c, true
}

func (c *metaCarrier) Get(key string) string {
	switch key {
	case ParentKey:
		return c.parent
	case StateKey:
		return c.state
	}
	return ""
}

func (c *metaCarrier) Set(key, value string) {
	switch key {
	case ParentKey:
		c.parent = value
	case StateKey:
		c.state = value
	}
}

func (c *metaCarrier) Keys() []string { return []string{ParentKey, StateKey} }

// rawID is a request id as text: a string id unquoted, a number as is.
func rawID(id json.RawMessage) string {
	var s string
	if id[0] == '"' && jsonrpc.String(id, &s) == nil {
		return s
	}
	return string(id)
}

// jsonString is s as a JSON string (tracestate may hold '"' and '\').
func jsonString(s string) json.RawMessage {
	b, _ := json.Marshal(s)
	return b
}
