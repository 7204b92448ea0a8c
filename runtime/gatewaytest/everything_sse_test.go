package gatewaytest

import (
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mcpx-dev/mcpx/generated/mcp"
	"github.com/mcpx-dev/mcpx/runtime/gateway"
	"github.com/mcpx-dev/mcpx/testkit/revs"
	"github.com/mcpx-dev/mcpx/testkit/wiretest"
)

// startEverythingSSE runs server-everything on the 2024-11-05 HTTP+SSE
// transport (`index.js sse`: GET /sse, POST /message) on a free loopback
// port, and returns its SSE URL once it listens. testdata/loopback.cjs
// keeps it off every other interface.
func startEverythingSSE(t *testing.T, node, index string) string {
	t.Helper()
	return startEverythingOn(t, node, index, "sse", "Server is running", "/sse")
}

// startEverythingOn runs server-everything with transport (an argument
// of index.js) on a free loopback port and returns its URL, path, once it
// has said ready.
func startEverythingOn(t *testing.T, node, index, transport, ready, path string) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	preload, err := filepath.Abs(filepath.Join("testdata", "loopback.cjs"))
	if err != nil {
		t.Fatal(err)
	}
	var stderr wiretest.LockedBuffer
	cmd := exec.Command(node, "--require", preload, index, transport)
	cmd.Env = append(os.Environ(), "PORT="+strconv.Itoa(port))
	cmd.Stdout, cmd.Stderr = &stderr, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-exited
		if t.Failed() {
			t.Logf("server-everything (%s) wrote:\n%s", transport, stderr.String())
		}
	})
	deadline := time.Now().Add(30 * time.Second)
	for !strings.Contains(stderr.String(), ready) {
		select {
		case <-exited:
			t.Fatalf("server-everything %s exited before listening:\n%s", transport, stderr.String())
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("server-everything %s did not listen within 30s:\n%s", transport, stderr.String())
		}
	}
	return fmt.Sprintf("http://127.0.0.1:%d%s", port, path)
}

// TestEverythingSSE fronts server-everything on the 2024-11-05 HTTP+SSE
// transport ("type": "sse"), which serves no Streamable HTTP at all (a
// POST to /sse is 404), and runs a client of every revision through the
// gateway: the legacy ones with the go-sdk or mcp-go client pinned to it
// (tools/list, tools/call, resources/read, prompts/get, completion), the
// modern one as raw 2026-07-28 requests. mcpx must find the revision by
// initialize, as for its other transports. What mcpx sends each client is
// closed-world validated.
func TestEverythingSSE(t *testing.T) {
	node, index := everything(t)
	doc, err := os.ReadFile(filepath.Join(filepath.Dir(index), "docs", "features.md"))
	if err != nil {
		t.Fatalf("server-everything's docs/features.md, which it serves: %v", err)
	}
	sseURL := startEverythingSSE(t, node, index)
	gw, logs := readyGateway(t, "sse.json", `{"mcpServers": {"everything": {"type": "sse", "url": "`+sseURL+`", "mcpx": {"timeout": "30s"}}}}`, "", nil)
	ev := upstream{
		ns: "everything", rev: everythingRev,
		tool: "echo", toolArgs: map[string]any{"message": "through SSE ✓"}, wantTool: "Echo: through SSE ✓",
		uri: "demo://resource/static/document/features.md", wantRead: string(doc),
		prompt: "args-prompt", promptArgs: map[string]string{"city": "Paris"}, wantPrompt: "What's weather in Paris?",
		complPrompt: "completable-prompt", complArg: "department", complValue: "E", wantCompl: []string{"Engineering"},
	}
	ups := []upstream{ev}
	checkConnected(t, logs, ups)
	for _, rev := range revs.All() {
		rev := string(rev)
		t.Run("client at "+rev, func(t *testing.T) {
			t.Parallel()
			if revs.IsModern(rev) {
				modernThroughEverything(t, gw, ev)
				return
			}
			client := ""
			for _, c := range []string{goSDK, mcpGo} {
				for _, r := range revisionsOf(clientPeers[c]) {
					if r == rev && client == "" {
						client = c
					}
				}
			}
			if client == "" {
				t.Fatalf("no client peer speaks %s", rev)
			}
			var conn connection
			conn.url, conn.http = serveHTTP(t, gw, rev)
			exercise(t, connect(t, client, rev, conn), rev, ups)
		})
	}
}

// modernThroughEverything lists, calls and reads through gw as a
// 2026-07-28 client.
func modernThroughEverything(t *testing.T, gw *gateway.Gateway, ev upstream) {
	c := newModernClient(t, gw, "http")
	tool := ev.ns + "__" + ev.tool
	list := c.sendParams(mcp.MethodToolsList, "", "{"+modernMeta+"}")
	var tools struct {
		Result struct{ Tools []struct{ Name string } } `json:"result"`
	}
	if err := json.Unmarshal([]byte(list.raw), &tools); err != nil {
		t.Fatal(err)
	}
	found := false
	for _, x := range tools.Result.Tools {
		found = found || x.Name == tool
	}
	if !found {
		t.Errorf("tools/list has no %s: %.500s", tool, list.raw)
	}
	args, _ := json.Marshal(ev.toolArgs)
	params := fmt.Sprintf(`{%s,"name":%q,"arguments":%s`, modernMeta, tool, args)
	call := c.sendParams(mcp.MethodToolsCall, tool, params+"}")
	// server-everything asks the client for its roots once connected; on a
	// legacy transport the question is tied to no call, and when it comes
	// while this one is in flight, this call carries it (input_required).
	// Answer it as a client would (no roots) and retry.
	for round := 0; round < 3 && call.Result != nil && call.Result.ResultType == "input_required"; round++ {
		responses := map[string]json.RawMessage{}
		for key, q := range call.Result.InputRequests {
			var ask struct{ Method string }
			if err := json.Unmarshal(q, &ask); err != nil || ask.Method != "roots/list" {
				t.Fatalf("tools/call %s asked %s; want only roots/list", tool, q)
			}
			responses[key] = json.RawMessage(`{"roots":[]}`)
		}
		r, _ := json.Marshal(responses)
		state := ""
		if call.Result.RequestState != nil {
			state = fmt.Sprintf(`,"requestState":%q`, *call.Result.RequestState)
		}
		call = c.sendParams(mcp.MethodToolsCall, tool, params+state+`,"inputResponses":`+string(r)+"}")
	}
	if got := text(call); got != ev.wantTool {
		t.Errorf("tools/call %s: %q, want %q (%.500s)", tool, got, ev.wantTool, call.raw)
	}
	uri := gateway.ExposedURI(ev.ns, ev.uri)
	read := c.sendParams(mcp.MethodResourcesRead, uri, fmt.Sprintf(`{%s,"uri":%q}`, modernMeta, uri))
	if read.Result == nil || len(read.Result.Contents) != 1 || read.Result.Contents[0].Text != ev.wantRead {
		t.Errorf("resources/read %s: %.300s", uri, read.raw)
	}
}
