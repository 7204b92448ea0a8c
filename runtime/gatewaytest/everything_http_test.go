package gatewaytest

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// nodeKeepAlive is how long Node's HTTP server keeps an idle connection
// open (server.keepAliveTimeout's default), which server-everything keeps.
const nodeKeepAlive = 5 * time.Second

// TestEverythingHTTPIdle fronts server-everything on Streamable HTTP and
// calls through it twice, the second time after its idle connections to
// mcpx have passed Node's keep-alive timeout: Node has closed them, and
// mcpx must find that before it sends on one (upstream/h1), not lose the
// call.
func TestEverythingHTTPIdle(t *testing.T) {
	node, index := everything(t)
	doc, err := os.ReadFile(filepath.Join(filepath.Dir(index), "docs", "features.md"))
	if err != nil {
		t.Fatalf("server-everything's docs/features.md, which it serves: %v", err)
	}
	url := startEverythingOn(t, node, index, "streamableHttp", "listening on port", "/mcp")
	gw, logs := readyGateway(t, "http.json", `{"mcpServers": {"everything": {"type": "http", "url": "`+url+`", "mcpx": {"timeout": "30s"}}}}`, "", nil)
	ev := upstream{
		ns: "everything", rev: everythingRev,
		tool: "echo", toolArgs: map[string]any{"message": "through HTTP ✓"}, wantTool: "Echo: through HTTP ✓",
		uri: "demo://resource/static/document/features.md", wantRead: string(doc),
	}
	checkConnected(t, logs, []upstream{ev})
	modernThroughEverything(t, gw, ev)
	time.Sleep(nodeKeepAlive + 700*time.Millisecond)
	modernThroughEverything(t, gw, ev)
}
