package gatewaytest

import (
	"context"
	"strings"
	"sync"
	"testing"

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
				gt := goSDKTransport(t, gw, tr, rev)
				var mu sync.Mutex // the handlers run on the SDK's goroutines
				asked := map[string]int{}
				cl := goSDKNamingClient("gatewaytest-go-sdk", "1.0.0", func(msg string) string { return "Grace (" + msg + ")" }, asked, &mu)
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
						text := goSDKText(res)
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
				a := &mcpGoAnswers{asked: map[string]int{}}
				cl := mcpGoClient(t, gw, tr, rev, "gatewaytest-mcp-go", "1.0.0", a)
				want := map[string]string{"elicit": "Linus (Your name?)", "sample": "mcp-go sampled", "roots": "file:///mcp-go-root"}
				for _, ns := range []string{"s", "h"} {
					for _, tool := range []string{"elicit", "sample", "roots"} {
						res, err := cl.CallTool(t.Context(), mcpgo.CallToolRequest{Params: mcpgo.CallToolParams{Name: ns + "__" + tool, Arguments: map[string]any{}}})
						if err != nil {
							t.Errorf("%s__%s: %v", ns, tool, err)
							continue
						}
						text := mcpGoText(res)
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
