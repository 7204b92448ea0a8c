package tracing_test

import (
	"context"
	"encoding/json"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/mcpx-dev/mcpx/generated/convert"
	"github.com/mcpx-dev/mcpx/generated/mcp"
	"github.com/mcpx-dev/mcpx/generated/revision"
	"github.com/mcpx-dev/mcpx/internal/mcpjson"
	"github.com/mcpx-dev/mcpx/runtime/edge"
	"github.com/mcpx-dev/mcpx/runtime/jsonrpc"
	"github.com/mcpx-dev/mcpx/runtime/tracing"
	"github.com/mcpx-dev/mcpx/testkit/closedworld"
	"github.com/mcpx-dev/mcpx/testkit/wiretest"
)

// TestTraceContextInEveryRevision: the trace context InjectMeta puts in
// a request's hub _meta survives the generated downgrade to every
// revision (traceparent and tracestate are open _meta members, not
// reserved keys a downgrade drops), the request stays closed-world valid
// there, and a client's comes through the upgrade the edge decodes with.
func TestTraceContextInEveryRevision(t *testing.T) {
	v, err := closedworld.Default()
	if err != nil {
		t.Fatal(err)
	}
	tp := sdktrace.NewTracerProvider()
	defer tp.Shutdown(context.Background())
	defer tracing.Install(tp)()
	ctx, span := tp.Tracer("test").Start(context.Background(), "call")
	defer span.End()
	want := traceparent(span.SpanContext())

	requests := map[string]func() any{
		mcp.MethodToolsCall:     func() any { return &mcp.CallToolRequestParams{Name: "echo"} },
		mcp.MethodPromptsGet:    func() any { return &mcp.GetPromptRequestParams{Name: "p"} },
		mcp.MethodResourcesRead: func() any { return &mcp.ReadResourceRequestParams{URI: "test://x"} },
		mcp.MethodToolsList:     func() any { return &mcp.PaginatedRequestParams{} },
	}
	for _, rev := range mcp.Revisions {
		for method, params := range requests {
			m, ok := revision.Lookup(rev).Method(method)
			if !ok {
				t.Fatalf("%s has no %s", rev, method)
			}
			p := params()
			meta := p.(mcp.Enveloped).Envelope().Meta
			if edge.IsModern(rev) { // what every request of a modern revision carries
				*meta = mcp.Meta{mcp.MetaKeyProtocolVersion: json.RawMessage(`"` + string(rev) + `"`),
					mcp.MetaKeyClientCapabilities: json.RawMessage(`{}`), mcp.MetaKeyClientInfo: json.RawMessage(`{"name":"mcpx","version":"test"}`)}
			}
			before := len(*meta)
			restore := tracing.InjectMeta(ctx, p)
			wire, err := convert.Downgrade(rev, p)
			restore()
			if err != nil {
				t.Fatalf("%s %s: %v", rev, method, err)
			}
			raw, _ := json.Marshal(wire)
			var got struct {
				Meta map[string]json.RawMessage `json:"_meta"`
			}
			if json.Unmarshal(raw, &got) != nil || string(got.Meta["traceparent"]) != `"`+want+`"` {
				t.Errorf("%s %s: params %s, want _meta.traceparent %s", rev, method, raw, want)
			}
			if _, kept := (*meta)["traceparent"]; kept || len(*meta) != before {
				t.Errorf("%s %s: the hub params' _meta was not put back: %v", rev, method, *meta)
			}
			msg, _ := json.Marshal(jsonrpc.Request(json.RawMessage(`1`), method, raw))
			if err := v.Validate(string(rev), "JSONRPCMessage", msg); err != nil {
				t.Errorf("%s %s: %v", rev, method, err)
			}
			if err := wiretest.CheckFramed(v, string(rev), "ClientRequest", &wiretest.Frame{ID: json.RawMessage(`1`), Method: method, Params: raw}); err != nil {
				t.Errorf("%s %s: %v", rev, method, err)
			}

			// A client's, read as the edge reads params.
			in := convert.New(rev, m.Params)
			if err := mcpjson.Unmarshal(raw, in); err != nil {
				t.Fatalf("%s %s: %v", rev, method, err)
			}
			hub, err := convert.Upgrade(rev, in)
			if err != nil {
				t.Fatalf("%s %s: %v", rev, method, err)
			}
			if meta := hub.(mcp.Enveloped).Envelope().Meta; meta == nil || string((*meta)["traceparent"]) != `"`+want+`"` {
				t.Errorf("%s %s: upgraded _meta %v, want its traceparent", rev, method, meta)
			}
		}
	}
}
