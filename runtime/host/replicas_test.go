package host_test

// Replicas on one shared state (issue 19): each replica its own gateway,
// its own upstream (a Go SDK server over Streamable HTTP, as a stdio
// upstream is each replica's own) and its own HTTP endpoint, sharing one
// cluster: a real redis-server, miniredis, or the in-memory hub. Every
// request of a client lands on another replica than the last.

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	hub "github.com/mcpx-dev/mcpx/generated/mcp"
	"github.com/mcpx-dev/mcpx/runtime/auth"
	"github.com/mcpx-dev/mcpx/runtime/cluster"
	"github.com/mcpx-dev/mcpx/runtime/gateway"
	"github.com/mcpx-dev/mcpx/runtime/host"
	"github.com/mcpx-dev/mcpx/runtime/internal/redistest"
	"github.com/mcpx-dev/mcpx/runtime/requeststate"
	"github.com/mcpx-dev/mcpx/runtime/upstream"
)

// replica is one mcpx replica of a test.
type replica struct {
	url string
	g   *gateway.Gateway
	up  *sdk.Server // its own upstream
	// cancelled hears the name askhold was answered with when its call
	// upstream is cancelled.
	cancelled <-chan string
	stop      func() // stops it: its endpoint, gateway and bus
}

// backend makes the cluster of each replica of one test.
type backend func(t testing.TB) func() *cluster.Cluster

func memoryBackend(t testing.TB) func() *cluster.Cluster {
	h, recs := cluster.NewHub(), &cluster.MemoryRecords{}
	return func() *cluster.Cluster {
		return &cluster.Cluster{Bus: h.Join(cluster.NewID(), 5*time.Second), Records: recs, Shared: true}
	}
}

func redisBackend(addr string) func() *cluster.Cluster {
	return func() *cluster.Cluster {
		c, err := cluster.Open("redis://"+addr, slog.New(slog.DiscardHandler))
		if err != nil {
			panic(err)
		}
		return c
	}
}

func miniredisBackend(t testing.TB) func() *cluster.Cluster {
	return redisBackend(miniredis.RunT(t).Addr())
}

func redisServerBackend(t testing.TB) func() *cluster.Cluster {
	return redisBackend(redistest.Server(t))
}

var backends = []struct {
	name string
	new  backend
}{
	{"memory", memoryBackend},
	{"miniredis", miniredisBackend},
	{"redis-server", redisServerBackend},
}

// eachBackend runs f on every backend.
func eachBackend(t *testing.T, f func(t *testing.T, join func() *cluster.Cluster)) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) { f(t, b.new(t)) })
	}
}

// askerUpstream is a 2025-11-25 Go SDK server with a plain tool (greet)
// and ones asking the client's name (ask, askmore, askhold) during their
// call; askhold's call, cancelled, sends the name on cancelled.
func askerUpstream(cancelled chan<- string) *sdk.Server {
	s := sdk.NewServer(&sdk.Implementation{Name: "replica-upstream", Version: "1"}, &sdk.ServerOptions{SupportedProtocolVersions: []string{"2025-11-25"},
		SubscribeHandler:   func(context.Context, *sdk.SubscribeRequest) error { return nil },
		UnsubscribeHandler: func(context.Context, *sdk.UnsubscribeRequest) error { return nil }})
	s.AddResource(&sdk.Resource{Name: "doc", URI: "test://doc", MIMEType: "text/plain"}, func(_ context.Context, req *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
		return &sdk.ReadResourceResult{Contents: []*sdk.ResourceContents{{URI: req.Params.URI, Text: "v1"}}}, nil
	})
	type none struct{}
	text := func(s string) *sdk.CallToolResult {
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: s}}}
	}
	sdk.AddTool(s, &sdk.Tool{Name: "greet", Description: "Says hello."}, func(context.Context, *sdk.CallToolRequest, none) (*sdk.CallToolResult, any, error) {
		return text("hello"), nil, nil
	})
	askName := func(ctx context.Context, req *sdk.CallToolRequest) (string, error) {
		r, err := req.Session.Elicit(ctx, &sdk.ElicitParams{Message: "Your name?",
			RequestedSchema: map[string]any{"type": "object", "properties": map[string]any{"name": map[string]any{"type": "string"}}}})
		if err != nil {
			return "", err
		}
		return fmt.Sprint(r.Content["name"]), nil
	}
	sdk.AddTool(s, &sdk.Tool{Name: "ask", Description: "Asks your name."}, func(ctx context.Context, req *sdk.CallToolRequest, _ none) (*sdk.CallToolResult, any, error) {
		name, err := askName(ctx, req)
		if err != nil {
			return text("asking failed: " + err.Error()), nil, nil
		}
		return text("hello " + name), nil, nil
	})
	// askmore, once answered, reports progress (with the call's token),
	// logs at debug and at info, and answers; with hold, it then waits
	// for its call to be cancelled instead, and tells cancelled.
	more := func(hold bool) sdk.ToolHandlerFor[none, any] {
		return func(ctx context.Context, req *sdk.CallToolRequest, _ none) (*sdk.CallToolResult, any, error) {
			name, err := askName(ctx, req)
			if err != nil {
				return text("asking failed: " + err.Error()), nil, nil
			}
			if tok := req.Params.GetProgressToken(); tok != nil {
				_ = req.Session.NotifyProgress(ctx, &sdk.ProgressNotificationParams{ProgressToken: tok, Progress: 1, Total: 2, Message: "answered by " + name})
			}
			_ = req.Session.Log(ctx, &sdk.LoggingMessageParams{Level: "debug", Logger: "askmore", Data: "debug from " + name})
			_ = req.Session.Log(ctx, &sdk.LoggingMessageParams{Level: "info", Logger: "askmore", Data: "info from " + name})
			if hold {
				<-ctx.Done()
				select {
				case cancelled <- name:
				default:
				}
				return text("cancelled"), nil, nil
			}
			return text("hello " + name), nil, nil
		}
	}
	sdk.AddTool(s, &sdk.Tool{Name: "askmore", Description: "Asks your name, then reports progress and logs."}, more(false))
	sdk.AddTool(s, &sdk.Tool{Name: "askhold", Description: "Asks your name, reports progress, and runs until cancelled."}, more(true))
	return s
}

// startReplica serves one replica on c, sealing states under states, with
// a (nil: none).
func startReplica(t testing.TB, c *cluster.Cluster, states *requeststate.Sealer, a *auth.Authenticator) *replica {
	t.Helper()
	log := slog.New(slog.DiscardHandler)
	cancelled := make(chan string, 1)
	up := askerUpstream(cancelled)
	srv := httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return up }, nil))
	info := hub.Implementation{Name: "mcpx", Version: "test"}
	g := gateway.New(log)
	g.States, g.Replica = states, c.Bus.ID()
	prefix := ""
	if err := g.Add(upstream.New(upstream.Spec{Name: "up", URL: srv.URL}, info, log), gateway.Options{Prefix: &prefix}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	urls := make(chan string, 1)
	done := make(chan error, 1)
	go func() {
		done <- host.HTTP(ctx, host.Config{NS: g, Info: info, Log: log, Auth: a, Cluster: c}, "127.0.0.1:0", func(u string) { urls <- u })
	}()
	stopped := false
	stop := func() {
		if stopped {
			return
		}
		stopped = true
		cancel()
		<-done
		g.Close()
		c.Close()
		// The SDK's handler of a question still waiting for mcpx's answer
		// does not end with its connection: Close would wait for it.
		srv.CloseClientConnections()
		go srv.Close()
	}
	t.Cleanup(stop)
	select {
	case u := <-urls:
		return &replica{url: u, g: g, up: up, cancelled: cancelled, stop: stop}
	case err := <-done:
		t.Fatal(err)
	case <-time.After(10 * time.Second):
		t.Fatal("not serving")
	}
	return nil
}

func startReplicas(t testing.TB, n int, join func() *cluster.Cluster, a *auth.Authenticator) []*replica {
	states := requeststate.Random() // the shared mcpx.stateKey
	var rs []*replica
	for range n {
		rs = append(rs, startReplica(t, join(), states, a))
	}
	return rs
}

// sse reads the data lines of a held SSE stream into a channel.
func sse(t *testing.T, url, sid, token string) (<-chan string, func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Mcp-Session-Id", sid)
	req.Header.Set("MCP-Protocol-Version", "2025-06-18")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		cancel()
		t.Fatalf("GET: %d %s", resp.StatusCode, b)
	}
	lines := make(chan string, 16)
	go func() {
		defer close(lines)
		defer resp.Body.Close()
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			if d, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
				lines <- d
			}
		}
	}()
	t.Cleanup(cancel)
	return lines, cancel
}

func sessionHeaders(sid string) map[string]string {
	return map[string]string{"Mcp-Session-Id": sid, "MCP-Protocol-Version": "2025-06-18"}
}

// TestLegacySessionAcrossReplicas: a 2025-06-18 client whose every request
// lands on another of three replicas: initialize on A, tools/list on B, a
// call on C, the GET stream on A hearing a list change only B's upstream
// made, DELETE on B ending the session (and A's stream) everywhere.
func TestLegacySessionAcrossReplicas(t *testing.T) {
	eachBackend(t, func(t *testing.T, join func() *cluster.Cluster) {
		rs := startReplicas(t, 3, join, nil)
		a, b, c := rs[0], rs[1], rs[2]
		sid := legacySession(t, a.url, "")

		st, _, msg := rpc(t, b.url, "", sessionHeaders(sid), `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
		if st != http.StatusOK || !strings.Contains(fmt.Sprint(toolNames(msg)), "greet") {
			t.Fatalf("tools/list on B: %d %v", st, msg)
		}
		st, _, msg = rpc(t, c.url, "", sessionHeaders(sid), `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"greet","arguments":{}}}`)
		if st != http.StatusOK || !strings.Contains(fmt.Sprint(msg["result"]), "hello") {
			t.Fatalf("tools/call on C: %d %v", st, msg)
		}

		stream, _ := sse(t, a.url, sid, "")
		// A session of B's own, for comparison: A's stream must hear B's
		// change as often as a stream on B does (the gateway tells one
		// upstream change as the upstream's notification and as its list
		// changing), no more (B's copy of the session does not forward
		// list changes: every replica tells its own streams), no less.
		local, _ := sse(t, b.url, legacySession(t, b.url, ""), "")
		// The upstreams' first loads are list changes too, told across:
		// let them pass before B's upstream changes.
		for settled := false; !settled; {
			select {
			case <-stream:
			case <-local:
			case <-time.After(300 * time.Millisecond):
				settled = true
			}
		}
		// Only B's own upstream gains a tool; A hears of it over the bus.
		type none struct{}
		sdk.AddTool(b.up, &sdk.Tool{Name: "wave", Description: "Waves."}, func(context.Context, *sdk.CallToolRequest, none) (*sdk.CallToolResult, any, error) {
			return &sdk.CallToolResult{}, nil, nil
		})
		heardA, heardB := 0, 0
		quiet := time.After(10 * time.Second)
	listen:
		for {
			select {
			case d := <-stream:
				if strings.Contains(d, "notifications/tools/list_changed") {
					heardA++
					quiet = time.After(300 * time.Millisecond)
				}
			case d := <-local:
				if strings.Contains(d, "notifications/tools/list_changed") {
					heardB++
					quiet = time.After(300 * time.Millisecond)
				}
			case <-quiet:
				break listen
			}
		}
		if heardA == 0 || heardA != heardB {
			t.Fatalf("B's upstream's tools list change: A's GET stream heard it %d times, a stream on B %d", heardA, heardB)
		}

		// DELETE on B ends it everywhere: A's stream, and every request.
		if st, _, msg := del(t, b.url, sid, ""); st != http.StatusNoContent {
			t.Fatalf("DELETE on B: %d %v", st, msg)
		}
		ended := time.After(10 * time.Second)
	wait:
		for {
			select {
			case _, open := <-stream:
				if !open {
					break wait
				}
			case <-ended:
				t.Fatal("A's GET stream outlived the session's DELETE on B")
			}
		}
		for i, r := range rs {
			if st, _, msg := rpc(t, r.url, "", sessionHeaders(sid), `{"jsonrpc":"2.0","id":9,"method":"tools/list"}`); st != http.StatusNotFound {
				t.Fatalf("replica %d after DELETE: %d %v", i, st, msg)
			}
		}
	})
}

// del sends DELETE for session sid.
func del(t *testing.T, url, sid, token string) (int, http.Header, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodDelete, url, nil)
	req.Header.Set("Mcp-Session-Id", sid)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, string(b)
}

// TestSessionOwnerAcrossReplicas: a session alice made on A does not exist
// for bob on B or C (404 on POST, GET and DELETE), and stays alice's.
func TestSessionOwnerAcrossReplicas(t *testing.T) {
	a, err := auth.New(auth.Config{Tokens: []auth.StaticToken{
		{Name: "alice", SHA256: auth.TokenHash(aliceToken)},
		{Name: "bob", SHA256: auth.TokenHash(bobToken)},
	}})
	if err != nil {
		t.Fatal(err)
	}
	eachBackend(t, func(t *testing.T, join func() *cluster.Cluster) {
		rs := startReplicas(t, 3, join, a)
		sid := legacySession(t, rs[0].url, aliceToken)
		if st, _, msg := rpc(t, rs[1].url, bobToken, sessionHeaders(sid), `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`); st != http.StatusNotFound {
			t.Fatalf("bob's POST on B: %d %v", st, msg)
		}
		if st, _, body := del(t, rs[2].url, sid, bobToken); st != http.StatusNotFound {
			t.Fatalf("bob's DELETE on C: %d %s", st, body)
		}
		req, _ := http.NewRequest(http.MethodGet, rs[1].url, nil)
		req.Header.Set("Accept", "text/event-stream")
		req.Header.Set("Mcp-Session-Id", sid)
		req.Header.Set("Authorization", "Bearer "+bobToken)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusNotFound {
			t.Fatalf("bob's GET on B: %d", resp.StatusCode)
		}
		if st, _, msg := rpc(t, rs[2].url, aliceToken, sessionHeaders(sid), `{"jsonrpc":"2.0","id":3,"method":"tools/list"}`); st != http.StatusOK {
			t.Fatalf("alice's POST on C: %d %v", st, msg)
		}
	})
}

const askMeta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"t","version":"1"},"io.modelcontextprotocol/clientCapabilities":{"elicitation":{"form":{}}}}`

// askCall is a 2026-07-28 tools/call of ask, a retry when state is set.
func askCall(state, responses string) string {
	p := askMeta + `,"name":"ask","arguments":{}`
	if state != "" {
		p += fmt.Sprintf(`,"requestState":%q,"inputResponses":%s`, state, responses)
	}
	return `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{` + p + `}}`
}

// parkAsk calls ask on r and returns the requestState of its question.
func parkAsk(t *testing.T, r *replica, token string) string {
	t.Helper()
	_, _, msg := rpc(t, r.url, token, modernHeaders("tools/call", "ask"), askCall("", ""))
	res, _ := msg["result"].(map[string]any)
	state, _ := res["requestState"].(string)
	if res["resultType"] != "input_required" || state == "" {
		t.Fatalf("ask: want input_required, got %v", msg)
	}
	return state
}

const adaAnswer = `{"mcpx-q1":{"action":"accept","content":{"name":"Ada"}}}`

func resultText(msg map[string]any) string {
	res, _ := msg["result"].(map[string]any)
	content, _ := res["content"].([]any)
	if len(content) == 0 {
		return ""
	}
	c, _ := content[0].(map[string]any)
	s, _ := c["text"].(string)
	return s
}

// TestParkedQuestionAnsweredOnAnotherReplica: a legacy upstream's
// question parked on A (bridge 2) is answered by a retry that lands on B,
// relayed to A over the bus; a retry for a replica that is gone is told
// to start over.
func TestParkedQuestionAnsweredOnAnotherReplica(t *testing.T) {
	eachBackend(t, func(t *testing.T, join func() *cluster.Cluster) {
		rs := startReplicas(t, 2, join, nil)
		a, b := rs[0], rs[1]
		state := parkAsk(t, a, "")
		_, _, msg := rpc(t, b.url, "", modernHeaders("tools/call", "ask"), askCall(state, adaAnswer))
		if got := resultText(msg); got != "hello Ada" {
			t.Fatalf("the retry on B: %v", msg)
		}
		// The same state again, on either replica: its round was used.
		_, _, msg = rpc(t, b.url, "", modernHeaders("tools/call", "ask"), askCall(state, adaAnswer))
		if e, _ := msg["error"].(map[string]any); e == nil || e["code"] != float64(-32602) {
			t.Fatalf("a used state again on B: %v", msg)
		}

		// A is gone: its parked call with it.
		state = parkAsk(t, a, "")
		a.stop()
		_, _, msg = rpc(t, b.url, "", modernHeaders("tools/call", "ask"), askCall(state, adaAnswer))
		e, _ := msg["error"].(map[string]any)
		if e == nil || e["code"] != float64(-32602) || !strings.Contains(fmt.Sprint(e["message"]), "gone") {
			t.Fatalf("a retry for a replica that is gone: %v", msg)
		}
	})
}

// TestParkedQuestionOwnerAcrossReplicas: the relayed retry carries its
// principal: bob's retry of alice's parked question, on B, is refused as
// it would be on A.
func TestParkedQuestionOwnerAcrossReplicas(t *testing.T) {
	a, err := auth.New(auth.Config{Tokens: []auth.StaticToken{
		{Name: "alice", SHA256: auth.TokenHash(aliceToken)},
		{Name: "bob", SHA256: auth.TokenHash(bobToken)},
	}})
	if err != nil {
		t.Fatal(err)
	}
	eachBackend(t, func(t *testing.T, join func() *cluster.Cluster) {
		rs := startReplicas(t, 2, join, a)
		state := parkAsk(t, rs[0], aliceToken)
		_, _, msg := rpc(t, rs[1].url, bobToken, modernHeaders("tools/call", "ask"), askCall(state, adaAnswer))
		if e, _ := msg["error"].(map[string]any); e == nil || e["code"] != float64(-32602) {
			t.Fatalf("bob's retry of alice's question on B: %v", msg)
		}
		_, _, msg = rpc(t, rs[1].url, aliceToken, modernHeaders("tools/call", "ask"), askCall(state, adaAnswer))
		if got := resultText(msg); got != "hello Ada" {
			t.Fatalf("alice's retry on B: %v", msg)
		}
	})
}

var _ = json.Marshal

// TestResourceUpdateReachesStreamOnAnotherReplica: a session subscribes to
// a resource on B while its GET stream is held on A; the update B's
// upstream sends reaches the stream on A over the bus.
func TestResourceUpdateReachesStreamOnAnotherReplica(t *testing.T) {
	eachBackend(t, func(t *testing.T, join func() *cluster.Cluster) {
		rs := startReplicas(t, 2, join, nil)
		a, b := rs[0], rs[1]
		sid := legacySession(t, a.url, "")
		stream, _ := sse(t, a.url, sid, "")
		_, _, msg := rpc(t, b.url, "", sessionHeaders(sid), `{"jsonrpc":"2.0","id":2,"method":"resources/list"}`)
		res, _ := msg["result"].(map[string]any)
		list, _ := res["resources"].([]any)
		if len(list) != 1 {
			t.Fatalf("resources/list on B: %v", msg)
		}
		uri, _ := list[0].(map[string]any)["uri"].(string)
		st, _, msg := rpc(t, b.url, "", sessionHeaders(sid), fmt.Sprintf(`{"jsonrpc":"2.0","id":3,"method":"resources/subscribe","params":{"uri":%q}}`, uri))
		if st != http.StatusOK || msg["error"] != nil {
			t.Fatalf("resources/subscribe on B: %d %v", st, msg)
		}
		// A's subscription to the session's topic may still be on its way
		// (Redis subscribes asynchronously): the update is sent until heard.
		deadline := time.After(10 * time.Second)
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case d := <-stream:
				if strings.Contains(d, "notifications/resources/updated") && strings.Contains(d, uri) {
					return
				}
			case <-tick.C:
				b.up.ResourceUpdated(context.Background(), &sdk.ResourceUpdatedNotificationParams{URI: "test://doc"})
			case <-deadline:
				t.Fatal("the GET stream on A did not hear the update of the resource subscribed on B")
			}
		}
	})
}

// TestSessionsWhileRedisIsDown: with Redis gone, a legacy request whose
// session must be read, and an initialize, are 503 with Retry-After; a
// 2026-07-28 request that needs nothing shared is served; once Redis is
// back, the session is served again without anyone restarting anything.
func TestSessionsWhileRedisIsDown(t *testing.T) {
	m := miniredis.RunT(t)
	rs := startReplicas(t, 2, redisBackend(m.Addr()), nil)
	sid := legacySession(t, rs[0].url, "")
	m.Close()
	for i, body := range []string{
		`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`,
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`,
	} {
		hdr := sessionHeaders(sid)
		if i == 1 {
			hdr = nil
		}
		st, h, msg := rpc(t, rs[1].url, "", hdr, body)
		e, _ := msg["error"].(map[string]any)
		if st != http.StatusServiceUnavailable || h.Get("Retry-After") == "" || e == nil || !strings.Contains(fmt.Sprint(e["message"]), "unavailable") {
			t.Fatalf("request %d with Redis down: %d %v %v", i, st, h, msg)
		}
	}
	_, _, msg := rpc(t, rs[1].url, "", modernHeaders("tools/call", "greet"), `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{`+askMeta+`,"name":"greet","arguments":{}}}`)
	if resultText(msg) != "hello" {
		t.Fatalf("a 2026-07-28 call with Redis down: %v", msg)
	}
	if err := m.Restart(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		st, _, msg := rpc(t, rs[1].url, "", sessionHeaders(sid), `{"jsonrpc":"2.0","id":4,"method":"tools/list"}`)
		if st == http.StatusOK {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after Redis came back: %d %v", st, msg)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
