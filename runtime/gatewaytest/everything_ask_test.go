package gatewaytest

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestEverythingAsksGoSDKClient: server-everything (the npm reference
// server, over stdio at everythingRev) through mcpx, its
// trigger-sampling-request and trigger-elicitation-request tools called
// by a Go SDK client that answers: pinned to 2025-06-18 and 2025-11-25
// (bridge 1) and to 2026-07-28 (bridge 2: input_required rounds the SDK
// client drives; server-everything itself speaks no 2026-07-28), over
// Streamable HTTP and stdio. The client's answers come back in
// server-everything's tool results. What mcpx sends the client and the
// server is closed-world checked, its answers to the server's questions
// against their result types. To a 2025-06-18 client its elicitation form
// (multi-select enums) is refused -32602, and the client not asked.
//
// Its get-roots-list tool is tested in everything_roots_test.go: it
// answers from roots it asks for outside any call.
func TestEverythingAsksGoSDKClient(t *testing.T) {
	node, index := everything(t)
	rec := filepath.Join(t.TempDir(), "everything.in")
	doc, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{
		"everything": map[string]any{"command": os.Args[0], "args": []string{node, index, "stdio"},
			"env": map[string]string{envUpstream: "exec:" + everythingRev, envRecord: rec}},
	}})
	gw, _ := readyGateway(t, "everything-ask.json", string(doc), "", func() {
		checkUpstreamWire(t, upstream{ns: "everything", rev: everythingRev, record: rec})
		checkSDKAnswers(t, "everything", everythingRev, readRecords(t, rec), false, true)
	})
	calls := []struct {
		tool string
		args map[string]any
		want []string
	}{
		{"everything__trigger-sampling-request", map[string]any{"prompt": "Say hi", "maxTokens": 10}, []string{"LLM sampling result", "sdk sampled", "sdk-model"}},
		{"everything__trigger-elicitation-request", map[string]any{}, []string{"User provided the requested information", "- Name: Grace"}},
	}
	for _, tr := range []string{"http", "stdio"} {
		for _, rev := range []string{"2025-06-18", "2025-11-25", "2026-07-28"} {
			t.Run(tr+"/"+rev, func(t *testing.T) {
				var gt sdk.Transport
				if tr == "http" {
					url, hc := serveHTTP(t, gw, rev)
					gt = &sdk.StreamableClientTransport{Endpoint: url, HTTPClient: hc, MaxRetries: -1}
				} else {
					r, w := serveStdio(t, gw, rev)
					gt = &sdk.IOTransport{Reader: r, Writer: w}
				}
				var mu sync.Mutex
				asked := map[string]int{}
				cs, err := sdkAnsweringClient(asked, &mu).Connect(t.Context(), gt, &sdk.ClientSessionOptions{ProtocolVersion: rev})
				if err != nil {
					t.Fatalf("go-sdk Connect pinned to %s: %v", rev, err)
				}
				defer cs.Close()
				for _, c := range calls {
					res, err := cs.CallTool(t.Context(), &sdk.CallToolParams{Name: c.tool, Arguments: c.args})
					if rev == "2025-06-18" && strings.HasSuffix(c.tool, "elicitation-request") {
						// Its form has a multi-select enum, which
						// 2025-06-18 cannot express: mcpx refuses the
						// question (-32602 naming the field) rather than
						// send an invalid form, and the client is not asked.
						refusal := `field "titledMultipleSelectEnum" is a multi-select enum`
						if err == nil && res.IsError {
							for _, b := range res.Content {
								if tc, ok := b.(*sdk.TextContent); ok && strings.Contains(tc.Text, refusal) {
									err = nil
									res = nil
									break
								}
							}
						}
						if res != nil || (err != nil && !strings.Contains(err.Error(), refusal)) {
							t.Errorf("%s to a 2025-06-18 client: got %+v, %v; want the refusal %q", c.tool, res, err, refusal)
						}
						continue
					}
					var text []string
					for _, b := range res.Content {
						if tc, ok := b.(*sdk.TextContent); ok {
							text = append(text, tc.Text)
						}
					}
					all := strings.Join(text, "\n")
					for _, w := range c.want {
						if res.IsError || !strings.Contains(all, w) {
							t.Errorf("%s: server-everything said %q (isError %v), want it to contain %q", c.tool, all, res.IsError, w)
						}
					}
				}
				mu.Lock()
				defer mu.Unlock()
				wantElicit := 1
				if rev == "2025-06-18" {
					wantElicit = 0
				}
				if asked["elicit"] != wantElicit || asked["sample"] != 1 {
					t.Errorf("the SDK client's handlers ran %v, want sample once and elicit %d times", asked, wantElicit)
				}
			})
		}
	}
}
