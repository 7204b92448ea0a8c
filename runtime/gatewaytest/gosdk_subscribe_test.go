package gatewaytest

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// serveGoSDKSubber is a Go SDK v1.8.0 server pinned to rev on stdio (mode
// gosdksubber:REV) offering subscriptions to note://a and note://b: the
// SDK keeps who follows what (resources/subscribe from a legacy client,
// a listen's resourceSubscriptions from a 2026-07-28 one), and its touch
// tool sends notifications/resources/updated for a URI to them with
// Server.ResourceUpdated.
func serveGoSDKSubber(rev string) int {
	s := sdk.NewServer(&sdk.Implementation{Name: "gatewaytest-gosdk-subber", Version: "1.0.0"}, &sdk.ServerOptions{
		SupportedProtocolVersions: []string{rev},
		SubscribeHandler:          func(context.Context, *sdk.SubscribeRequest) error { return nil },
		UnsubscribeHandler:        func(context.Context, *sdk.UnsubscribeRequest) error { return nil },
	})
	for _, u := range subberNotes {
		s.AddResource(&sdk.Resource{URI: u, Name: u[len("note://"):], MIMEType: "text/plain"},
			func(_ context.Context, req *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
				return &sdk.ReadResourceResult{Contents: []*sdk.ResourceContents{{URI: req.Params.URI, MIMEType: "text/plain", Text: "note"}}}, nil
			})
	}
	type touchIn struct {
		URI string `json:"uri"`
	}
	sdk.AddTool(s, &sdk.Tool{Name: "touch", Description: "Tells the followers of uri it changed."},
		func(ctx context.Context, _ *sdk.CallToolRequest, in touchIn) (*sdk.CallToolResult, any, error) {
			if err := s.ResourceUpdated(ctx, &sdk.ResourceUpdatedNotificationParams{URI: in.URI}); err != nil {
				return nil, nil, err
			}
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "touched " + in.URI}}}, nil, nil
		})
	if err := s.Run(context.Background(), &sdk.IOTransport{Reader: recordedStdin(nil), Writer: nopCloser{os.Stdout}}); err != nil && err != io.EOF {
		fmt.Fprintln(os.Stderr, "gosdksubber:", err)
	}
	return 0
}

// TestGoSDKUpstreamsResourceUpdatesReachGoSDKClients: Go SDK servers
// pinned to 2025-11-25 (legacy: resources/subscribe) and 2026-07-28
// (modern: subscriptions/listen) behind mcpx, Go SDK clients pinned to
// the same two over Streamable HTTP and stdio. Every client subscribes to
// note://a of both upstreams; each touch reaches every client once, its
// URI exposed, and nothing of note://b, which no one follows. Then every
// client unsubscribes: mcpx sends the legacy upstream one
// resources/unsubscribe and ends its listen at the modern one with
// notifications/cancelled naming it (stdio), and a touch reaches no one.
func TestGoSDKUpstreamsResourceUpdatesReachGoSDKClients(t *testing.T) {
	var ups []upstream
	for _, rev := range []string{"2025-11-25", "2026-07-28"} {
		ups = append(ups, upstream{ns: "g" + flat(rev), rev: rev, cmd: os.Args[0], env: map[string]string{envUpstream: "gosdksubber:" + rev}})
	}
	gw, _ := startGateway(t, ups)
	type client struct {
		name    string
		cs      *sdk.ClientSession
		mu      sync.Mutex
		updated map[string]int
	}
	var clients []*client
	for _, tr := range []string{"http", "stdio"} {
		for _, rev := range []string{"2025-11-25", "2026-07-28"} {
			c := &client{name: tr + "/" + rev, updated: map[string]int{}}
			opts := &sdk.ClientOptions{ResourceUpdatedHandler: func(_ context.Context, r *sdk.ResourceUpdatedNotificationRequest) {
				c.mu.Lock()
				c.updated[r.Params.URI]++
				c.mu.Unlock()
			}}
			e, logs := watchedEdge(t, gw)
			var transport sdk.Transport
			if tr == "http" {
				u, hc := watchedHTTP(t, e, logs, rev)
				transport = &sdk.StreamableClientTransport{Endpoint: u, HTTPClient: hc, MaxRetries: -1}
			} else {
				r, w := watchedStdio(t, e, logs, rev)
				transport = &sdk.IOTransport{Reader: r, Writer: w}
			}
			cs, err := sdk.NewClient(&sdk.Implementation{Name: "gatewaytest-go-sdk", Version: "1.0.0"}, opts).Connect(t.Context(), transport, &sdk.ClientSessionOptions{ProtocolVersion: rev})
			if err != nil {
				t.Fatalf("%s: go-sdk Connect: %v", c.name, err)
			}
			t.Cleanup(func() { cs.Close() })
			for _, u := range ups {
				if err := cs.Subscribe(t.Context(), &sdk.SubscribeParams{URI: "mcpx://" + u.ns + "/note://a"}); err != nil {
					t.Fatalf("%s: Subscribe to %s: %v", c.name, u.ns, err)
				}
			}
			c.cs = cs
			clients = append(clients, c)
		}
	}
	for _, u := range ups {
		for _, note := range subberNotes {
			res, err := clients[0].cs.CallTool(t.Context(), &sdk.CallToolParams{Name: u.ns + "__touch", Arguments: map[string]any{"uri": note}})
			if err != nil || res.IsError {
				t.Fatalf("%s__touch: %v %v", u.ns, err, res)
			}
		}
	}
	want := map[string]int{}
	for _, u := range ups {
		want["mcpx://"+u.ns+"/note://a"] = 1
	}
	deadline := time.Now().Add(10 * time.Second)
	for _, c := range clients {
		for {
			c.mu.Lock()
			n := len(c.updated)
			c.mu.Unlock()
			if n >= len(want) || time.Now().After(deadline) {
				break
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	time.Sleep(200 * time.Millisecond)
	for _, c := range clients {
		c.mu.Lock()
		if fmt.Sprint(c.updated) != fmt.Sprint(want) {
			t.Errorf("%s: updates %v, want %v", c.name, c.updated, want)
		}
		clear(c.updated)
		c.mu.Unlock()
	}

	for _, c := range clients {
		for _, u := range ups {
			if err := c.cs.Unsubscribe(t.Context(), &sdk.UnsubscribeParams{URI: "mcpx://" + u.ns + "/note://a"}); err != nil {
				t.Fatalf("%s: Unsubscribe from %s: %v", c.name, u.ns, err)
			}
		}
	}
	legacy, modern := ups[0], ups[1]
	eventually(t, "mcpx did not unsubscribe the legacy upstream", func() bool {
		return sentCount(readRecords(t, legacy.record), "resources/unsubscribe", "note://a") == 1
	})
	eventually(t, "mcpx did not end its listen at the modern upstream", func() bool {
		var listen string
		for _, r := range readRecords(t, modern.record) {
			var f struct {
				ID     json.RawMessage `json:"id"`
				Method string          `json:"method"`
				Params struct {
					RequestID json.RawMessage `json:"requestId"`
				} `json:"params"`
			}
			json.Unmarshal([]byte(r), &f)
			switch {
			case f.Method == "subscriptions/listen" && strings.Contains(r, "note://a"):
				listen = string(f.ID)
			case f.Method == "notifications/cancelled" && listen != "" && string(f.Params.RequestID) == listen:
				return true
			}
		}
		return false
	})
	for _, u := range ups {
		if _, err := clients[0].cs.CallTool(t.Context(), &sdk.CallToolParams{Name: u.ns + "__touch", Arguments: map[string]any{"uri": "note://a"}}); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(300 * time.Millisecond)
	for _, c := range clients {
		c.mu.Lock()
		if len(c.updated) != 0 {
			t.Errorf("%s: updates %v after it unsubscribed", c.name, c.updated)
		}
		c.mu.Unlock()
	}
}
