package gatewaytest

import (
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"
)

// answeredOutside is what mcpx logs when it answers a roots/list no call
// places (rootsout.go).
const answeredOutside = `msg="an upstream's roots/list outside any call is answered for the one client session using it"`

// TestEverythingRootsPerClient: server-everything asks roots/list 350 ms
// after initialized, outside any call, and its get-roots-list tool then
// reports what it got. With "session": "per-client" its process belongs
// to one client session: a session that has given mcpx its roots (here to
// another upstream, the asker of questions_test.go) and then starts its
// server-everything with a quick call (get-env) has that roots/list
// answered by mcpx with those roots, and get-roots-list lists them
// without the client being asked again. Over Streamable HTTP and stdio.
func TestEverythingRootsPerClient(t *testing.T) {
	node, index := everything(t)
	doc, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{
		"everything": map[string]any{"command": os.Args[0], "args": []string{node, index, "stdio"},
			"env":  map[string]string{envUpstream: "exec:" + everythingRev},
			"mcpx": map[string]any{"session": "per-client"}},
		"s": map[string]any{"command": os.Args[0], "env": map[string]string{envUpstream: "asker:2025-11-25"}},
	}})
	gw, logs := readyGateway(t, "everything-roots.json", string(doc), "", nil)
	for _, tr := range []string{"http", "stdio"} {
		t.Run(tr, func(t *testing.T) {
			c := b3Client(t, gw, tr, "2025-11-25", declaresAll)
			if got := c.call("s__roots"); !strings.Contains(got, "file:///work") {
				t.Fatalf("s__roots: %q", got)
			}
			n := strings.Count(logs.String(), answeredOutside)
			c.call("everything__get-env") // starts this session's server-everything
			deadline := time.Now().Add(10 * time.Second)
			for strings.Count(logs.String(), answeredOutside) == n && time.Now().Before(deadline) {
				time.Sleep(20 * time.Millisecond)
			}
			if strings.Count(logs.String(), answeredOutside) != n+1 {
				t.Fatalf("server-everything's roots/list after initialized was not answered outside a call:\n%s", logs.String())
			}
			if got := c.call("everything__get-roots-list"); !strings.Contains(got, "file:///work") {
				t.Errorf("get-roots-list: server-everything said %q, want the session's root", got)
			}
			if q := c.asked(); len(q) != 1 {
				t.Errorf("the client was asked %d questions, want only the asker's roots/list", len(q))
			}
		})
	}
}
