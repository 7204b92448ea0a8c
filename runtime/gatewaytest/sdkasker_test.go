package gatewaytest

// Real peers on both sides of a question (issue 12): the official Go SDK
// (v1.8.0) server, as a legacy upstream over stdio (2025-06-18) and
// Streamable HTTP (2025-11-25), whose tools call session.CreateMessage,
// session.Elicit and session.ListRoots during the call, through mcpx to a
// Go SDK client that answers them: legacy clients (bridge 1) and a
// 2026-07-28 client driving input_required rounds (bridge 2). Every
// message mcpx sends clients is closed-world checked (serveHTTP,
// serveStdio), and so is every message it sends the upstream, mcpx's
// answers to the upstream's questions against the question's result type.

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/mcpx-dev/mcpx/generated/mcp"
	"github.com/mcpx-dev/mcpx/generated/revision"
	"github.com/mcpx-dev/mcpx/runtime/gateway"
	"github.com/mcpx-dev/mcpx/testkit/closedworld"
	"github.com/mcpx-dev/mcpx/testkit/wiretest"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// goSDKAsker is a Go SDK server pinned to rev whose tools ask the client
// through the SDK's own session methods and answer with what came back.
func goSDKAsker(rev string) *sdk.Server {
	s := sdk.NewServer(&sdk.Implementation{Name: "gatewaytest-gosdk-asker", Version: "1.0.0"}, &sdk.ServerOptions{SupportedProtocolVersions: []string{rev}})
	answer := func(v any, err error) (*sdk.CallToolResult, any, error) {
		if err != nil {
			return &sdk.CallToolResult{IsError: true, Content: []sdk.Content{&sdk.TextContent{Text: "asking failed: " + err.Error()}}}, nil, nil
		}
		b, _ := json.Marshal(v)
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: string(b)}}}, nil, nil
	}
	type none struct{}
	sdk.AddTool(s, &sdk.Tool{Name: "sample", Description: "Asks the client's model."},
		func(ctx context.Context, req *sdk.CallToolRequest, _ none) (*sdk.CallToolResult, any, error) {
			return answer(req.Session.CreateMessage(ctx, &sdk.CreateMessageParams{MaxTokens: 20,
				Messages: []*sdk.SamplingMessage{{Role: "user", Content: &sdk.TextContent{Text: "Say hi"}}}}))
		})
	sdk.AddTool(s, &sdk.Tool{Name: "elicit", Description: "Asks the user's name."},
		func(ctx context.Context, req *sdk.CallToolRequest, _ none) (*sdk.CallToolResult, any, error) {
			return answer(req.Session.Elicit(ctx, &sdk.ElicitParams{Message: "Your name?",
				RequestedSchema: map[string]any{"type": "object", "properties": map[string]any{"name": map[string]any{"type": "string"}}}}))
		})
	sdk.AddTool(s, &sdk.Tool{Name: "roots", Description: "Lists the client's roots."},
		func(ctx context.Context, req *sdk.CallToolRequest, _ none) (*sdk.CallToolResult, any, error) {
			return answer(req.Session.ListRoots(ctx, nil))
		})
	return s
}

// serveGoSDKAsker is goSDKAsker on stdio (mode gosdkasker:REV).
func serveGoSDKAsker(rev string) int {
	if err := goSDKAsker(rev).Run(context.Background(), &sdk.IOTransport{Reader: recordedStdin(nil), Writer: nopCloser{os.Stdout}}); err != nil && err != io.EOF {
		fmt.Fprintln(os.Stderr, "gosdkasker:", err)
	}
	return 0
}

// sdkAskerGateway fronts a stdio Go SDK asker at 2025-06-18 ("s") and an
// HTTP one at 2025-11-25 ("h"), and checks, when the test ends, what mcpx
// sent each.
func sdkAskerGateway(t *testing.T) *gateway.Gateway {
	t.Helper()
	rec := filepath.Join(t.TempDir(), "s.in")
	var mu sync.Mutex
	var bodies []string
	h := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return goSDKAsker("2025-11-25") }, nil)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			b, _ := io.ReadAll(r.Body)
			mu.Lock()
			bodies = append(bodies, string(b))
			mu.Unlock()
			r.Body = io.NopCloser(strings.NewReader(string(b)))
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	doc, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{
		"s": map[string]any{"command": os.Args[0], "env": map[string]string{envUpstream: "gosdkasker:2025-06-18", envRecord: rec,
			"GORACE": strings.TrimSpace(os.Getenv("GORACE") + " atexit_sleep_ms=0")}},
		"h": map[string]any{"url": srv.URL},
	}})
	gw, _ := readyGateway(t, "sdkasker.json", string(doc), "", func() {
		checkUpstreamWire(t, upstream{ns: "s", rev: "2025-06-18", record: rec})
		checkSDKAnswers(t, "s", "2025-06-18", readRecords(t, rec), false)
		mu.Lock()
		defer mu.Unlock()
		checkSDKAnswers(t, "h", "2025-11-25", bodies, true)
	})
	return gw
}

// checkSDKAnswers validates what mcpx sent an upstream whose request ids
// are the SDK's own (so the method is told by the answer's shape):
// every answer against the result type of the question it answers; for
// HTTP the requests and notifications too. It fails when there is no
// answer at all.
func checkSDKAnswers(t *testing.T, ns, rev string, recs []string, http bool) {
	t.Helper()
	v, err := closedworld.Default()
	if err != nil {
		t.Fatal(err)
	}
	answers := 0
	for _, line := range recs {
		if http {
			if at, err := checkToUpstream(v, rev, []byte(line)); err != nil {
				t.Errorf("upstream %s: mcpx sent (checked at %s):\n%s\n%v", ns, at, line, err)
			}
		}
		var f wiretest.Frame
		if json.Unmarshal([]byte(line), &f) != nil || f.Method != "" || f.Result == nil {
			continue
		}
		var shape map[string]json.RawMessage
		json.Unmarshal(f.Result, &shape)
		method := ""
		switch {
		case shape["model"] != nil:
			method = mcp.MethodSamplingCreateMessage
		case shape["action"] != nil:
			method = mcp.MethodElicitationCreate
		case shape["roots"] != nil:
			method = mcp.MethodRootsList
		default:
			t.Errorf("upstream %s: mcpx answered something that answers no question: %s", ns, line)
			continue
		}
		m, _ := revision.Lookup(mcp.Revision(rev)).Method(method)
		answers++
		if err := v.Validate(rev, m.Result, f.Result); err != nil {
			t.Errorf("upstream %s: mcpx's answer to %s:\n%s\nclosed-world validator (%s %s): %v", ns, method, line, rev, m.Result, err)
		}
	}
	if answers == 0 {
		t.Errorf("upstream %s: mcpx answered none of its questions", ns)
	}
	t.Logf("upstream %s: %d answers to the SDK server's questions validated", ns, answers)
}

// sdkAnsweringClient is a Go SDK client with handlers for every question,
// counting them.
func sdkAnsweringClient(asked map[string]int, mu *sync.Mutex) *sdk.Client {
	cl := sdk.NewClient(&sdk.Implementation{Name: "gatewaytest-go-sdk", Version: "1.0.0"}, &sdk.ClientOptions{
		ElicitationHandler: func(_ context.Context, r *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
			mu.Lock()
			asked["elicit"]++
			mu.Unlock()
			content := map[string]any{"name": "Grace"}
			if props, _ := r.Params.RequestedSchema.(map[string]any)["properties"].(map[string]any); props["number"] != nil {
				// The SDK fills what is not answered from the schema's
				// defaults; server-everything's "number" default, 3.14, is
				// not the integer schema.json's ElicitResult.content allows
				// (2025-06-18, 2025-11-25), so the test answers it.
				content["number"] = 7
			}
			return &sdk.ElicitResult{Action: "accept", Content: content}, nil
		},
		CreateMessageHandler: func(_ context.Context, r *sdk.CreateMessageRequest) (*sdk.CreateMessageResult, error) {
			mu.Lock()
			asked["sample"]++
			mu.Unlock()
			return &sdk.CreateMessageResult{Role: "assistant", Model: "sdk-model", Content: &sdk.TextContent{Text: "sdk sampled"}}, nil
		},
	})
	cl.AddRoots(&sdk.Root{URI: "file:///sdk-root", Name: "sdk"})
	return cl
}

// TestGoSDKServerAsksGoSDKClient: the Go SDK server's session.CreateMessage,
// session.Elicit and session.ListRoots during a call, from a stdio
// (2025-06-18) and an HTTP (2025-11-25) upstream, reach a Go SDK client
// through mcpx and its answers come back into the server's tool result:
// clients pinned to 2025-06-18 and 2025-11-25 (requests on the call's
// stream) and to 2026-07-28 (input_required rounds the SDK client drives
// itself), over Streamable HTTP and stdio.
func TestGoSDKServerAsksGoSDKClient(t *testing.T) {
	gw := sdkAskerGateway(t)
	want := map[string]string{"elicit": `"name":"Grace"`, "sample": `"text":"sdk sampled"`, "roots": `"uri":"file:///sdk-root"`}
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
				for _, ns := range []string{"s", "h"} {
					for _, tool := range []string{"elicit", "sample", "roots"} {
						res, err := cs.CallTool(t.Context(), &sdk.CallToolParams{Name: ns + "__" + tool, Arguments: map[string]any{}})
						if err != nil {
							t.Errorf("%s__%s: %v", ns, tool, err)
							continue
						}
						text := ""
						if len(res.Content) == 1 {
							if tc, ok := res.Content[0].(*sdk.TextContent); ok {
								text = tc.Text
							}
						}
						if res.IsError || !strings.Contains(text, want[tool]) {
							t.Errorf("%s__%s: the SDK server's tool said %q (isError %v), want the SDK client's answer %s", ns, tool, text, res.IsError, want[tool])
						}
					}
				}
				mu.Lock()
				defer mu.Unlock()
				if asked["elicit"] != 2 || asked["sample"] != 2 {
					t.Errorf("the SDK client's handlers ran %v, want elicit and sample twice each", asked)
				}
			})
		}
	}
}
