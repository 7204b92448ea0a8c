package gatewaytest

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

	"github.com/mcpx-dev/mcpx/testkit/closedworld"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// serveGoSDKSubber is a Go SDK v1.8.0 server pinned to rev on stdio (mode
// gosdksubber:REV) offering subscriptions to note://a and note://b: the
// SDK keeps who follows what (resources/subscribe from a legacy client,
// a listen's resourceSubscriptions from a 2026-07-28 one), and its touch
// tool sends notifications/resources/updated for a URI to them with
// Server.ResourceUpdated.
func serveGoSDKSubber(rev string) int {
	if rec := os.Getenv(envRecord); rec != "" {
		os.Setenv(envRecord, fmt.Sprintf("%s.%d", rec, os.Getpid())) // a record of each process
	}
	s := goSDKSubber(rev)
	// crash exits at once (the test of restarts): on stdio only, where the
	// server is a process of its own.
	sdk.AddTool(s, &sdk.Tool{Name: "crash", Description: "Exits."},
		func(context.Context, *sdk.CallToolRequest, struct{}) (*sdk.CallToolResult, any, error) {
			os.Exit(3)
			return nil, nil, nil
		})
	if err := s.Run(context.Background(), &sdk.IOTransport{Reader: recordedStdin(nil), Writer: nopCloser{os.Stdout}}); err != nil && err != io.EOF {
		fmt.Fprintln(os.Stderr, "gosdksubber:", err)
	}
	return 0
}

// goSDKSubber is the Go SDK server serveGoSDKSubber runs.
func goSDKSubber(rev string) *sdk.Server {
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
	return s
}

// goSDKSubberHTTP serves goSDKSubber(rev) over Streamable HTTP and
// returns its URL and what mcpx POSTed it, each checked closed-world when
// the test ends.
func goSDKSubberHTTP(t *testing.T, rev string) (string, func() []string) {
	v, err := closedworld.Default()
	if err != nil {
		t.Fatalf("closed-world validator: %v (run `make schemas`)", err)
	}
	s := goSDKSubber(rev)
	// A 2026-07-28 server has no sessions (as TestMRTRGoSDKUpstream's).
	h := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return s }, &sdk.StreamableHTTPOptions{Stateless: rev == "2026-07-28"})
	var mu sync.Mutex
	var bodies []string
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
	sent := func() []string { mu.Lock(); defer mu.Unlock(); return slices.Clone(bodies) }
	t.Cleanup(func() {
		srv.CloseClientConnections()
		srv.Close()
		for _, b := range sent() {
			if got, err := checkToUpstream(v, rev, []byte(b)); err != nil {
				t.Errorf("mcpx sent the Go SDK HTTP upstream (%s): %v in %s", got, err, b)
			}
		}
	})
	return srv.URL, sent
}

// TestGoSDKUpstreamsResourceUpdatesReachGoSDKClients: Go SDK servers
// pinned to 2025-11-25 (legacy: resources/subscribe, updates on stdio or
// the session's GET stream) and 2026-07-28 (modern:
// subscriptions/listen), on stdio and over Streamable HTTP, behind mcpx;
// Go SDK clients pinned to the same two over Streamable HTTP and stdio. Every client subscribes to
// note://a of both upstreams; each touch reaches every client once, its
// URI exposed, and nothing of note://b, which no one follows. Then every
// client unsubscribes: mcpx sends the legacy upstream one
// resources/unsubscribe and ends its listen at the modern one with
// notifications/cancelled naming it (stdio), and a touch reaches no one.
func TestGoSDKUpstreamsResourceUpdatesReachGoSDKClients(t *testing.T) {
	type up struct {
		ns, rev string
		sent    func() []string
	}
	var ups []up
	dir := t.TempDir()
	servers := map[string]any{}
	var checks []func()
	for _, rev := range []string{"2025-11-25", "2026-07-28"} {
		ns, rec := "g"+flat(rev), filepath.Join(dir, "g"+flat(rev)+".in")
		servers[ns] = map[string]any{"command": os.Args[0], "env": map[string]string{envUpstream: "gosdksubber:" + rev, envRecord: rec,
			"GORACE": strings.TrimSpace(os.Getenv("GORACE") + " atexit_sleep_ms=0")}}
		ups = append(ups, up{ns, rev, func() []string { return processRecords(t, rec) }})
		checks = append(checks, func() { checkProcessWires(t, ns, rev, rec) })
		url, sent := goSDKSubberHTTP(t, rev)
		servers["h"+flat(rev)] = map[string]any{"url": url}
		ups = append(ups, up{"h" + flat(rev), rev, sent})
	}
	data, _ := json.Marshal(map[string]any{"mcpServers": servers})
	gw, _ := readyGateway(t, "gosdk-subs.json", string(data), "", func() {
		for _, c := range checks {
			c()
		}
	})
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
	for _, u := range ups {
		if u.rev != "2026-07-28" {
			eventually(t, "mcpx did not unsubscribe the legacy upstream "+u.ns, func() bool {
				return sentCount(u.sent(), "resources/unsubscribe", "note://a") == 1
			})
		}
	}
	// Over HTTP a listen ends with its stream, which the Go SDK server
	// frees (the touch below then reaches no one); on stdio by
	// notifications/cancelled.
	eventually(t, "mcpx did not end its listen at the modern stdio upstream", func() bool {
		var listen string
		for _, r := range ups[2].sent() { // g20260728
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

// checkProcessWires checks what mcpx sent each process that recorded to
// rec (checkUpstreamWire), each a connection of its own.
func checkProcessWires(t *testing.T, ns, rev, rec string) {
	t.Helper()
	files, _ := filepath.Glob(rec + ".*")
	if len(files) == 0 {
		t.Errorf("upstream %s: mcpx sent it nothing", ns)
	}
	for _, f := range files {
		checkUpstreamWire(t, upstream{ns: ns, rev: rev, record: f})
	}
}

// TestModernUpstreamFollowedAgainAfterRestart: a 2026-07-28 Go SDK
// upstream on stdio that exits is restarted, and mcpx opens a listen for
// what its clients still follow there again; the new process's update
// reaches a legacy client and a 2026-07-28 one.
func TestModernUpstreamFollowedAgainAfterRestart(t *testing.T) {
	dir := t.TempDir()
	rec := filepath.Join(dir, "g.in")
	data, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{"g": map[string]any{"command": os.Args[0],
		"env": map[string]string{envUpstream: "gosdksubber:2026-07-28", envRecord: rec, "GORACE": strings.TrimSpace(os.Getenv("GORACE") + " atexit_sleep_ms=0")}}}})
	gw, _ := readyGateway(t, "gosdk-restart.json", string(data), "", func() { checkProcessWires(t, "g", "2026-07-28", rec) })
	const uri = "mcpx://g/note://a"
	for _, tr := range []string{"http", "stdio"} {
		t.Run(tr, func(t *testing.T) {
			legacy := newSubClient(t, gw, tr, "2025-11-25")
			if code, msg := errorOf(legacy.subscribe(uri)); code != 0 {
				t.Fatalf("subscribe: %d %s", code, msg)
			}
			modern := newSubClient(t, gw, tr, "2026-07-28")
			id, stop, _ := modern.listen(uri)
			defer stop()
			listens := func() int { // those following note://a
				n := 0
				for _, r := range processRecords(t, rec) {
					if strings.Contains(r, `"subscriptions/listen"`) && strings.Contains(r, `"note://a"`) {
						n++
					}
				}
				return n
			}
			before := listens()
			legacy.request("tools/call", `{"name":"g__crash","arguments":{}}`) // fails: the upstream exited
			eventually(t, "mcpx did not listen again after g restarted", func() bool { return listens() > before })
			eventually(t, "no update after the restart", func() bool {
				legacy.request("tools/call", `{"name":"g__touch","arguments":{"uri":"note://a"}}`) // fails while g is down
				time.Sleep(50 * time.Millisecond)
				return len(legacy.updates()) > 0 && len(modern.updates()) > 0
			})
			for _, c := range []*subClient{legacy, modern} {
				for _, u := range c.updates() {
					if want := (update{uri, map[bool]string{true: id}[c.modern]}); u != want {
						t.Errorf("%s client: update %v, want %v", c.rev, u, want)
					}
				}
			}
		})
	}
}
