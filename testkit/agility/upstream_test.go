package agility

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/mcpx-dev/mcpx/generated/mcp"
	"github.com/mcpx-dev/mcpx/generated/revision"
	"github.com/mcpx-dev/mcpx/testkit/closedworld"
	"github.com/mcpx-dev/mcpx/testkit/wiretest"
)

// fakeUpstream is a modern MCP server on Streamable HTTP that speaks the
// revisions it is given and nothing else, written as raw JSON-RPC so that
// it answers a method no Go in mcpx knows (tools/validate). It offers one
// tool, shaped for the revision of each request, and answers tools/validate
// where that revision has it. Every request mcpx sends it is closed-world
// checked for the revision it names, and so is every answer it gives (so
// that a fault found is mcpx's, not the fake's).
type fakeUpstream struct {
	name   string
	speaks []string // modern revisions, newest first
	tool   string
	v      *closedworld.Validator
	url    string

	mu       sync.Mutex
	received []receivedCall // in order
	faults   []string       // reported by check
}

type receivedCall struct {
	method, rev string
	params      json.RawMessage
}

func startUpstream(t *testing.T, v *closedworld.Validator, name, tool string, speaks ...string) *fakeUpstream {
	u := &fakeUpstream{name: name, speaks: speaks, tool: tool, v: v}
	srv := httptest.NewServer(u)
	u.url = srv.URL + "/mcp"
	t.Cleanup(srv.Close)
	return u
}

// calls returns the requests for method the upstream received, by revision.
func (u *fakeUpstream) calls(method string) []receivedCall {
	u.mu.Lock()
	defer u.mu.Unlock()
	var out []receivedCall
	for _, c := range u.received {
		if c.method == method {
			out = append(out, c)
		}
	}
	return out
}

// revisionsUsed lists the revisions mcpx's requests named, in order of
// first use.
func (u *fakeUpstream) revisionsUsed() []string {
	u.mu.Lock()
	defer u.mu.Unlock()
	var out []string
	for _, c := range u.received {
		if !slices.Contains(out, c.rev) {
			out = append(out, c.rev)
		}
	}
	return out
}

// check fails t with every fault found in what mcpx sent.
func (u *fakeUpstream) check(t *testing.T) {
	u.mu.Lock()
	defer u.mu.Unlock()
	for _, f := range u.faults {
		t.Errorf("upstream %s: %s", u.name, f)
	}
}

func (u *fakeUpstream) fault(format string, args ...any) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.faults = append(u.faults, fmt.Sprintf(format, args...))
}

func (u *fakeUpstream) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		// No standalone stream: list changes are not part of this check.
		http.Error(w, "POST only", http.StatusMethodNotAllowed)
		return
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return
	}
	var f wiretest.Frame
	if err := json.Unmarshal(body, &f); err != nil || f.Method == "" {
		u.fault("sent something that is not one JSON-RPC request or notification: %s", body)
		http.Error(w, "bad message", http.StatusBadRequest)
		return
	}
	if f.ID == nil {
		w.WriteHeader(http.StatusAccepted)
		return
	}
	rev := wiretest.MetaVersion(f.Params)
	if !slices.Contains(u.speaks, rev) {
		// What a modern server answers a revision it does not speak
		// (basic/index: -32022 with the versions it supports).
		u.reply(w, http.StatusBadRequest, f.ID, nil, map[string]any{
			"code": -32022, "message": "Unsupported protocol version " + rev,
			"data": map[string]any{"supported": u.speaks, "requested": rev},
		})
		return
	}
	u.mu.Lock()
	u.received = append(u.received, receivedCall{f.Method, rev, f.Params})
	u.mu.Unlock()
	if err := wiretest.CheckFramed(u.v, rev, "ClientRequest", &f); err != nil {
		u.fault("mcpx sent, at %s, a request that is not closed-world valid there:\n%s\n%v", rev, body, err)
	}

	tab := revision.Lookup(mcp.Revision(rev))
	var result map[string]any
	switch f.Method {
	case mcp.MethodServerDiscover:
		result = map[string]any{
			"supportedVersions": u.speaks,
			"capabilities":      map[string]any{"tools": map[string]any{}},
			"ttlMs":             0, "cacheScope": "private",
			"_meta": map[string]any{"io.modelcontextprotocol/serverInfo": map[string]any{"name": u.name, "version": "1.0.0"}},
		}
	case mcp.MethodToolsList:
		tool := map[string]any{"name": u.tool, "description": "a tool of " + u.name, "inputSchema": map[string]any{"type": "object"}}
		if has(tab, "Tool", addedToolMember) {
			tool[addedToolMember] = true
		}
		result = map[string]any{"tools": []any{tool}, "ttlMs": 0, "cacheScope": "private"}
	case mcp.MethodToolsCall:
		content := []any{map[string]any{"type": "text", "text": u.name + " called at " + rev}}
		if hasVariant(tab, "ContentBlock", addedVariant) {
			content = append(content, map[string]any{"type": addedVariant, "data": "AAAA", "mimeType": videoMIME, "annotations": map[string]any{"priority": videoPriority}})
		}
		result = map[string]any{"content": content}
	case addedMethod:
		if _, ok := tab.Method(addedMethod); ok {
			result = map[string]any{"valid": true, "problems": []any{}}
		}
	}
	if result == nil {
		u.reply(w, http.StatusNotFound, f.ID, nil, map[string]any{"code": -32601, "message": "Method not found: " + f.Method})
		return
	}
	result["resultType"] = "complete"
	if m, ok := tab.Method(f.Method); ok && m.Result != "" {
		b, _ := json.Marshal(result)
		if err := u.v.Validate(rev, m.Result, b); err != nil {
			u.fault("(the fake itself) its %s result is not valid at %s: %v", f.Method, rev, err)
		}
	}
	u.reply(w, http.StatusOK, f.ID, result, nil)
}

func (u *fakeUpstream) reply(w http.ResponseWriter, status int, id json.RawMessage, result, rpcErr any) {
	msg := map[string]any{"jsonrpc": "2.0", "id": id}
	if rpcErr != nil {
		msg["error"] = rpcErr
	} else {
		msg["result"] = result
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(msg)
}

// has reports whether the revision's table has member of the hub type.
func has(tab *revision.Table, typ, member string) bool {
	if tab == nil {
		return false
	}
	x, ok := tab.Type(typ)
	return ok && slices.Contains(x.Fields, member)
}

// hasVariant reports whether the revision's table has the union variant.
func hasVariant(tab *revision.Table, union, tag string) bool {
	if tab == nil {
		return false
	}
	x, ok := tab.Type(union)
	return ok && slices.Contains(x.Variants, tag)
}

// sseData returns the data of the last event of an SSE body.
func sseData(body string) string {
	var last string
	for _, ev := range strings.Split(strings.ReplaceAll(body, "\r\n", "\n"), "\n\n") {
		var data []string
		for _, l := range strings.Split(ev, "\n") {
			if d, ok := strings.CutPrefix(l, "data:"); ok {
				data = append(data, strings.TrimPrefix(d, " "))
			}
		}
		if len(data) > 0 {
			last = strings.Join(data, "\n")
		}
	}
	return last
}
