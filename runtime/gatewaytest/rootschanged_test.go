package gatewaytest

// A legacy client's notifications/roots/list_changed through mcpx (issue
// 12): it reaches the legacy upstreams that client's calls used, and no
// others; from a client that did not declare roots.listChanged it reaches
// none.

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"
)

const rootsChangedMethod = "notifications/roots/list_changed"

// rootsChangedSeen counts the notifications/roots/list_changed in what
// mcpx sent an upstream.
func rootsChangedSeen(sent func() []string) int {
	n := 0
	for _, r := range sent() {
		if strings.Contains(r, `"method":"`+rootsChangedMethod+`"`) {
			n++
		}
	}
	return n
}

// sendRootsChanged sends the client's notification, on its transport.
func (c *askingClient) sendRootsChanged() {
	c.t.Helper()
	body := `{"jsonrpc":"2.0","method":"` + rootsChangedMethod + `"}`
	if c.hc == nil {
		fmt.Fprintln(c.w, body)
		return
	}
	resp := c.post(body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusAccepted {
		c.t.Errorf("POSTing %s: %d, want 202", rootsChangedMethod, resp.StatusCode)
	}
}

// TestRootsChangedReachesTheUpstreamsTheClientUsed: client A (declaring
// roots.listChanged) calls tools of a stdio 2025-06-18 upstream and an
// HTTP 2025-11-25 one, then tells mcpx its roots changed: both get
// notifications/roots/list_changed, a third upstream A never called gets
// nothing. Client B, which declared roots without listChanged, and client
// C, which called nothing, send it too: nobody gets theirs. Over HTTP and
// stdio clients, at 2025-06-18 and 2025-11-25; what mcpx sends the
// upstreams is closed-world checked.
func TestRootsChangedReachesTheUpstreamsTheClientUsed(t *testing.T) {
	gw, _, sent := askGatewayRecords(t, askUpstream{ns: "s", rev: "2025-06-18"}, askUpstream{ns: "h", rev: "2025-11-25", http: true}, askUpstream{ns: "o", rev: "2025-11-25"})
	want := map[string]int{"s": 0, "h": 0, "o": 0}
	for _, tr := range []string{"http", "stdio"} {
		for _, rev := range []string{"2025-06-18", "2025-11-25"} {
			t.Run(tr+"/"+rev, func(t *testing.T) {
				newClient := func(caps string) *askingClient {
					if tr == "http" {
						return newHTTPAskingClient(t, gw, rev, caps)
					}
					return newStdioAskingClient(t, gw, rev, caps)
				}
				// o is running, used by a client that says nothing: that A's
				// notification does not reach it is the rule, not o being down.
				idle := newClient(declaresAll)
				idle.call("o__caps")
				a := newClient(declaresAll)
				b := newClient(`{"roots":{}}`)
				c := newClient(declaresAll)
				a.call("s__caps")
				a.call("h__caps")
				b.call("s__caps")
				b.call("h__caps")

				b.sendRootsChanged()
				c.sendRootsChanged()
				a.sendRootsChanged()
				want["s"]++
				want["h"]++
				deadline := time.Now().Add(5 * time.Second)
				for time.Now().Before(deadline) && (rootsChangedSeen(sent["s"]) < want["s"] || rootsChangedSeen(sent["h"]) < want["h"]) {
					time.Sleep(20 * time.Millisecond)
				}
				time.Sleep(200 * time.Millisecond) // anything more would have come by now
				for _, ns := range []string{"s", "h", "o"} {
					if got := rootsChangedSeen(sent[ns]); got != want[ns] {
						t.Errorf("upstream %s got %d %s in all, want %d (one per client that used it and declared roots.listChanged)", ns, got, rootsChangedMethod, want[ns])
					}
				}
			})
		}
	}
}
