package host_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	hub "github.com/mcpx-dev/mcpx/generated/mcp"
	"github.com/mcpx-dev/mcpx/runtime/auth"
	"github.com/mcpx-dev/mcpx/runtime/config"
	"github.com/mcpx-dev/mcpx/runtime/demo"
	"github.com/mcpx-dev/mcpx/runtime/edge"
	"github.com/mcpx-dev/mcpx/runtime/host"
	"github.com/mcpx-dev/mcpx/runtime/requeststate"
)

// Two static tokens: alice may use echo and introduce, bob everything.
const (
	aliceToken = "alice-0123456789abcdef"
	bobToken   = "bob-0123456789abcdef00"
)

// serveWithAuth serves the demo namespace over HTTP with the two tokens
// and the access rules; it returns the endpoint URL.
func serveWithAuth(t *testing.T) string {
	t.Helper()
	return serveWithAuthTasks(t, edge.TaskOptions{})
}

// serveWithAuthTasks is serveWithAuth with the edge's task settings.
func serveWithAuthTasks(t *testing.T, to edge.TaskOptions) string {
	t.Helper()
	a, err := auth.New(auth.Config{Tokens: []auth.StaticToken{
		{Name: "alice", SHA256: auth.TokenHash(aliceToken)},
		{Name: "bob", SHA256: auth.TokenHash(bobToken)},
	}})
	if err != nil {
		t.Fatal(err)
	}
	pol := &auth.Policy{Rules: []auth.Rule{
		{Principals: []string{"token:alice"}, Tools: []string{"echo", "intro*"}},
		{Principals: []string{"token:bob"}, Tools: []string{"*"}, Prompts: []string{"*"}, Resources: []string{"*"}},
	}}
	states := requeststate.Random()
	ctx, cancel := context.WithCancel(context.Background())
	urls := make(chan string, 1)
	done := make(chan error, 1)
	c := host.Config{NS: demo.NewWith(states), Info: hub.Implementation{Name: "mcpx", Version: "test"}, Auth: a, Access: pol, Tasks: to}
	go func() { done <- host.HTTP(ctx, c, "127.0.0.1:0", func(u string) { urls <- u }) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil && err != context.Canceled {
			t.Errorf("host.HTTP: %v", err)
		}
	})
	select {
	case u := <-urls:
		return u
	case err := <-done:
		t.Fatalf("host.HTTP: %v", err)
	case <-time.After(10 * time.Second):
		t.Fatal("not serving within 10s")
	}
	return ""
}

// rpc posts one JSON-RPC message with token (none when ""); it returns the
// status, the headers and the JSON-RPC message of the answer (from JSON or
// from the SSE stream), or nil.
func rpc(t testing.TB, url, token string, hdr map[string]string, body string) (int, http.Header, map[string]any) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		var last []byte
		sc := bufio.NewScanner(bytes.NewReader(raw))
		for sc.Scan() {
			if d, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
				last = []byte(d)
			}
		}
		raw = last
	}
	var msg map[string]any
	if json.Unmarshal(raw, &msg) != nil {
		msg = nil
	}
	return resp.StatusCode, resp.Header, msg
}

const modernMeta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{"form":{}}}}`

func modernHeaders(method, name string) map[string]string {
	h := map[string]string{"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": method}
	if name != "" {
		h["Mcp-Name"] = name
	}
	return h
}

// legacySession initializes a 2025-06-18 session as token's principal.
func legacySession(t *testing.T, url, token string) string {
	return legacySessionAt(t, url, token, "2025-06-18")
}

// legacySessionAt initializes a session of revision rev.
func legacySessionAt(t *testing.T, url, token, rev string) string {
	t.Helper()
	st, h, msg := rpc(t, url, token, nil, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"`+rev+`","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	sid := h.Get("Mcp-Session-Id")
	if st != 200 || sid == "" || msg["result"] == nil {
		t.Fatalf("initialize: %d %v", st, msg)
	}
	st, _, _ = rpc(t, url, token, map[string]string{"Mcp-Session-Id": sid, "MCP-Protocol-Version": rev}, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	if st != http.StatusAccepted {
		t.Fatalf("initialized: %d", st)
	}
	return sid
}

func toolNames(msg map[string]any) []string {
	res, _ := msg["result"].(map[string]any)
	tools, _ := res["tools"].([]any)
	var names []string
	for _, tl := range tools {
		names = append(names, tl.(map[string]any)["name"].(string))
	}
	slices.Sort(names)
	return names
}

func errorOf(msg map[string]any) (float64, string) {
	e, _ := msg["error"].(map[string]any)
	if e == nil {
		return 0, ""
	}
	code, _ := e["code"].(float64)
	m, _ := e["message"].(string)
	return code, m
}

// TestAuthChallenge: without a token the endpoint is 401 with the
// challenge, and the metadata document is served at both well-known paths
// without one.
func TestAuthChallenge(t *testing.T) {
	url := serveWithAuth(t)
	st, h, _ := rpc(t, url, "", nil, `{"jsonrpc":"2.0","id":1,"method":"ping"}`)
	base := strings.TrimSuffix(url, "/mcp")
	if st != 401 || h.Get("WWW-Authenticate") != `Bearer resource_metadata="`+base+auth.WellKnown+`/mcp"` {
		t.Fatalf("%d %q", st, h.Get("WWW-Authenticate"))
	}
	if st, _, _ := rpc(t, url, "wrong-token-0123456789", nil, `{"jsonrpc":"2.0","id":1,"method":"ping"}`); st != 401 {
		t.Fatalf("a wrong token: %d", st)
	}
	for _, p := range []string{auth.WellKnown, auth.WellKnown + "/mcp"} {
		resp, err := http.Get(base + p)
		if err != nil {
			t.Fatal(err)
		}
		var doc auth.ResourceMetadata
		err = json.NewDecoder(resp.Body).Decode(&doc)
		resp.Body.Close()
		if err != nil || resp.StatusCode != 200 || doc.Resource != url {
			t.Fatalf("%s: %d %+v %v", p, resp.StatusCode, doc, err)
		}
	}
}

// TestAccessFiltersListsAndCalls: each principal lists only its tools, in
// an old revision and the new one, and calling another's tool is answered
// exactly as a tool that does not exist.
func TestAccessFiltersListsAndCalls(t *testing.T) {
	url := serveWithAuth(t)
	for _, rev := range []string{"2025-06-18", "2026-07-28"} {
		t.Run(rev, func(t *testing.T) {
			send := func(token, method, name, params string) map[string]any {
				body := `{"jsonrpc":"2.0","id":2,"method":"` + method + `","params":` + params + `}`
				var hdr map[string]string
				if rev == "2026-07-28" {
					hdr = modernHeaders(method, name)
					body = strings.Replace(body, `"params":{`, `"params":{`+modernMeta+`,`, 1)
					body = strings.Replace(body, `,}`, `}`, 1)
				} else {
					sid := legacySession(t, url, token)
					hdr = map[string]string{"Mcp-Session-Id": sid, "MCP-Protocol-Version": rev}
				}
				st, _, msg := rpc(t, url, token, hdr, body)
				if st != 200 {
					t.Fatalf("%s as %s: HTTP %d %v", method, token, st, msg)
				}
				return msg
			}
			alice := toolNames(send(aliceToken, "tools/list", "", `{}`))
			bob := toolNames(send(bobToken, "tools/list", "", `{}`))
			if !slices.Equal(alice, []string{"echo", "introduce"}) {
				t.Errorf("alice lists %v", alice)
			}
			if len(bob) < 5 || !slices.Contains(bob, "add") {
				t.Errorf("bob lists %v", bob)
			}
			denied := send(aliceToken, "tools/call", "add", `{"name":"add","arguments":{"a":1,"b":2}}`)
			unknown := send(aliceToken, "tools/call", "nope", `{"name":"nope","arguments":{}}`)
			dc, dm := errorOf(denied)
			uc, um := errorOf(unknown)
			if dc == 0 || dc != uc || strings.ReplaceAll(dm, "add", "X") != strings.ReplaceAll(um, "nope", "X") {
				t.Errorf("denied %v, unknown %v: not alike", denied, unknown)
			}
			if res := send(bobToken, "tools/call", "add", `{"name":"add","arguments":{"a":1,"b":2}}`); res["result"] == nil {
				t.Errorf("bob's add: %v", res)
			}
			if code, _ := errorOf(send(aliceToken, "prompts/get", "greeting", `{"name":"greeting","arguments":{"name":"x"}}`)); code == 0 {
				t.Error("alice got a prompt no rule grants her")
			}
		})
	}
}

// TestSessionBelongsToItsPrincipal: another principal presenting a
// session's id finds no such session (404), on POST, GET and DELETE.
func TestSessionBelongsToItsPrincipal(t *testing.T) {
	url := serveWithAuth(t)
	sid := legacySession(t, url, aliceToken)
	hdr := map[string]string{"Mcp-Session-Id": sid, "MCP-Protocol-Version": "2025-06-18"}
	if st, _, _ := rpc(t, url, bobToken, hdr, `{"jsonrpc":"2.0","id":3,"method":"tools/list"}`); st != 404 {
		t.Errorf("bob on alice's session: %d, want 404", st)
	}
	for _, method := range []string{http.MethodGet, http.MethodDelete} {
		req, _ := http.NewRequest(method, url, nil)
		req.Header.Set("Authorization", "Bearer "+bobToken)
		req.Header.Set("Accept", "text/event-stream")
		req.Header.Set("Mcp-Session-Id", sid)
		req.Header.Set("MCP-Protocol-Version", "2025-06-18")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 404 {
			t.Errorf("bob's %s on alice's session: %d, want 404", method, resp.StatusCode)
		}
	}
	if st, _, msg := rpc(t, url, aliceToken, hdr, `{"jsonrpc":"2.0","id":3,"method":"tools/list"}`); st != 200 || msg["result"] == nil {
		t.Errorf("alice's own session after bob tried: %d %v", st, msg)
	}
}

// TestRequestStateBelongsToItsPrincipal: a requestState issued to alice
// does not open for bob's retry (-32602), and does for hers.
func TestRequestStateBelongsToItsPrincipal(t *testing.T) {
	url := serveWithAuth(t)
	call := `{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{` + modernMeta + `,"name":"introduce","arguments":{}}}`
	_, _, msg := rpc(t, url, aliceToken, modernHeaders("tools/call", "introduce"), call)
	res, _ := msg["result"].(map[string]any)
	state, _ := res["requestState"].(string)
	if res["resultType"] != "input_required" || state == "" {
		t.Fatalf("introduce: %v", msg)
	}
	retry := `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{` + modernMeta + `,"name":"introduce","arguments":{},` +
		`"inputResponses":{"name":{"action":"accept","content":{"name":"Ada"}}},"requestState":"` + state + `"}}`
	// bob may call introduce, so only the state's owner tells them apart.
	_, _, msg = rpc(t, url, bobToken, modernHeaders("tools/call", "introduce"), retry)
	if code, m := errorOf(msg); code != -32602 || !strings.Contains(m, "another principal") {
		t.Errorf("bob's retry with alice's state: %v", msg)
	}
	_, _, msg = rpc(t, url, aliceToken, modernHeaders("tools/call", "introduce"), retry)
	if res, _ := msg["result"].(map[string]any); res == nil || !strings.Contains(string(must(json.Marshal(res))), "Ada") {
		t.Errorf("alice's retry: %v", msg)
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// bearer adds a token to every request of a client.
type bearer struct {
	token string
	next  http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.next.RoundTrip(r)
}

// TestGoSDKClientWithBearerToken: the official Go SDK's client, sending a
// bearer token, lists and calls what its principal may.
func TestGoSDKClientWithBearerToken(t *testing.T) {
	url := serveWithAuth(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	client := mcp.NewClient(&mcp.Implementation{Name: "sdk", Version: "1"}, nil)
	tr := &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{Transport: bearer{aliceToken, http.DefaultTransport}}}
	cs, err := client.Connect(ctx, tr, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	lt, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range lt.Tools {
		names = append(names, tl.Name)
	}
	slices.Sort(names)
	if !slices.Equal(names, []string{"echo", "introduce"}) {
		t.Errorf("tools %v", names)
	}
	r, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "hi"}})
	if err != nil || r.IsError {
		t.Fatalf("echo: %v %+v", err, r)
	}
	// Without the token the SDK's connect fails on the 401.
	bare := &mcp.StreamableClientTransport{Endpoint: url}
	if _, err := client.Connect(ctx, bare, nil); err == nil {
		t.Error("connected without a token")
	}
}

// TestUpstreamClientCredentials: a remote server that wants a bearer
// token is reached with mcpx's own, from the client credentials grant of
// its mcpx.oauth block: fetched once, sent on every request.
func TestUpstreamClientCredentials(t *testing.T) {
	var hits atomic.Int32
	tokens := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.ParseForm()
		id, secret, _ := r.BasicAuth()
		if id != "mcpx" || secret != "the-secret" {
			w.WriteHeader(401)
			return
		}
		hits.Add(1)
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"access_token":"`+bobToken+`","token_type":"Bearer","expires_in":3600}`)
	}))
	defer tokens.Close()
	up := serveWithAuth(t) // bob's token is the one the upstream accepts for everything
	cfg, err := config.Parse("f.json", []byte(`{"mcpServers": {"up": {"url": "`+up+`", "mcpx": {"oauth": {
		"tokenUrl": "`+tokens.URL+`", "clientId": "mcpx", "clientSecret": "${SECRET}"}}}}}`),
		func(k string) (string, bool) { return "the-secret", k == "SECRET" })
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	g, err := host.Gateway(ctx, cfg, hub.Implementation{Name: "mcpx", Version: "test"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	tools, err := g.ListTools(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range tools {
		names = append(names, tl.Name)
	}
	if !slices.Contains(names, "up__add") {
		t.Fatalf("tools through the upstream: %v", names)
	}
	if _, err := g.CallTool(ctx, &hub.CallToolRequestParams{Name: "up__add", Arguments: json.RawMessage(`{"a":1,"b":2}`)}); err != nil {
		t.Fatal(err)
	}
	if n := hits.Load(); n != 1 {
		t.Errorf("%d token requests, want 1", n)
	}
}

// TestTaskBelongsToItsPrincipal: a task alice started (a 2025-11-25
// task-augmented call) is not found for bob, on his own session, and is
// for her.
func TestTaskBelongsToItsPrincipal(t *testing.T) {
	url := serveWithAuth(t)
	const rev = "2025-11-25"
	alice := legacySessionAt(t, url, aliceToken, rev)
	bob := legacySessionAt(t, url, bobToken, rev)
	hdr := func(sid string) map[string]string {
		return map[string]string{"Mcp-Session-Id": sid, "MCP-Protocol-Version": rev}
	}
	_, _, msg := rpc(t, url, aliceToken, hdr(alice), `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"text":"x"},"task":{"ttl":60000}}}`)
	res, _ := msg["result"].(map[string]any)
	task, _ := res["task"].(map[string]any)
	id, _ := task["taskId"].(string)
	if id == "" {
		t.Fatalf("no task: %v", msg)
	}
	get := `{"jsonrpc":"2.0","id":3,"method":"tasks/get","params":{"taskId":"` + id + `"}}`
	if _, _, msg := rpc(t, url, bobToken, hdr(bob), get); msg["error"] == nil {
		t.Errorf("bob read alice's task: %v", msg)
	}
	if _, _, msg := rpc(t, url, bobToken, hdr(bob), `{"jsonrpc":"2.0","id":4,"method":"tasks/list","params":{}}`); strings.Contains(fmt.Sprint(msg), id) {
		t.Errorf("bob lists alice's task: %v", msg)
	}
	if _, _, msg := rpc(t, url, aliceToken, hdr(alice), get); msg["result"] == nil {
		t.Errorf("alice's own task: %v", msg)
	}
}

// TestModernTaskBelongsToItsPrincipal: a 2026-07-28 task has no session;
// it belongs to the principal that started it: alice, knowing the id of
// bob's, finds no such task (get, cancel), bob does.
func TestModernTaskBelongsToItsPrincipal(t *testing.T) {
	url := serveWithAuthTasks(t, edge.TaskOptions{After: 20 * time.Millisecond})
	const meta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}}}}`
	_, _, msg := rpc(t, url, bobToken, modernHeaders("tools/call", "countdown"), `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{`+meta+`,"name":"countdown","arguments":{"seconds":2}}}`)
	res, _ := msg["result"].(map[string]any)
	id, _ := res["taskId"].(string)
	if res["resultType"] != "task" || id == "" {
		t.Fatalf("countdown did not become a task: %v", msg)
	}
	for _, method := range []string{"tasks/get", "tasks/cancel"} {
		body := `{"jsonrpc":"2.0","id":3,"method":"` + method + `","params":{` + meta + `,"taskId":"` + id + `"}}`
		if _, _, msg := rpc(t, url, aliceToken, modernHeaders(method, id), body); msg["error"] == nil {
			t.Errorf("alice's %s of bob's task: %v", method, msg)
		}
	}
	body := `{"jsonrpc":"2.0","id":4,"method":"tasks/get","params":{` + meta + `,"taskId":"` + id + `"}}`
	if _, _, msg := rpc(t, url, bobToken, modernHeaders("tasks/get", id), body); msg["result"] == nil {
		t.Errorf("bob's own task: %v", msg)
	}
}
