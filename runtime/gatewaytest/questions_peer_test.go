package gatewaytest

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	mcpgo "github.com/mark3labs/mcp-go/mcp"
	gosdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestQuestionsRealGoSDKClient — bridge 1 with a real client: the Go SDK
// client (v1.8.0), pinned to 2025-06-18 and 2025-11-25, over Streamable
// HTTP and stdio, with an elicitation handler, a sampling handler and a
// root, answers the questions of a stdio (2025-06-18) and an HTTP
// (2025-11-25) upstream through mcpx; each upstream's tool result carries
// the SDK's answer.
func TestQuestionsRealGoSDKClient(t *testing.T) {
	gw, _ := askGateway(t, askUpstream{ns: "s", rev: "2025-06-18"}, askUpstream{ns: "h", rev: "2025-11-25", http: true})
	for _, tr := range []string{"http", "stdio"} {
		for _, rev := range []string{"2025-06-18", "2025-11-25"} {
			t.Run(tr+"/"+rev, func(t *testing.T) {
				var conn connection
				var gt gosdk.Transport
				if tr == "http" {
					conn.url, conn.http = serveHTTP(t, gw, rev)
					gt = &gosdk.StreamableClientTransport{Endpoint: conn.url, HTTPClient: conn.http, MaxRetries: -1}
				} else {
					conn.reader, conn.writer = serveStdio(t, gw, rev)
					gt = &gosdk.IOTransport{Reader: conn.reader, Writer: conn.writer}
				}
				var mu sync.Mutex // the handlers run on the SDK's goroutines
				asked := map[string]int{}
				cl := gosdk.NewClient(&gosdk.Implementation{Name: "gatewaytest-go-sdk", Version: "1.0.0"}, &gosdk.ClientOptions{
					ElicitationHandler: func(_ context.Context, r *gosdk.ElicitRequest) (*gosdk.ElicitResult, error) {
						mu.Lock()
						asked["elicit"]++
						mu.Unlock()
						return &gosdk.ElicitResult{Action: "accept", Content: map[string]any{"name": "Grace (" + r.Params.Message + ")"}}, nil
					},
					CreateMessageHandler: func(_ context.Context, r *gosdk.CreateMessageRequest) (*gosdk.CreateMessageResult, error) {
						mu.Lock()
						asked["sample"]++
						mu.Unlock()
						return &gosdk.CreateMessageResult{Role: "assistant", Model: "sdk-model", Content: &gosdk.TextContent{Text: "sdk sampled"}}, nil
					},
				})
				cl.AddRoots(&gosdk.Root{URI: "file:///sdk-root", Name: "sdk"})
				cs, err := cl.Connect(t.Context(), gt, &gosdk.ClientSessionOptions{ProtocolVersion: rev})
				if err != nil {
					t.Fatalf("go-sdk Connect pinned to %s: %v", rev, err)
				}
				t.Cleanup(func() { cs.Close() })
				want := map[string]string{"elicit": "Grace (Your name?)", "sample": "sdk sampled", "roots": "file:///sdk-root"}
				for _, ns := range []string{"s", "h"} {
					for _, tool := range []string{"elicit", "sample", "roots"} {
						res, err := cs.CallTool(t.Context(), &gosdk.CallToolParams{Name: ns + "__" + tool, Arguments: map[string]any{}})
						if err != nil {
							t.Errorf("%s__%s: %v", ns, tool, err)
							continue
						}
						text := ""
						if len(res.Content) == 1 {
							if tc, ok := res.Content[0].(*gosdk.TextContent); ok {
								text = tc.Text
							}
						}
						if !strings.Contains(text, want[tool]) {
							t.Errorf("%s__%s: the upstream's tool said %q, want the SDK client's answer %q", ns, tool, text, want[tool])
						}
					}
				}
				mu.Lock()
				defer mu.Unlock()
				if asked["elicit"] != 2 || asked["sample"] != 2 {
					t.Errorf("the SDK client's handlers ran %v, want each twice", asked)
				}
			})
		}
	}
}

// mcpGoAnswers is an mcp-go client's elicitation, sampling and roots
// handlers, counting what they were asked.
type mcpGoAnswers struct {
	mu    sync.Mutex
	asked map[string]int
}

func (a *mcpGoAnswers) count(kind string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.asked[kind]++
}

func (a *mcpGoAnswers) Elicit(_ context.Context, r mcpgo.ElicitationRequest) (*mcpgo.ElicitationResult, error) {
	a.count("elicit")
	return &mcpgo.ElicitationResult{ElicitationResponse: mcpgo.ElicitationResponse{Action: mcpgo.ElicitationResponseActionAccept, Content: map[string]any{"name": "Linus (" + r.Params.Message + ")"}}}, nil
}

func (a *mcpGoAnswers) CreateMessage(context.Context, mcpgo.CreateMessageRequest) (*mcpgo.CreateMessageResult, error) {
	a.count("sample")
	return &mcpgo.CreateMessageResult{SamplingMessage: mcpgo.SamplingMessage{Role: mcpgo.RoleAssistant, Content: mcpgo.TextContent{Type: "text", Text: "mcp-go sampled"}}, Model: "mcp-go-model"}, nil
}

func (a *mcpGoAnswers) ListRoots(context.Context, mcpgo.ListRootsRequest) (*mcpgo.ListRootsResult, error) {
	a.count("roots")
	return &mcpgo.ListRootsResult{Roots: []mcpgo.Root{{URI: "file:///mcp-go-root", Name: "mcp-go"}}}, nil
}

// TestQuestionsRealMCPGoClient — bridge 1 with mcp-go's client (v1.2.1),
// pinned to 2025-06-18 and 2025-11-25, over Streamable HTTP and stdio,
// answering elicitation, sampling and roots from a stdio and an HTTP
// upstream through mcpx.
func TestQuestionsRealMCPGoClient(t *testing.T) {
	gw, _ := askGateway(t, askUpstream{ns: "s", rev: "2025-06-18"}, askUpstream{ns: "h", rev: "2025-11-25", http: true})
	for _, tr := range []string{"http", "stdio"} {
		for _, rev := range []string{"2025-06-18", "2025-11-25"} {
			t.Run(tr+"/"+rev, func(t *testing.T) {
				var mt transport.Interface
				if tr == "http" {
					url, hc := serveHTTP(t, gw, rev)
					h, err := transport.NewStreamableHTTP(url, transport.WithHTTPBasicClient(hc))
					if err != nil {
						t.Fatal(err)
					}
					mt = h
				} else {
					r, w := serveStdio(t, gw, rev)
					mt = transport.NewIO(r, w, nil)
				}
				a := &mcpGoAnswers{asked: map[string]int{}}
				cl := client.NewClient(mt, client.WithProtocolVersion(rev), client.WithElicitationHandler(a), client.WithSamplingHandler(a), client.WithRootsHandler(a))
				t.Cleanup(func() { cl.Close() })
				if err := cl.Start(t.Context()); err != nil {
					t.Fatalf("mcp-go Start: %v", err)
				}
				if _, err := cl.Initialize(t.Context(), mcpgo.InitializeRequest{Params: mcpgo.InitializeParams{
					ClientInfo: mcpgo.Implementation{Name: "gatewaytest-mcp-go", Version: "1.0.0"},
				}}); err != nil {
					t.Fatalf("mcp-go Initialize pinned to %s: %v", rev, err)
				}
				want := map[string]string{"elicit": "Linus (Your name?)", "sample": "mcp-go sampled", "roots": "file:///mcp-go-root"}
				for _, ns := range []string{"s", "h"} {
					for _, tool := range []string{"elicit", "sample", "roots"} {
						res, err := cl.CallTool(t.Context(), mcpgo.CallToolRequest{Params: mcpgo.CallToolParams{Name: ns + "__" + tool, Arguments: map[string]any{}}})
						if err != nil {
							t.Errorf("%s__%s: %v", ns, tool, err)
							continue
						}
						text := ""
						if len(res.Content) == 1 {
							if tc, ok := res.Content[0].(mcpgo.TextContent); ok {
								text = tc.Text
							}
						}
						if !strings.Contains(text, want[tool]) {
							t.Errorf("%s__%s: the upstream's tool said %q, want the mcp-go client's answer %q", ns, tool, text, want[tool])
						}
					}
				}
				a.mu.Lock()
				defer a.mu.Unlock()
				if a.asked["elicit"] != 2 || a.asked["sample"] != 2 || a.asked["roots"] != 2 {
					t.Errorf("the mcp-go client's handlers ran %v, want each twice", a.asked)
				}
			})
		}
	}
}
