package gatewaytest

// Following an upstream's task is bounded (issue 13): by the upstream's
// own ttl for the task, capped by the time to live of the client's task
// (mcpx.taskTTL, or a 2025-11-25 client's own ttl), which also bounds a
// call behind no task. Past it the call fails -32603 naming the upstream
// and the task, and the upstream gets tasks/cancel. While it follows, the
// call gives back its in-flight slot: other calls to the upstream go on.

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/mcpx-dev/mcpx/runtime/edge"
	"github.com/mcpx-dev/mcpx/runtime/server"
	"github.com/mcpx-dev/mcpx/runtime/tasks"
	"github.com/mcpx-dev/mcpx/testkit/wiretest"
)

// TestUpstreamTaskFollowLimitUpstreamTTL: a task the upstream keeps 400 ms
// (its ttl) and that never ends fails the call after about that long,
// -32603 naming the upstream, the task and why, and is cancelled upstream.
func TestUpstreamTaskFollowLimitUpstreamTTL(t *testing.T) {
	for _, rev := range []string{"2025-11-25", "2026-07-28"} {
		for _, tr := range []string{"stdio", "http"} {
			t.Run(rev+" upstream over "+tr, func(t *testing.T) {
				gw, u := taskerGateway(t, tr, rev)
				c := legacyTaskClient(t, gw, tr, "2025-06-18")
				start := time.Now()
				got := within(t, 10*time.Second, func() string { return c.call("up__brief") })
				took := time.Since(start)
				want := `error -32603: upstream "up": task "up-task-1" did not end within 400ms (the upstream's ttl for it); mcpx stopped following it and cancelled it`
				if got != want {
					t.Errorf("up__brief answered %q, want %q", got, want)
				}
				if took > 5*time.Second {
					t.Errorf("up__brief took %s, want about its 400 ms ttl", took)
				}
				if !u.waitSeen(t, "cancel up-task-1") {
					t.Errorf("the upstream got no tasks/cancel for the task given up; it saw %q", u.seen(t))
				}
			})
		}
	}
}

// within is f's answer, or the test fails when it takes longer than d.
func within(t *testing.T, d time.Duration, f func() string) string {
	t.Helper()
	got := make(chan string, 1)
	go func() { got <- f() }()
	select {
	case s := <-got:
		return s
	case <-time.After(d):
		t.Fatalf("no answer within %s", d)
		return ""
	}
}

// serveHTTPTasks is serveHTTP with the edge's task settings.
func serveHTTPTasks(t *testing.T, ns server.Namespace, rev string, opts edge.TaskOptions) (string, *http.Client) {
	w := recordHTTP(t, rev)
	logs, log := logBuffer()
	e := &edge.Edge{Server: &server.Server{NS: ns, Info: serverInfo, TTLMs: 60_000}, Log: log, Tasks: opts}
	u := wiretest.ServeHTTP(t, e, w, logs)
	tr := http.DefaultTransport.(*http.Transport).Clone()
	t.Cleanup(tr.CloseIdleConnections)
	return u, &http.Client{Transport: tr}
}

// httpClientOf is an initialized legacy asking client of rev on endpoint.
func httpClientOf(t *testing.T, endpoint string, hc *http.Client, rev string) *askingClient {
	c := &askingClient{t: t, rev: rev, nextID: 10, endpoint: endpoint, hc: hc}
	resp, err := postJSON(t.Context(), hc, endpoint, nil, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":`+fmt.Sprintf(initParams, rev, `{"elicitation":{}}`)+`}`)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if c.sid = resp.Header.Get("Mcp-Session-Id"); c.sid == "" {
		t.Fatalf("initialize: %d, no session id", resp.StatusCode)
	}
	c.post(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	return c
}

// TestUpstreamTaskFollowLimitClientTTL: with mcpx's task TTL at 300 ms, a
// call waiting on an upstream task that never ends (kept 60 s upstream)
// fails after about 300 ms, -32603 saying the client's limit, whether the
// call is behind no task (2025-06-18) or behind the 2025-11-25 client's
// own task; the upstream gets tasks/cancel each time.
func TestUpstreamTaskFollowLimitClientTTL(t *testing.T) {
	for _, rev := range []string{"2025-11-25", "2026-07-28"} {
		t.Run(rev+" upstream", func(t *testing.T) {
			gw, u := taskerGateway(t, "http", rev)
			endpoint, hc := serveHTTPTasks(t, gw, "2025-06-18", edge.TaskOptions{Runner: &tasks.Runner{TTL: 300 * time.Millisecond}})
			c := httpClientOf(t, endpoint, hc, "2025-06-18")
			start := time.Now()
			got := within(t, 10*time.Second, func() string { return oneLine(b3Call(c, "up__forever").final) })
			want := `error -32603: upstream "up": task "up-task-1" did not end within 300ms (the time to live of the client's task, mcpx.taskTTL unless the client gave one); mcpx stopped following it and cancelled it`
			if got != want {
				t.Errorf("up__forever answered %q, want %q", got, want)
			}
			if took := time.Since(start); took > 5*time.Second {
				t.Errorf("up__forever took %s, want about the 300 ms TTL", took)
			}
			if !u.waitSeen(t, "cancel up-task-1") {
				t.Errorf("the upstream got no tasks/cancel for the task given up; it saw %q", u.seen(t))
			}
		})
	}
}

// TestUpstreamTaskFollowFreesSlot: an upstream allowed one call in flight
// (maxInFlight 1, timeout 2 s) still answers a plain call while mcpx
// follows another call's task: the follow does not hold the slot.
func TestUpstreamTaskFollowFreesSlot(t *testing.T) {
	for _, rev := range []string{"2025-11-25", "2026-07-28"} {
		for _, tr := range []string{"stdio", "http"} {
			t.Run(rev+" upstream over "+tr, func(t *testing.T) {
				gw, u := taskerGatewayWith(t, tr, rev, map[string]any{"timeout": "2s", "maxInFlight": 1})
				a := b3Client(t, gw, tr, "2025-06-18", `{}`)
				ctx, stop := context.WithCancel(t.Context())
				defer stop()
				if tr == "http" {
					go func() {
						resp, err := postJSON(ctx, a.hc, a.endpoint, map[string]string{"Mcp-Session-Id": a.sid, "MCP-Protocol-Version": a.rev},
							`{"jsonrpc":"2.0","id":99,"method":"tools/call","params":{"name":"up__forever","arguments":{}}}`)
						if err == nil {
							io.Copy(io.Discard, resp.Body)
							resp.Body.Close()
						}
					}()
				} else {
					s := b3Start(t, a, "up__forever")
					defer s.cancel()
				}
				if !u.waitSeen(t, "call forever") {
					t.Fatal("the upstream never got the call")
				}
				time.Sleep(100 * time.Millisecond) // being followed
				b := legacyTaskClient(t, gw, tr, "2025-06-18")
				if got := b.call("up__plain"); got != "plain plain" {
					t.Errorf("a plain call while another call's task is followed answered %q, want its result", got)
				}
			})
		}
	}
}
