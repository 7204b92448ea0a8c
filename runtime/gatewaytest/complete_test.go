package gatewaytest

// notifications/elicitation/complete through mcpx (issue 12): a 2025-11-25
// upstream's URL-mode elicitation that a legacy client accepted ends, out
// of band, with the upstream's notifications/elicitation/complete naming
// its elicitationId; mcpx tells the client that was asked, under the
// elicitationId that client was given, and nobody else. An id mcpx never
// relayed is dropped.

import (
	"bufio"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mcpx-dev/mcpx/testkit/wiretest"
)

func (c *askingClient) noted(f wiretest.Frame) {
	c.mu.Lock()
	c.notes = append(c.notes, f)
	c.mu.Unlock()
}

// listen opens the HTTP client's GET stream, where notifications that
// belong to no running request come, and notes what arrives on it.
func (c *askingClient) listen() {
	c.t.Helper()
	req, _ := http.NewRequestWithContext(c.t.Context(), http.MethodGet, c.endpoint, nil)
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Mcp-Session-Id", c.sid)
	req.Header.Set("MCP-Protocol-Version", c.rev)
	resp, err := c.hc.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		c.t.Fatalf("GET stream: %d", resp.StatusCode)
	}
	go func() {
		defer resp.Body.Close()
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			if data, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
				var f wiretest.Frame
				if json.Unmarshal([]byte(data), &f) == nil && f.IsNotification() {
					c.noted(f)
				}
			}
		}
	}()
}

// completions waits up to d for the client's notifications/elicitation/
// complete and returns their elicitationIds. A stdio client's output is
// read meanwhile (nothing else is reading it between calls).
func (c *askingClient) completions(d time.Duration) []string {
	deadline := time.After(d)
	for {
		if c.hc == nil {
			select {
			case line, ok := <-c.lines:
				var f wiretest.Frame
				if ok && json.Unmarshal(line, &f) == nil && f.IsNotification() {
					c.noted(f)
				}
				continue
			case <-deadline:
			}
		} else {
			select {
			case <-time.After(20 * time.Millisecond):
				continue
			case <-deadline:
			}
		}
		break
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	var ids []string
	for _, f := range c.notes {
		if f.Method != "notifications/elicitation/complete" {
			continue
		}
		var p struct {
			ID string `json:"elicitationId"`
		}
		json.Unmarshal(f.Params, &p)
		ids = append(ids, p.ID)
	}
	return ids
}

const declaresURL = `{"elicitation":{"form":{},"url":{}}}`

// TestElicitationCompleteReachesTheClientAsked: client A (2025-11-25,
// declaring elicitation.url) calls a URL-mode elicitation tool of a
// 2025-11-25 upstream (stdio and HTTP) and accepts; then client B calls
// the upstream's finish tool, which sends notifications/elicitation/
// complete for an id it never asked with and for A's. A alone is told
// (on its GET stream over HTTP, stdout on stdio), once, with the
// elicitationId it was given; B, whose call carried the upstream's
// notifications, is told nothing. Over both client transports.
func TestElicitationCompleteReachesTheClientAsked(t *testing.T) {
	gw, _ := askGateway(t, askUpstream{ns: "s", rev: "2025-11-25"}, askUpstream{ns: "h", rev: "2025-11-25", http: true})
	for _, tr := range []string{"http", "stdio"} {
		t.Run(tr, func(t *testing.T) {
			newClient := func(caps string) *askingClient {
				if tr == "http" {
					c := newHTTPAskingClient(t, gw, "2025-11-25", caps)
					c.listen()
					return c
				}
				return newStdioAskingClient(t, gw, "2025-11-25", caps)
			}
			a, b := newClient(declaresURL), newClient(declaresURL)
			for _, ns := range []string{"s", "h"} {
				n := len(a.asked())
				if got := a.call(ns + "__elicit_url"); !strings.Contains(got, `"action":"accept"`) {
					t.Fatalf("%s__elicit_url: the upstream's tool said %q, want the client's accept", ns, got)
				}
				q := a.asked()
				if len(q) != n+1 {
					t.Fatalf("%s__elicit_url: the client was asked %d questions, want 1", ns, len(q)-n)
				}
				var p struct {
					Mode string `json:"mode"`
					ID   string `json:"elicitationId"`
				}
				json.Unmarshal(q[n].Params, &p)
				if p.Mode != "url" || !strings.HasPrefix(p.ID, "el-") {
					t.Fatalf("%s__elicit_url: the client was asked %s, want URL mode with the upstream's elicitationId", ns, q[n].Params)
				}
				before := len(a.completions(0))
				if got := b.call(ns + "__finish"); got != "finished" {
					t.Fatalf("%s__finish: %q", ns, got)
				}
				got := a.completions(2 * time.Second)[before:]
				if len(got) != 1 || got[0] != p.ID {
					t.Errorf("%s: the client asked was told of completions %q, want exactly [%s] (the id never asked with is dropped)", ns, got, p.ID)
				}
			}
			if got := b.completions(300 * time.Millisecond); len(got) != 0 {
				t.Errorf("the client that was not asked was told of completions %q", got)
			}
		})
	}
}

// elicitationComplete is the upstream's notification that elicitation id ended.
func elicitationComplete(id string) askerMsg {
	return askerMsg{"jsonrpc": "2.0", "method": "notifications/elicitation/complete", "params": map[string]any{"elicitationId": id}}
}
