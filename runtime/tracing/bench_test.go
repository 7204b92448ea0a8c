package tracing_test

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/mcpx-dev/mcpx/generated/mcp"
	"github.com/mcpx-dev/mcpx/runtime/jsonrpc"
	"github.com/mcpx-dev/mcpx/runtime/tracing"
)

type discardSpans struct{}

func (discardSpans) ExportSpans(context.Context, []sdktrace.ReadOnlySpan) error { return nil }
func (discardSpans) Shutdown(context.Context) error                             { return nil }

// BenchmarkHooks is what tracing adds to one call through the gateway,
// hooks only: the request span, its target and namespace, the upstream
// call's span, the trace context put into _meta and the headers, and both
// ends; off, at sampler 0 % and at 100 % (batched, dropped).
func BenchmarkHooks(b *testing.B) {
	for _, m := range []struct {
		name    string
		sampler sdktrace.Sampler
	}{{"off", nil}, {"sampled0", sdktrace.TraceIDRatioBased(0)}, {"sampled100", sdktrace.AlwaysSample()}} {
		b.Run(m.name, func(b *testing.B) {
			if m.sampler != nil {
				tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(discardSpans{}), sdktrace.WithSampler(m.sampler))
				defer tp.Shutdown(context.Background())
				defer tracing.Install(tp)()
			}
			id := json.RawMessage(`1`)
			resp := jsonrpc.Response(id, json.RawMessage(`{}`))
			meta := map[string]json.RawMessage{mcp.MetaKeyProtocolVersion: json.RawMessage(`"2026-07-28"`)}
			b.ReportAllocs()
			for range b.N {
				params := &mcp.CallToolRequestParams{Name: "echo", Meta: mcp.Meta{mcp.MetaKeyProtocolVersion: json.RawMessage(`"2026-07-28"`)}}
				ctx, sp := tracing.StartRequest(context.Background(), "tools/call", "2026-07-28", id, meta)
				sp.Target("tools/call", params)
				tracing.Namespace(ctx, "up")
				uctx, up := tracing.StartUpstream(ctx, "up", "2026-07-28", "tools/call", "echo")
				tracing.InjectMeta(uctx, params)()
				tracing.InjectHeaders(uctx, http.Header{})
				up.EndCall(nil)
				sp.End(resp)
			}
		})
	}
}
