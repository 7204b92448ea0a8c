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
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

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
	// elicit_url asks for a URL-mode elicitation (2025-11-25) under an id
	// of its own; finish says each such elicitation completed.
	var mu sync.Mutex
	var urlIDs []string
	sdk.AddTool(s, &sdk.Tool{Name: "elicit_url", Description: "Sends the user to a URL."},
		func(ctx context.Context, req *sdk.CallToolRequest, _ none) (*sdk.CallToolResult, any, error) {
			mu.Lock()
			id := fmt.Sprintf("sdk-el-%d", len(urlIDs)+1)
			urlIDs = append(urlIDs, id)
			mu.Unlock()
			return answer(req.Session.Elicit(ctx, &sdk.ElicitParams{Mode: "url", Message: "Sign in", URL: "https://example.com/sign-in", ElicitationID: id}))
		})
	sdk.AddTool(s, &sdk.Tool{Name: "finish", Description: "Completes the URL-mode elicitations."},
		func(ctx context.Context, req *sdk.CallToolRequest, _ none) (*sdk.CallToolResult, any, error) {
			mu.Lock()
			ids := append([]string{"sdk-never-asked"}, urlIDs...)
			urlIDs = nil
			mu.Unlock()
			for _, id := range ids {
				if err := req.Session.NotifyElicitationComplete(ctx, &sdk.ElicitationCompleteParams{ElicitationID: id}); err != nil {
					return answer(nil, err)
				}
			}
			return answer(ids, nil)
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
// sent each; those named in asking must have been answered.
func sdkAskerGateway(t *testing.T, asking ...string) *gateway.Gateway {
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
		checkSDKAnswers(t, "s", "2025-06-18", readRecords(t, rec), false, slices.Contains(asking, "s"))
		mu.Lock()
		defer mu.Unlock()
		checkSDKAnswers(t, "h", "2025-11-25", bodies, true, slices.Contains(asking, "h"))
	})
	return gw
}

// checkSDKAnswers validates what mcpx sent an upstream whose request ids
// are the SDK's own (so the method is told by the answer's shape):
// every answer against the result type of the question it answers; for
// HTTP the requests and notifications too. It fails when there is no
// answer at all and asked says there should be.
func checkSDKAnswers(t *testing.T, ns, rev string, recs []string, http, asked bool) {
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
	if answers == 0 && asked {
		t.Errorf("upstream %s: mcpx answered none of its questions", ns)
	}
	t.Logf("upstream %s: %d answers to the SDK server's questions validated", ns, answers)
}

// sdkAnsweringClient is a Go SDK client with handlers for every question,
// counting them.
func sdkAnsweringClient(asked map[string]int, mu *sync.Mutex) *sdk.Client {
	return sdkAnsweringClientWith(asked, mu, sdk.ClientOptions{})
}

// sdkAnsweringClientWith is sdkAnsweringClient with opts besides the
// handlers (capabilities, the completion handler).
func sdkAnsweringClientWith(asked map[string]int, mu *sync.Mutex, opts sdk.ClientOptions) *sdk.Client {
	cl := sdk.NewClient(&sdk.Implementation{Name: "gatewaytest-go-sdk", Version: "1.0.0"}, &sdk.ClientOptions{
		Capabilities:               opts.Capabilities,
		ElicitationCompleteHandler: opts.ElicitationCompleteHandler,
		ElicitationHandler: func(_ context.Context, r *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
			if r.Params.Mode == "url" {
				mu.Lock()
				asked["elicit_url"]++
				mu.Unlock()
				return &sdk.ElicitResult{Action: "accept"}, nil
			}
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
		CreateMessageHandler: goSDKSampler(asked, mu),
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
	gw := sdkAskerGateway(t, "s", "h")
	want := map[string]string{"elicit": `"name":"Grace"`, "sample": `"text":"sdk sampled"`, "roots": `"uri":"file:///sdk-root"`}
	for _, tr := range []string{"http", "stdio"} {
		for _, rev := range []string{"2025-06-18", "2025-11-25", "2026-07-28"} {
			t.Run(tr+"/"+rev, func(t *testing.T) {
				gt := goSDKTransport(t, gw, tr, rev)
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
						text := goSDKText(res)
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

// TestGoSDKElicitationComplete: the Go SDK server (HTTP, 2025-11-25) asks
// for a URL-mode elicitation under its own elicitationId, which a Go SDK
// client pinned to 2025-11-25 (declaring elicitation.url) accepts; a
// second client then calls the server's finish tool, and the server's
// NotifyElicitationComplete (for that id and one never asked with)
// reaches the first client's ElicitationCompleteHandler alone, once, with
// the id it was given. A 2026-07-28 client, asked through input_required,
// is never told. Over Streamable HTTP and stdio.
func TestGoSDKElicitationComplete(t *testing.T) {
	gw := sdkAskerGateway(t, "h")
	urlCaps := &sdk.ClientCapabilities{Elicitation: &sdk.ElicitationCapabilities{Form: &sdk.FormElicitationCapabilities{}, URL: &sdk.URLElicitationCapabilities{}}}
	for _, tr := range []string{"http", "stdio"} {
		t.Run(tr, func(t *testing.T) {
			type client struct {
				cs     *sdk.ClientSession
				mu     sync.Mutex
				asked  map[string]int
				toldMu sync.Mutex
				told   []string
			}
			connect := func(rev string) *client {
				gt := goSDKTransport(t, gw, tr, rev)
				c := &client{asked: map[string]int{}}
				cl := sdkAnsweringClientWith(c.asked, &c.mu, sdk.ClientOptions{Capabilities: urlCaps,
					ElicitationCompleteHandler: func(_ context.Context, r *sdk.ElicitationCompleteNotificationRequest) {
						c.toldMu.Lock()
						c.told = append(c.told, r.Params.ElicitationID)
						c.toldMu.Unlock()
					}})
				cs, err := cl.Connect(t.Context(), gt, &sdk.ClientSessionOptions{ProtocolVersion: rev})
				if err != nil {
					t.Fatalf("go-sdk Connect pinned to %s: %v", rev, err)
				}
				t.Cleanup(func() { cs.Close() })
				c.cs = cs
				return c
			}
			call := func(c *client, tool string) string {
				res, err := c.cs.CallTool(t.Context(), &sdk.CallToolParams{Name: "h__" + tool, Arguments: map[string]any{}})
				if err != nil {
					t.Fatalf("h__%s: %v", tool, err)
				}
				text := ""
				if len(res.Content) == 1 {
					text = res.Content[0].(*sdk.TextContent).Text
				}
				if res.IsError {
					t.Fatalf("h__%s: %s", tool, text)
				}
				return text
			}
			told := func(c *client, wait time.Duration) []string {
				deadline := time.Now().Add(wait)
				for {
					c.toldMu.Lock()
					got := append([]string(nil), c.told...)
					c.toldMu.Unlock()
					if len(got) > 0 || time.Now().After(deadline) {
						return got
					}
					time.Sleep(20 * time.Millisecond)
				}
			}
			asked, other, modern := connect("2025-11-25"), connect("2025-11-25"), connect("2026-07-28")
			if got := call(asked, "elicit_url"); !strings.Contains(got, `"action":"accept"`) {
				t.Fatalf("h__elicit_url: %q", got)
			}
			if got := call(modern, "elicit_url"); !strings.Contains(got, `"action":"accept"`) {
				t.Fatalf("h__elicit_url from the 2026-07-28 client: %q", got)
			}
			finished := call(other, "finish")
			var ids []string
			json.Unmarshal([]byte(finished), &ids)
			if len(ids) != 3 {
				t.Fatalf("h__finish completed %q, want the id never asked with and two", finished)
			}
			if got := told(asked, 5*time.Second); len(got) != 1 || got[0] != ids[1] {
				t.Errorf("the client asked was told of completions %q, want exactly [%s]", got, ids[1])
			}
			if got := told(other, 200*time.Millisecond); len(got) != 0 {
				t.Errorf("the client not asked was told of completions %q", got)
			}
			if got := told(modern, 200*time.Millisecond); len(got) != 0 {
				t.Errorf("the 2026-07-28 client was told of completions %q", got)
			}
			if asked.asked["elicit_url"] != 1 || modern.asked["elicit_url"] != 1 {
				t.Errorf("URL-mode questions asked: %v and %v (2026-07-28), want one each", asked.asked, modern.asked)
			}
		})
	}
}
