package tracing_test

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"

	coltrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/proto"

	"github.com/mcpx-dev/mcpx/generated/mcp"
	"github.com/mcpx-dev/mcpx/runtime/jsonrpc"
	"github.com/mcpx-dev/mcpx/runtime/tracing"
)

func env(kv ...string) func(string) (string, bool) {
	m := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
}

func TestFromEnv(t *testing.T) {
	const ep = "OTEL_EXPORTER_OTLP_ENDPOINT"
	for _, tc := range []struct {
		name     string
		env      []string
		on       bool
		protocol string
		sampler  string // a prefix of the sampler's description
		err      string // a part of the error
	}{
		{name: "nothing set", env: nil},
		{name: "only a service name", env: []string{"OTEL_SERVICE_NAME", "x"}},
		{name: "only a sampler", env: []string{"OTEL_TRACES_SAMPLER", "always_on"}},
		{name: "endpoint", env: []string{ep, "http://127.0.0.1:4318"}, on: true, protocol: "http/protobuf", sampler: "ParentBased{root:AlwaysOnSampler"},
		{name: "traces endpoint", env: []string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "http://127.0.0.1:4318/v1/traces"}, on: true, protocol: "http/protobuf"},
		{name: "exporter otlp alone", env: []string{"OTEL_TRACES_EXPORTER", "otlp"}, on: true, protocol: "http/protobuf"},
		{name: "exporter none", env: []string{ep, "http://x", "OTEL_TRACES_EXPORTER", "none"}},
		{name: "sdk disabled", env: []string{ep, "http://x", "OTEL_SDK_DISABLED", "TRUE"}},
		{name: "sdk not disabled", env: []string{ep, "http://x", "OTEL_SDK_DISABLED", "false"}, on: true, protocol: "http/protobuf"},
		{name: "grpc", env: []string{ep, "http://x", "OTEL_EXPORTER_OTLP_PROTOCOL", "grpc"}, on: true, protocol: "grpc"},
		{name: "traces protocol wins", env: []string{ep, "http://x", "OTEL_EXPORTER_OTLP_PROTOCOL", "grpc", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "http/protobuf"}, on: true, protocol: "http/protobuf"},
		{name: "ratio 0", env: []string{ep, "http://x", "OTEL_TRACES_SAMPLER", "traceidratio", "OTEL_TRACES_SAMPLER_ARG", "0"}, on: true, protocol: "http/protobuf", sampler: "TraceIDRatioBased{0}"},
		{name: "parent ratio", env: []string{ep, "http://x", "OTEL_TRACES_SAMPLER", "parentbased_traceidratio", "OTEL_TRACES_SAMPLER_ARG", "0.25"}, on: true, protocol: "http/protobuf", sampler: "ParentBased{root:TraceIDRatioBased{0.25}"},
		{name: "always off", env: []string{ep, "http://x", "OTEL_TRACES_SAMPLER", "always_off"}, on: true, protocol: "http/protobuf", sampler: "AlwaysOffSampler"},
		{name: "http/json", env: []string{ep, "http://x", "OTEL_EXPORTER_OTLP_PROTOCOL", "http/json"}, err: "OTEL_EXPORTER_OTLP_PROTOCOL=http/json"},
		{name: "console exporter", env: []string{"OTEL_TRACES_EXPORTER", "console"}, err: "OTEL_TRACES_EXPORTER=console"},
		{name: "unknown sampler", env: []string{ep, "http://x", "OTEL_TRACES_SAMPLER", "sometimes"}, err: "OTEL_TRACES_SAMPLER=sometimes"},
		{name: "ratio above 1", env: []string{ep, "http://x", "OTEL_TRACES_SAMPLER", "traceidratio", "OTEL_TRACES_SAMPLER_ARG", "2"}, err: "OTEL_TRACES_SAMPLER_ARG=2"},
		{name: "ratio not a number", env: []string{ep, "http://x", "OTEL_TRACES_SAMPLER", "traceidratio", "OTEL_TRACES_SAMPLER_ARG", "half"}, err: "OTEL_TRACES_SAMPLER_ARG=half"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := tracing.FromEnv(env(tc.env...))
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err = %v, want one naming %s", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if c.On != tc.on || c.Protocol != tc.protocol {
				t.Fatalf("on %v protocol %q (why %q), want on %v protocol %q", c.On, c.Protocol, c.Why, tc.on, tc.protocol)
			}
			if !c.On && c.Why == "" {
				t.Error("off without saying why")
			}
			if tc.sampler != "" && !strings.HasPrefix(c.Sampler.Description(), tc.sampler) {
				t.Errorf("sampler %s, want %s", c.Sampler.Description(), tc.sampler)
			}
		})
	}
}

// spansOf collects the spans and service names of OTLP export requests.
type spansOf struct {
	mu       sync.Mutex
	names    []string
	services []string
}

func (s *spansOf) add(req *coltrace.ExportTraceServiceRequest) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, rs := range req.ResourceSpans {
		for _, a := range rs.GetResource().GetAttributes() {
			if a.Key == "service.name" {
				s.services = append(s.services, a.Value.GetStringValue())
			}
		}
		for _, ss := range rs.ScopeSpans {
			for _, sp := range ss.Spans {
				if sp.Kind == tracepb.Span_SPAN_KIND_SERVER {
					s.names = append(s.names, sp.Name)
				}
			}
		}
	}
}

// exportOne sets tracing up from the environment, makes one request span
// and shuts tracing down, which must flush it to the receiver.
func exportOne(t *testing.T) {
	t.Helper()
	stop, err := tracing.Setup(context.Background(), os.LookupEnv, "test", discard())
	if err != nil {
		t.Fatal(err)
	}
	if !tracing.Enabled() {
		t.Fatal("tracing is off with an endpoint set")
	}
	_, sp := tracing.StartRequest(context.Background(), "tools/call", "2026-07-28", json.RawMessage(`7`), nil)
	sp.Target("tools/call", &mcp.CallToolRequestParams{Name: "ns__echo"})
	sp.End(jsonrpc.Response(json.RawMessage(`7`), json.RawMessage(`{}`)))
	if err := stop(context.Background()); err != nil {
		t.Fatalf("shutdown: %v", err)
	}
	if tracing.Enabled() {
		t.Error("tracing is still on after shutdown")
	}
}

// TestExportOTLPHTTP: with OTEL_EXPORTER_OTLP_ENDPOINT naming an
// in-process OTLP/HTTP receiver, a request's span reaches it, under
// OTEL_SERVICE_NAME, by the time shutdown returns.
func TestExportOTLPHTTP(t *testing.T) {
	got := &spansOf{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		var req coltrace.ExportTraceServiceRequest
		if r.URL.Path != "/v1/traces" || proto.Unmarshal(b, &req) != nil {
			http.Error(w, "not an OTLP trace export", http.StatusBadRequest)
			return
		}
		got.add(&req)
		w.Header().Set("Content-Type", "application/x-protobuf")
		out, _ := proto.Marshal(&coltrace.ExportTraceServiceResponse{})
		w.Write(out)
	}))
	defer srv.Close()
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", srv.URL)
	t.Setenv("OTEL_SERVICE_NAME", "mcpx-under-test")
	exportOne(t)
	got.mu.Lock()
	defer got.mu.Unlock()
	if len(got.names) != 1 || got.names[0] != "tools/call ns__echo" || len(got.services) == 0 || got.services[0] != "mcpx-under-test" {
		t.Errorf("received spans %v of services %v, want one tools/call ns__echo of mcpx-under-test", got.names, got.services)
	}
}

type grpcReceiver struct {
	coltrace.UnimplementedTraceServiceServer
	got *spansOf
}

func (g grpcReceiver) Export(_ context.Context, req *coltrace.ExportTraceServiceRequest) (*coltrace.ExportTraceServiceResponse, error) {
	g.got.add(req)
	return &coltrace.ExportTraceServiceResponse{}, nil
}

// TestExportOTLPGRPC: OTEL_EXPORTER_OTLP_PROTOCOL=grpc exports to an
// in-process OTLP/gRPC receiver; the service name defaults to mcpx.
func TestExportOTLPGRPC(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	got := &spansOf{}
	gs := grpc.NewServer()
	coltrace.RegisterTraceServiceServer(gs, grpcReceiver{got: got})
	go gs.Serve(ln)
	defer gs.Stop()
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://"+ln.Addr().String())
	t.Setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc")
	t.Setenv("OTEL_SERVICE_NAME", "") // restored after the test
	os.Unsetenv("OTEL_SERVICE_NAME")
	exportOne(t)
	got.mu.Lock()
	defer got.mu.Unlock()
	if len(got.names) != 1 || got.names[0] != "tools/call ns__echo" || len(got.services) == 0 || got.services[0] != "mcpx" {
		t.Errorf("received spans %v of services %v, want one tools/call ns__echo of mcpx", got.names, got.services)
	}
}

// TestSetupRefusesBadValues: a value mcpx cannot honour stops Setup with
// the variable named, leaving tracing off.
func TestSetupRefusesBadValues(t *testing.T) {
	_, err := tracing.Setup(context.Background(), env("OTEL_EXPORTER_OTLP_ENDPOINT", "http://x", "OTEL_TRACES_SAMPLER", "bogus"), "test", discard())
	if err == nil || !strings.Contains(err.Error(), "OTEL_TRACES_SAMPLER=bogus") || tracing.Enabled() {
		t.Errorf("err = %v, enabled %v; want an error naming OTEL_TRACES_SAMPLER, tracing off", err, tracing.Enabled())
	}
}

// TestOffCostsNothing: with tracing off the hooks on a request's path
// allocate nothing.
func TestOffCostsNothing(t *testing.T) {
	if tracing.Enabled() {
		t.Fatal("tracing is on")
	}
	ctx := context.Background()
	meta := map[string]json.RawMessage{"traceparent": json.RawMessage(`"00-0af7651916cd43dd8448eb211c80319c-00f067aa0ba902b7-01"`)}
	params := &mcp.CallToolRequestParams{Name: "echo"}
	id := json.RawMessage(`1`)
	resp := jsonrpc.Response(id, json.RawMessage(`{}`))
	hdr := http.Header{}
	n := testing.AllocsPerRun(100, func() {
		c, sp := tracing.StartRequest(ctx, "tools/call", "2026-07-28", id, meta)
		sp.Target("tools/call", params)
		tracing.Namespace(c, "ns")
		c2, up := tracing.StartUpstream(c, "ns", "2026-07-28", "tools/call", "echo")
		tracing.InjectMeta(c2, params)()
		tracing.InjectHeaders(c2, hdr)
		up.EndCall(nil)
		sp.End(resp)
	})
	if n != 0 {
		t.Errorf("%v allocations per request with tracing off, want 0", n)
	}
	if len(hdr) != 0 || params.Meta != nil {
		t.Errorf("tracing off changed the upstream's headers %v or _meta %v", hdr, params.Meta)
	}
}
