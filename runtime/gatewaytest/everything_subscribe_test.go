package gatewaytest

import (
	"context"
	"os"
	"sync"
	"testing"
	"time"

	gosdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestEverythingResourceUpdatesReachGoSDKClients fronts server-everything
// (a legacy upstream on stdio, which sends notifications/resources/updated
// for the URIs its session subscribed to once its
// toggle-subscriber-updates tool is on, then every 5 s) and has Go SDK
// clients subscribe to one of its resources through mcpx: pinned to the
// oldest legacy revision and to 2026-07-28 (whose Subscribe is a
// subscriptions/listen naming the URI), over Streamable HTTP and stdio.
// Each hears the update for the URI as mcpx exposes it. mcpx subscribes
// upstream once for all four; what it sends clients and the server is
// closed-world validated.
func TestEverythingResourceUpdatesReachGoSDKClients(t *testing.T) {
	node, index := everything(t)
	ev := upstream{ns: "everything", rev: everythingRev, cmd: os.Args[0], args: []string{node, index, "stdio"},
		env: map[string]string{envUpstream: "exec:" + everythingRev}}
	ups := []upstream{ev}
	gw, _ := startGateway(t, ups)
	const uri = "mcpx://everything/demo://resource/static/document/features.md"
	revisions := revisionsOf(goSDKClientPeer)
	oldest, modern := revisions[0], "2026-07-28"

	type client struct {
		name    string
		cs      *gosdk.ClientSession
		mu      sync.Mutex
		updated []string
	}
	var clients []*client
	for _, tr := range []string{"http", "stdio"} {
		for _, rev := range []string{oldest, modern} {
			c := &client{name: tr + "/" + rev}
			opts := &gosdk.ClientOptions{ResourceUpdatedHandler: func(_ context.Context, r *gosdk.ResourceUpdatedNotificationRequest) {
				c.mu.Lock()
				c.updated = append(c.updated, r.Params.URI)
				c.mu.Unlock()
			}}
			e, logs := watchedEdge(t, gw)
			var transport gosdk.Transport
			if tr == "http" {
				u, hc := watchedHTTP(t, e, logs, rev)
				transport = &gosdk.StreamableClientTransport{Endpoint: u, HTTPClient: hc, MaxRetries: -1}
			} else {
				r, w := watchedStdio(t, e, logs, rev)
				transport = &gosdk.IOTransport{Reader: r, Writer: w}
			}
			cs, err := gosdk.NewClient(&gosdk.Implementation{Name: "gatewaytest-go-sdk", Version: "1.0.0"}, opts).Connect(t.Context(), transport, &gosdk.ClientSessionOptions{ProtocolVersion: rev})
			if err != nil {
				t.Fatalf("%s: go-sdk Connect: %v", c.name, err)
			}
			t.Cleanup(func() { cs.Close() })
			if caps := cs.InitializeResult(); caps == nil || caps.Capabilities.Resources == nil || !caps.Capabilities.Resources.Subscribe {
				t.Errorf("%s: mcpx did not declare resources.subscribe (server-everything offers it)", c.name)
			}
			if err := cs.Subscribe(t.Context(), &gosdk.SubscribeParams{URI: uri}); err != nil {
				t.Fatalf("%s: Subscribe: %v", c.name, err)
			}
			c.cs = cs
			clients = append(clients, c)
		}
	}
	// The updates are the upstream session's: one toggle, by any client.
	res, err := clients[0].cs.CallTool(t.Context(), &gosdk.CallToolParams{Name: "everything__toggle-subscriber-updates", Arguments: map[string]any{}})
	if err != nil || res.IsError {
		t.Fatalf("toggle-subscriber-updates: %v %v", err, res)
	}
	deadline := time.Now().Add(15 * time.Second) // one at once, then every 5 s
	for _, c := range clients {
		for {
			c.mu.Lock()
			got := append([]string(nil), c.updated...)
			c.mu.Unlock()
			if len(got) > 0 {
				for _, u := range got {
					if u != uri {
						t.Errorf("%s: an update for %q, want only %q", c.name, u, uri)
					}
				}
				break
			}
			if time.Now().After(deadline) {
				t.Errorf("%s: no notifications/resources/updated for %s within 15s", c.name, uri)
				break
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	recs := readRecords(t, ups[0].record)
	if n := sentCount(recs, "resources/subscribe", "demo://resource/static/document/features.md"); n != 1 {
		t.Errorf("mcpx sent server-everything %d resources/subscribe for the resource, want 1 for %d clients", n, len(clients))
	}
}
