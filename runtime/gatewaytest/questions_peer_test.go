package gatewaytest

import (
	"context"
	"strings"
	"sync"
	"testing"

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
