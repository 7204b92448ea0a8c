package agility

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpx-dev/mcpx/generated/convert"
	"github.com/mcpx-dev/mcpx/generated/mcp"
	"github.com/mcpx-dev/mcpx/generated/revision"
	"github.com/mcpx-dev/mcpx/internal/mcpjson"
	"github.com/mcpx-dev/mcpx/runtime/config"
	"github.com/mcpx-dev/mcpx/runtime/edge"
	"github.com/mcpx-dev/mcpx/runtime/gateway"
	"github.com/mcpx-dev/mcpx/runtime/host"
	"github.com/mcpx-dev/mcpx/runtime/server"
	"github.com/mcpx-dev/mcpx/testkit/closedworld"
	"github.com/mcpx-dev/mcpx/testkit/wiretest"
)

// TestServeNewRevision serves the revision $MCPX_AGILITY_REVISION names
// (the synthetic one TestNewRevision adds to a copy) and the previous
// modern revision side by side through the gateway, in front of one
// upstream that speaks both and one that speaks only the previous one.
// Everything it knows of the new revision is the tables and what the
// synthetic revision changes (synth_test.go), so it needs no edit for a
// future revision. Every message mcpx sends, to the clients and to the
// upstreams, is closed-world checked for its revision.
func TestServeNewRevision(t *testing.T) {
	syn := mcp.Revision(os.Getenv(envRevision))
	if syn == "" {
		t.Skip("runs in the copy TestNewRevision makes, where " + envRevision + " names the synthetic revision")
	}
	tab := revision.Lookup(syn)
	if tab == nil {
		t.Fatalf("the revision tables have no %s (have %v): was the copy generated?", syn, mcp.Revisions)
	}
	if tab.Era != "modern" {
		t.Fatalf("the tables put %s in era %q, want modern", syn, tab.Era)
	}
	var prevTab *revision.Table
	for _, x := range revision.Tables { // newest first
		if x.Era == "modern" && x.Revision < syn {
			prevTab = x
			break
		}
	}
	if prevTab == nil {
		t.Fatalf("the tables have no modern revision before %s", syn)
	}
	prev := prevTab.Revision
	t.Logf("synthetic %s beside the previous modern revision %s", syn, prev)

	t.Run("tables", func(t *testing.T) {
		if !has(tab, "Tool", addedToolMember) || has(prevTab, "Tool", addedToolMember) {
			t.Errorf("Tool.%s: want it in %s only", addedToolMember, syn)
		}
		if m, ok := tab.Method(addedMethod); !ok || !m.FromClient || m.Result == "" {
			t.Errorf("%s has no client request %s with a result: %+v", syn, addedMethod, m)
		}
		if _, ok := prevTab.Method(addedMethod); ok {
			t.Errorf("%s has %s, which only %s adds", prev, addedMethod, syn)
		}
		if !hasVariant(tab, "ContentBlock", addedVariant) || hasVariant(prevTab, "ContentBlock", addedVariant) {
			t.Errorf("ContentBlock variant %q: want it in %s only", addedVariant, syn)
		}
		if !has(tab, renamedType, renamedTo) || has(tab, renamedType, renamedFrom) {
			t.Errorf("%s %s: want %s spelt %s", syn, renamedType, renamedFrom, renamedTo)
		}
		if !has(prevTab, renamedType, renamedFrom) {
			t.Errorf("%s %s: want it still spelt %s", prev, renamedType, renamedFrom)
		}
		// The synthetic revision removes no method, so it has every one
		// the previous had: the tasks extension's among them, which it
		// must inherit (an extension extends a range of revisions).
		for _, m := range prevTab.Methods {
			if _, ok := tab.Method(m.Name); !ok {
				t.Errorf("%s lacks %s, which %s has (an extension not carried forward?)", syn, m.Name, prev)
			}
		}
	})

	t.Run("rename-round-trips", func(t *testing.T) { renameRoundTrips(t, syn, prev) })

	v, err := closedworld.Default()
	if err != nil {
		t.Fatalf("closed-world validator: %v", err)
	}
	both := startUpstream(t, v, "both", "probe", string(syn), string(prev))
	older := startUpstream(t, v, "older", "steady", string(prev))
	gw := startGateway(t, both, older)
	clients := map[mcp.Revision]*client{syn: newClient(t, gw, syn), prev: newClient(t, gw, prev)}

	// What each client lists; the subtests below read it.
	tools := map[mcp.Revision]map[string]map[string]any{}
	for rev, c := range clients {
		var res struct {
			Tools []map[string]any `json:"tools"`
		}
		c.result(t, "tools/list", map[string]any{}, &res)
		tools[rev] = map[string]map[string]any{}
		for _, x := range res.Tools {
			name, _ := x["name"].(string)
			tools[rev][name] = x
		}
	}
	// find returns the tool of upstream u as the rev client lists it.
	find := func(t *testing.T, rev mcp.Revision, u *fakeUpstream) (string, map[string]any) {
		t.Helper()
		for name, x := range tools[rev] {
			if strings.HasSuffix(name, u.tool) {
				return name, x
			}
		}
		t.Fatalf("the %s client's tools/list has no tool of upstream %s (which speaks %v; not reached?): %v", rev, u.name, u.speaks, tools[rev])
		return "", nil
	}

	// Each client gets its own shape: the added member only at syn.
	t.Run("own-shape", func(t *testing.T) {
		name, synTool := find(t, syn, both)
		_, prevTool := find(t, prev, both)
		if synTool[addedToolMember] != true {
			t.Errorf("the %s client's tool %s lacks %s (served as an older revision?): %v", syn, name, addedToolMember, synTool)
		}
		if _, ok := prevTool[addedToolMember]; ok {
			t.Errorf("the %s client's tool %s carries %s, which only %s has: %v", prev, name, addedToolMember, syn, prevTool)
		}
	})
	// An upstream that speaks only the previous revision is still reached,
	// by the clients of both.
	t.Run("older-upstream-reached", func(t *testing.T) {
		find(t, syn, older)
		find(t, prev, older)
		if got := older.revisionsUsed(); !slices.Equal(got, []string{string(prev)}) {
			t.Errorf("mcpx spoke %v to the upstream that speaks only %s", got, prev)
		}
	})
	// Negotiation picks the newest revision both sides speak.
	t.Run("newest-both-speak", func(t *testing.T) {
		if got := both.revisionsUsed(); !slices.Equal(got, []string{string(syn)}) {
			t.Errorf("mcpx spoke %v to the upstream that speaks %s and %s; want only %s, the newest both speak", got, syn, prev, syn)
		}
	})

	// The new method reaches the upstream that has it, under the tool's
	// own name, and no other.
	t.Run("new-method-forwarded", func(t *testing.T) {
		name, _ := find(t, syn, both)
		var res map[string]any
		clients[syn].result(t, addedMethod, map[string]any{"name": name, "arguments": map[string]any{}}, &res)
		if res["valid"] != true {
			t.Errorf("%s through the gateway: %v, want the upstream's answer (valid: true)", addedMethod, res)
		}
		if got := both.calls(addedMethod); len(got) != 1 || !strings.Contains(string(got[0].params), `"`+both.tool+`"`) {
			t.Errorf("the upstream that has %s received %d of them (%v), want 1 naming its tool %s", addedMethod, len(got), got, both.tool)
		}
	})
	// Refused, clearly, for a tool whose upstream's revision lacks it.
	t.Run("new-method-refused-upstream-lacks-it", func(t *testing.T) {
		name, _ := find(t, syn, older)
		e := clients[syn].refused(t, addedMethod, map[string]any{"name": name, "arguments": map[string]any{}})
		if !strings.Contains(e.Message, addedMethod) && !strings.Contains(e.Message, older.name) && !strings.Contains(e.Message, string(prev)) {
			t.Errorf("%s for a tool of an upstream that lacks it is refused with %q, which names neither the method, the upstream nor its revision", addedMethod, e.Message)
		}
		if got := older.calls(addedMethod); len(got) != 0 {
			t.Errorf("the upstream whose revision lacks %s was sent it: %v", addedMethod, got)
		}
	})
	// A client whose revision lacks it is told the method is not found.
	t.Run("new-method-refused-client-lacks-it", func(t *testing.T) {
		name, _ := find(t, prev, both)
		before := len(both.calls(addedMethod))
		if e := clients[prev].refused(t, addedMethod, map[string]any{"name": name, "arguments": map[string]any{}}); e.Code != -32601 {
			t.Errorf("%s from a %s client: code %d, want -32601", addedMethod, prev, e.Code)
		}
		if got := both.calls(addedMethod); len(got) != before {
			t.Errorf("a %s request from a %s client was forwarded: %v", addedMethod, prev, got[before:])
		}
	})

	// The added variant reaches the client whose revision has it; the
	// other gets, in its place, a text block saying what was left out (the
	// overlay's "*" fallback for content blocks, through one generic
	// override), valid for its own revision (checked by the recorder).
	t.Run("new-variant", func(t *testing.T) {
		for _, rev := range []mcp.Revision{syn, prev} {
			name, _ := find(t, rev, both)
			var res struct {
				Content []map[string]any `json:"content"`
			}
			raw, e := clients[rev].do(t, "tools/call", map[string]any{"name": name, "arguments": map[string]any{}})
			if e != nil {
				// Issue 11: an added variant needs no Go, so an older
				// client gets the result with the block in a form it has,
				// not an error for the whole call.
				t.Errorf("tools/call %s from the %s client, its result carrying a %q block that revision lacks: error %d %s", name, rev, addedVariant, e.Code, e.Message)
				continue
			}
			json.Unmarshal(raw, &res)
			kinds := []string{}
			for _, b := range res.Content {
				k, _ := b["type"].(string)
				kinds = append(kinds, k)
			}
			if rev == syn {
				if !slices.Equal(kinds, []string{"text", addedVariant}) {
					t.Errorf("tools/call for a %s client: content kinds %v, want [text %s], as the upstream sent them", rev, kinds, addedVariant)
				}
				continue
			}
			// The upstream's text block, then the stand-in for the video.
			if !slices.Equal(kinds, []string{"text", "text"}) {
				t.Errorf("tools/call for a %s client: content kinds %v, want [text text] (the %s block as text)", rev, kinds, addedVariant)
				continue
			}
			text, _ := res.Content[1]["text"].(string)
			if !strings.Contains(text, addedVariant) || !strings.Contains(text, videoMIME) || !strings.Contains(text, "omitted") {
				t.Errorf("tools/call for a %s client: the stand-in for the %s block says %q, want it to name what was omitted (%s, %s)", rev, addedVariant, text, addedVariant, videoMIME)
			}
			if ann, _ := res.Content[1]["annotations"].(map[string]any); ann["priority"] != videoPriority {
				t.Errorf("tools/call for a %s client: the stand-in for the %s block has annotations %v, want the block's own (priority %v)", rev, addedVariant, res.Content[1]["annotations"], videoPriority)
			}
		}
	})
}

// renameRoundTrips converts an Implementation with the renamed member from
// each of the two revisions to the other through the hub: the value
// survives, spelt as each revision spells it, closed-world valid there.
func renameRoundTrips(t *testing.T, syn, prev mcp.Revision) {
	v, err := closedworld.Default()
	if err != nil {
		t.Fatal(err)
	}
	const url = "https://example.com/home"
	for _, dir := range []struct {
		from, to         mcp.Revision
		fromName, toName string
	}{{syn, prev, renamedTo, renamedFrom}, {prev, syn, renamedFrom, renamedTo}} {
		in := `{"name":"x","version":"1.0.0","` + dir.fromName + `":"` + url + `"}`
		w := convert.New(dir.from, renamedType)
		if w == nil {
			t.Fatalf("%s has no %s", dir.from, renamedType)
		}
		if err := mcpjson.Unmarshal([]byte(in), w); err != nil {
			t.Fatalf("decoding %s at %s: %v", in, dir.from, err)
		}
		hub, err := convert.Upgrade(dir.from, w)
		if err != nil {
			t.Fatal(err)
		}
		out, err := convert.Downgrade(dir.to, hub)
		if err != nil {
			t.Fatal(err)
		}
		b, err := json.Marshal(out)
		if err != nil {
			t.Fatal(err)
		}
		var got map[string]any
		json.Unmarshal(b, &got)
		if got[dir.toName] != url {
			t.Errorf("%s %s from %s to %s: %s, want %s: %q", renamedType, in, dir.from, dir.to, b, dir.toName, url)
		}
		if err := v.Validate(string(dir.to), renamedType, b); err != nil {
			t.Errorf("%s converted to %s: %s: %v", renamedType, dir.to, b, err)
		}
	}
}

// startGateway fronts the upstreams with the gateway, as `mcpx serve
// --config` builds it, and waits for their first load.
func startGateway(t *testing.T, ups ...*fakeUpstream) *gateway.Gateway {
	servers := map[string]any{}
	for _, u := range ups {
		servers[u.name] = map[string]any{"url": u.url, "mcpx": map[string]any{"timeout": "20s"}}
		t.Cleanup(func() { u.check(t) }) // after the gateway's Close, below
	}
	data, err := json.Marshal(map[string]any{"mcpServers": servers})
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Parse("agility.json", data, func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatalf("config.Parse: %v\n%s", err, data)
	}
	var logs wiretest.LockedBuffer
	log := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	gw, err := host.Gateway(context.Background(), cfg, serverInfo, log)
	if err != nil {
		t.Fatalf("host.Gateway: %v", err)
	}
	t.Cleanup(func() {
		if err := gw.Close(); err != nil {
			t.Errorf("gateway Close: %v", err)
		}
		if t.Failed() {
			t.Logf("gateway log:\n%s", logs.String())
		}
	})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := gw.Ready(ctx); err != nil {
		t.Fatalf("gateway Ready: %v\n%s", err, logs.String())
	}
	return gw
}

var serverInfo = mcp.Implementation{Name: "mcpx", Version: "0.1.0"}

// client is a raw Streamable HTTP client pinned to one modern revision,
// talking to its own edge over the gateway; everything mcpx sends it is
// recorded and closed-world checked for rev when the test ends.
type client struct {
	rev  mcp.Revision
	url  string
	hc   *http.Client
	next atomic.Int64
}

func newClient(t *testing.T, ns server.Namespace, rev mcp.Revision) *client {
	w := new(wiretest.HTTPWire)
	t.Cleanup(func() {
		msgs, err := w.Sent()
		if err != nil {
			t.Errorf("reading the recorded wire of the %s client: %v", rev, err)
		}
		wiretest.Validate(t, string(rev), msgs)
		if t.Failed() {
			for _, ex := range w.Exchanges() {
				status, _, body, _ := ex.Response()
				t.Logf("%s exchange %d: %s\n%s\n-> %d\n%s", rev, ex.N, ex.Method, ex.ReqBody, status, body)
			}
		}
	})
	var logs wiretest.LockedBuffer
	e := &edge.Edge{Server: &server.Server{NS: ns, Info: serverInfo, TTLMs: 60_000},
		Log: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	t.Cleanup(tr.CloseIdleConnections)
	return &client{rev: rev, url: wiretest.ServeHTTP(t, e, w, &logs), hc: &http.Client{Transport: tr, Timeout: 30 * time.Second}}
}

type rpcError struct {
	Code    int64  `json:"code"`
	Message string `json:"message"`
}

// do sends one request and returns its answer's result or error.
func (c *client) do(t *testing.T, method string, params map[string]any) (json.RawMessage, *rpcError) {
	t.Helper()
	params["_meta"] = map[string]any{
		"io.modelcontextprotocol/protocolVersion":    string(c.rev),
		"io.modelcontextprotocol/clientCapabilities": map[string]any{},
	}
	id := c.next.Add(1)
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
	req, err := http.NewRequest(http.MethodPost, c.url, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", string(c.rev))
	req.Header.Set("Mcp-Method", method)
	if name, ok := params["name"].(string); ok && method == "tools/call" {
		req.Header.Set("Mcp-Name", name)
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		t.Fatalf("%s from the %s client: %v", method, c.rev, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		b = []byte(sseData(string(b)))
	}
	var f struct {
		Result json.RawMessage `json:"result"`
		Error  *rpcError       `json:"error"`
	}
	if err := json.Unmarshal(b, &f); err != nil || (f.Result == nil && f.Error == nil) {
		t.Fatalf("%s from the %s client: HTTP %d, no JSON-RPC answer: %s", method, c.rev, resp.StatusCode, b)
	}
	return f.Result, f.Error
}

// result sends a request that must succeed and decodes its result.
func (c *client) result(t *testing.T, method string, params map[string]any, into any) {
	t.Helper()
	res, e := c.do(t, method, params)
	if e != nil {
		t.Fatalf("%s from the %s client: error %d %s", method, c.rev, e.Code, e.Message)
	}
	if err := json.Unmarshal(res, into); err != nil {
		t.Fatalf("%s from the %s client: %v: %s", method, c.rev, err, res)
	}
}

// refused sends a request that must be refused and returns the error.
func (c *client) refused(t *testing.T, method string, params map[string]any) *rpcError {
	t.Helper()
	res, e := c.do(t, method, params)
	if e == nil {
		t.Fatalf("%s from the %s client: answered %s, want an error", method, c.rev, res)
	}
	t.Logf("%s from the %s client refused: %d %s", method, c.rev, e.Code, e.Message)
	return e
}
