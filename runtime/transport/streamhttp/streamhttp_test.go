package streamhttp_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpx-dev/mcpx/runtime/transport/streamhttp"
	"github.com/mcpx-dev/mcpx/testkit/leakcheck"
	"github.com/mcpx-dev/mcpx/testkit/revs"
)

// --- Legacy sessions ---

// TestLegacyInitializeMintsSession: a successful initialize gets an
// Mcp-Session-Id of visible ASCII (32 hex digits from crypto/rand).
func TestLegacyInitializeMintsSession(t *testing.T) {
	leakcheck.Check(t)
	srv, h := start(t, streamhttp.Options{})
	legacy := streamableLegacy()
	for _, v := range legacy {
		id := openSession(t, srv, v)
		if !regexp.MustCompile(`^[0-9a-f]{32}$`).MatchString(id) {
			t.Errorf("session id %q: want 32 hex digits", id)
		}
	}
	if n := h.OpenSessions(); n != len(legacy) {
		t.Errorf("%d sessions held, want %d", n, len(legacy))
	}
	// An initialize that fails mints nothing.
	resp := post(t, srv, nil, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":7}}`)
	if resp.Header.Get("Mcp-Session-Id") != "" {
		t.Error("a failed initialize minted a session")
	}
	resp.Body.Close()
}

// TestLegacyFollowUpWithSession: requests carrying the session id (and the
// MCP-Protocol-Version header) are served in the negotiated revision; the
// session id is not echoed on them.
func TestLegacyFollowUpWithSession(t *testing.T) {
	leakcheck.Check(t)
	srv, _ := start(t, streamhttp.Options{})
	sid := openSession(t, srv, "2025-06-18")
	h := hdr{"Mcp-Session-Id": sid, "MCP-Protocol-Version": "2025-06-18"}
	resp := post(t, srv, h, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	if resp.StatusCode != http.StatusAccepted {
		t.Fatalf("notifications/initialized: %d", resp.StatusCode)
	}
	resp.Body.Close()
	resp = post(t, srv, h, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
	if resp.Header.Get("Mcp-Session-Id") != "" {
		t.Error("the session id is echoed on a follow-up request")
	}
	r := decode(t, resp, http.StatusOK)
	tools, _ := r.Result["tools"].([]any)
	if len(tools) == 0 || tools[0].(map[string]any)["title"] != "Progress" {
		t.Errorf("tools/list in 2025-06-18 (which has title): %+v", r.Result)
	}
	if _, ok := r.Result["resultType"]; ok {
		t.Error("a legacy result carries resultType")
	}
	// The session's revision governs even without the header: 2025-06-18
	// has titles, the headerless 2025-03-26 would not.
	resp = post(t, srv, hdr{"Mcp-Session-Id": sid}, `{"jsonrpc":"2.0","id":3,"method":"tools/list"}`)
	r = decode(t, resp, http.StatusOK)
	if tools, _ := r.Result["tools"].([]any); len(tools) == 0 || tools[0].(map[string]any)["title"] != "Progress" {
		t.Errorf("tools/list on a 2025-06-18 session without the header: %+v", r.Result)
	}
}

// TestUnknownSessionIs404: an id the server does not hold is 404 with a
// JSON-RPC error carrying the request id.
func TestUnknownSessionIs404(t *testing.T) {
	leakcheck.Check(t)
	srv, _ := start(t, streamhttp.Options{})
	resp := post(t, srv, hdr{"Mcp-Session-Id": "nope", "MCP-Protocol-Version": "2025-11-25"}, `{"jsonrpc":"2.0","id":"x","method":"tools/list"}`)
	wantError(t, resp, http.StatusNotFound, -32600, `"x"`)
	resp = do(t, nil, http.MethodGet, srv.URL, hdr{"Mcp-Session-Id": "nope", "Accept": "text/event-stream"}, "")
	wantError(t, resp, http.StatusNotFound, -32600, `null`)
}

// TestSessionlessLegacyRequest: a legacy request without a session id is
// served (on a throwaway session), in the header's revision.
func TestSessionlessLegacyRequest(t *testing.T) {
	leakcheck.Check(t)
	srv, h := start(t, streamhttp.Options{})
	openSession(t, srv, "2025-06-18")
	resp := post(t, srv, hdr{"MCP-Protocol-Version": "2025-06-18"}, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
	r := decode(t, resp, http.StatusOK)
	if tools, _ := r.Result["tools"].([]any); len(tools) == 0 || tools[0].(map[string]any)["title"] != "Progress" {
		t.Errorf("sessionless 2025-06-18 tools/list: %+v", r.Result)
	}
	if h.OpenSessions() != 1 {
		t.Error("a sessionless request minted a session")
	}
}

// TestDeleteEndsSession: DELETE with the id ends the session (204); later
// requests with it are 404, as is a second DELETE. DELETE without an id is
// 400.
func TestDeleteEndsSession(t *testing.T) {
	leakcheck.Check(t)
	srv, h := start(t, streamhttp.Options{})
	sid := openSession(t, srv, "2025-11-25")
	resp := do(t, nil, http.MethodDelete, srv.URL, hdr{"Mcp-Session-Id": sid, "MCP-Protocol-Version": "2025-11-25"}, "")
	if resp.StatusCode != http.StatusNoContent {
		t.Fatalf("DELETE: %d", resp.StatusCode)
	}
	resp.Body.Close()
	if h.OpenSessions() != 0 {
		t.Error("the session is still held after DELETE")
	}
	resp = post(t, srv, hdr{"Mcp-Session-Id": sid, "MCP-Protocol-Version": "2025-11-25"}, `{"jsonrpc":"2.0","id":2,"method":"ping"}`)
	wantError(t, resp, http.StatusNotFound, -32600, "2")
	resp = do(t, nil, http.MethodDelete, srv.URL, hdr{"Mcp-Session-Id": sid}, "")
	wantError(t, resp, http.StatusNotFound, -32600, "null")
	resp = do(t, nil, http.MethodDelete, srv.URL, nil, "")
	wantError(t, resp, http.StatusBadRequest, -32600, "null")
}

// TestIdleSessionDropped: a session unused for SessionIdle is dropped.
func TestIdleSessionDropped(t *testing.T) {
	leakcheck.Check(t)
	srv, _ := start(t, streamhttp.Options{SessionIdle: 50 * time.Millisecond})
	sid := openSession(t, srv, "2025-11-25")
	resp := post(t, srv, hdr{"Mcp-Session-Id": sid}, `{"jsonrpc":"2.0","id":2,"method":"ping"}`)
	decode(t, resp, http.StatusOK)
	time.Sleep(120 * time.Millisecond)
	resp = post(t, srv, hdr{"Mcp-Session-Id": sid}, `{"jsonrpc":"2.0","id":3,"method":"ping"}`)
	wantError(t, resp, http.StatusNotFound, -32600, "3")
}

// TestTooManySessionsIs503: beyond MaxSessions, when every session is in
// use (here by its GET stream), a new initialize is 503 with Retry-After;
// ending a session makes room.
func TestTooManySessionsIs503(t *testing.T) {
	leakcheck.Check(t)
	srv, h := start(t, streamhttp.Options{MaxSessions: 1, Logger: discard()})
	sid := openSession(t, srv, "2025-11-25")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stream := do(t, ctx, http.MethodGet, srv.URL, hdr{"Mcp-Session-Id": sid, "Accept": "text/event-stream"}, "")
	defer stream.Body.Close()
	eventually(t, "the GET stream open", func() bool { return h.OpenStreams() == 1 })
	resp := post(t, srv, nil, initialize("2025-11-25"))
	if resp.Header.Get("Retry-After") == "" {
		t.Error("503 without Retry-After")
	}
	wantError(t, resp, http.StatusServiceUnavailable, -32603, "1")
	if resp.Header.Get("Mcp-Session-Id") != "" {
		t.Error("a refused initialize minted a session")
	}
	do(t, nil, http.MethodDelete, srv.URL, hdr{"Mcp-Session-Id": sid}, "").Body.Close()
	openSession(t, srv, "2025-11-25")
}

// TestCancelledLegacyRequestGetsNoAnswer: after notifications/cancelled on
// the session, the request's POST ends without a response (204, empty).
func TestCancelledLegacyRequestGetsNoAnswer(t *testing.T) {
	leakcheck.Check(t)
	srv, _ := start(t, streamhttp.Options{})
	sid := openSession(t, srv, "2025-11-25")
	h := hdr{"Mcp-Session-Id": sid, "MCP-Protocol-Version": "2025-11-25"}
	got := make(chan *http.Response, 1)
	go func() {
		got <- post(t, srv, h, `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"wait"}}`)
	}()
	// The cancellation may overtake the call; retry until the call ends.
	for {
		resp := post(t, srv, h, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7}}`)
		if resp.StatusCode != http.StatusAccepted {
			t.Fatalf("notifications/cancelled: %d", resp.StatusCode)
		}
		resp.Body.Close()
		select {
		case resp := <-got:
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusNoContent || len(b) != 0 {
				t.Fatalf("cancelled request answered %d %s", resp.StatusCode, b)
			}
			return
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// --- Revision per request, batches ---

// TestHeaderlessIs20250326: no header and no session is 2025-03-26, which
// has batches: one array answers the requests in it.
func TestHeaderlessIs20250326(t *testing.T) {
	leakcheck.Check(t)
	srv, _ := start(t, streamhttp.Options{})
	resp := post(t, srv, nil, `[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","method":"notifications/initialized"},{"jsonrpc":"2.0","id":2,"method":"tools/list"}]`)
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var arr []reply
	if resp.StatusCode != http.StatusOK || json.Unmarshal(b, &arr) != nil || len(arr) != 2 {
		t.Fatalf("headerless batch: %d %s", resp.StatusCode, b)
	}
	if tools, _ := arr[1].Result["tools"].([]any); len(tools) == 0 || tools[0].(map[string]any)["title"] != nil {
		t.Errorf("2025-03-26 has no tool title: %s", b)
	}
	// A batch of notifications only is 202 with no body.
	resp = post(t, srv, nil, `[{"jsonrpc":"2.0","method":"notifications/initialized"}]`)
	if b, _ := io.ReadAll(resp.Body); resp.StatusCode != http.StatusAccepted || len(b) != 0 {
		t.Errorf("batch of notifications: %d %s", resp.StatusCode, b)
	}
	resp.Body.Close()
}

// TestBatchRejectedFor20250618Session: batches left in 2025-06-18, so a
// batch on such a session (or under that header) is 400 -32600.
func TestBatchRejectedFor20250618Session(t *testing.T) {
	leakcheck.Check(t)
	srv, _ := start(t, streamhttp.Options{})
	sid := openSession(t, srv, "2025-06-18")
	batch := `[{"jsonrpc":"2.0","id":1,"method":"ping"}]`
	// The session governs even when the header claims 2025-03-26.
	resp := post(t, srv, hdr{"Mcp-Session-Id": sid, "MCP-Protocol-Version": "2025-03-26"}, batch)
	wantError(t, resp, http.StatusBadRequest, -32600, "null")
	resp = post(t, srv, hdr{"MCP-Protocol-Version": "2025-06-18"}, batch)
	wantError(t, resp, http.StatusBadRequest, -32600, "null")
	resp = post(t, srv, modern("ping", ""), batch)
	wantError(t, resp, http.StatusBadRequest, -32600, "null")
	// A 2025-03-26 session keeps them.
	sid = openSession(t, srv, "2025-03-26")
	resp = post(t, srv, hdr{"Mcp-Session-Id": sid, "MCP-Protocol-Version": "2025-03-26"}, batch)
	if resp.StatusCode != http.StatusOK {
		t.Errorf("batch on a 2025-03-26 session: %d", resp.StatusCode)
	}
	resp.Body.Close()
}

// TestInitializeInBatchRejected: 2025-03-26 says initialize MUST NOT be
// part of a batch; the member is answered -32600 and no session is minted.
func TestInitializeInBatchRejected(t *testing.T) {
	leakcheck.Check(t)
	srv, h := start(t, streamhttp.Options{})
	resp := post(t, srv, nil, "["+initialize("2025-03-26")+"]")
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var arr []reply
	if json.Unmarshal(b, &arr) != nil || len(arr) != 1 || arr[0].Error == nil || arr[0].Error.Code != -32600 {
		t.Fatalf("initialize in a batch: %s", b)
	}
	if h.OpenSessions() != 0 || resp.Header.Get("Mcp-Session-Id") != "" {
		t.Error("initialize in a batch minted a session")
	}
}

// TestUnknownProtocolVersionHeader: a header naming no revision mcpx
// serves is 400 with the supported versions.
func TestUnknownProtocolVersionHeader(t *testing.T) {
	leakcheck.Check(t)
	srv, _ := start(t, streamhttp.Options{})
	resp := post(t, srv, hdr{"MCP-Protocol-Version": "1999-01-01"}, `{"jsonrpc":"2.0","id":1,"method":"ping"}`)
	r := wantError(t, resp, http.StatusBadRequest, -32600, "1")
	if sup, _ := r.Error.Data["supported"].([]any); len(sup) != 5 || r.Error.Data["requested"] != "1999-01-01" {
		t.Errorf("data: %+v", r.Error.Data)
	}
}

// TestParseErrorIs400: bytes that are not JSON are 400 -32700, id null.
func TestParseErrorIs400(t *testing.T) {
	leakcheck.Check(t)
	srv, _ := start(t, streamhttp.Options{})
	wantError(t, post(t, srv, nil, `{"jsonrpc":`), http.StatusBadRequest, -32700, "null")
	wantError(t, post(t, srv, nil, ``), http.StatusBadRequest, -32700, "null")
}

// --- 2026-07-28 ---

// TestModernToolsList: a 2026-07-28 request is answered 200 JSON with the
// modern envelope, and no session id is minted or echoed, even when the
// client sends one.
func TestModernToolsList(t *testing.T) {
	leakcheck.Check(t)
	srv, h := start(t, streamhttp.Options{})
	hd := modern("tools/list", "")
	hd["Mcp-Session-Id"] = "left-over-from-a-legacy-client"
	hd["Last-Event-ID"] = "5"
	resp := post(t, srv, hd, `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{`+modernMeta+`}}`)
	if resp.Header.Get("Mcp-Session-Id") != "" {
		t.Error("a 2026-07-28 response carries Mcp-Session-Id")
	}
	r := decode(t, resp, http.StatusOK)
	if r.Result["resultType"] != "complete" || r.Result["ttlMs"] == nil {
		t.Errorf("modern envelope missing: %+v", r.Result)
	}
	if h.OpenSessions() != 0 {
		t.Error("a 2026-07-28 request minted a session")
	}
}

// TestModernMissingClientCapabilities: a 2026-07-28 request without
// clientCapabilities is 400 -32602 with its id.
func TestModernMissingClientCapabilities(t *testing.T) {
	leakcheck.Check(t)
	srv, _ := start(t, streamhttp.Options{})
	resp := post(t, srv, modern("tools/list", ""), `{"jsonrpc":"2.0","id":4,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`)
	wantError(t, resp, http.StatusBadRequest, -32602, "4")
	// The header alone, no _meta at all: also -32602.
	resp = post(t, srv, modern("tools/list", ""), `{"jsonrpc":"2.0","id":5,"method":"tools/list","params":{}}`)
	wantError(t, resp, http.StatusBadRequest, -32602, "5")
}

// TestModernUnsupportedVersion: _meta naming a version mcpx does not serve
// per request (header agreeing) is 400 -32022 with data.supported and
// data.requested, as the conformance suite's server-stateless sends it.
func TestModernUnsupportedVersion(t *testing.T) {
	leakcheck.Check(t)
	srv, _ := start(t, streamhttp.Options{})
	h := modern("server/discover", "")
	h["MCP-Protocol-Version"] = "v999.0.0"
	resp := post(t, srv, h, `{"jsonrpc":"2.0","id":301,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"v999.0.0","io.modelcontextprotocol/clientCapabilities":{}}}}`)
	r := wantError(t, resp, http.StatusBadRequest, -32022, "301")
	if sup, _ := r.Error.Data["supported"].([]any); len(sup) == 0 || r.Error.Data["requested"] != "v999.0.0" {
		t.Errorf("data: %+v", r.Error.Data)
	}
}

// TestProtocolVersionHeaderMismatch: the header must equal _meta's
// version, whatever either says (-32020); a 2026-07-28 request without
// the header is missing a required header (-32020).
func TestProtocolVersionHeaderMismatch(t *testing.T) {
	leakcheck.Check(t)
	srv, _ := start(t, streamhttp.Options{})
	body := `{"jsonrpc":"2.0","id":302,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"v999.0.0","io.modelcontextprotocol/clientCapabilities":{}}}}`
	wantError(t, post(t, srv, modern("server/discover", ""), body), http.StatusBadRequest, -32020, "302")
	h := modern("server/discover", "")
	h["MCP-Protocol-Version"] = "2025-11-25"
	body = `{"jsonrpc":"2.0","id":303,"method":"server/discover","params":{` + modernMeta + `}}`
	wantError(t, post(t, srv, h, body), http.StatusBadRequest, -32020, "303")
	h["MCP-Protocol-Version"] = ""
	wantError(t, post(t, srv, h, body), http.StatusBadRequest, -32020, "303")
}

// TestMcpMethodMismatch: Mcp-Method must equal the body's method, case
// and all; missing is -32020 too.
func TestMcpMethodMismatch(t *testing.T) {
	leakcheck.Check(t)
	srv, _ := start(t, streamhttp.Options{})
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{` + modernMeta + `}}`
	for _, m := range []string{"prompts/list", "Tools/List", ""} {
		h := modern("tools/list", "")
		h["Mcp-Method"] = m
		wantError(t, post(t, srv, h, body), http.StatusBadRequest, -32020, "1")
	}
}

// TestMcpNameMismatch: Mcp-Name must equal params.name (tools/call,
// prompts/get) or params.uri (resources/read); missing is -32020 too.
func TestMcpNameMismatch(t *testing.T) {
	leakcheck.Check(t)
	srv, _ := start(t, streamhttp.Options{})
	call := `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"progress",` + modernMeta + `}}`
	wantError(t, post(t, srv, modern("tools/call", "boom"), call), http.StatusBadRequest, -32020, "2")
	wantError(t, post(t, srv, modern("tools/call", ""), call), http.StatusBadRequest, -32020, "2")
	read := `{"jsonrpc":"2.0","id":3,"method":"resources/read","params":{"uri":"test://a b",` + modernMeta + `}}`
	wantError(t, post(t, srv, modern("resources/read", "test://other"), read), http.StatusBadRequest, -32020, "3")
	// A malformed sentinel is -32020 as well.
	wantError(t, post(t, srv, modern("resources/read", "=?base64?!!!?="), read), http.StatusBadRequest, -32020, "3")
	// And the matching header is served.
	decode(t, post(t, srv, modern("resources/read", "test://a b"), read), http.StatusOK)
}

// TestMcpNameBase64: a name outside the header-safe set comes as
// =?base64?…?=, which is decoded before comparing.
func TestMcpNameBase64(t *testing.T) {
	leakcheck.Check(t)
	srv, _ := start(t, streamhttp.Options{})
	name := "=?base64?" + base64.StdEncoding.EncodeToString([]byte("grüße")) + "?="
	resp := post(t, srv, modern("tools/call", name), `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"grüße",`+modernMeta+`}}`)
	r := decode(t, resp, http.StatusOK)
	if r.Error != nil || r.Result["resultType"] != "complete" {
		t.Fatalf("base64 Mcp-Name: %+v", r)
	}
	// A value that only looks encoded is taken literally once decoded.
	lit := "=?base64?" + base64.StdEncoding.EncodeToString([]byte("=?base64?x?=")) + "?="
	resp = post(t, srv, modern("tools/call", lit), `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"=?base64?x?=",`+modernMeta+`}}`)
	// The header passed; the tool does not exist (the edge's -32602).
	if r := decode(t, resp, http.StatusOK); r.Error == nil || r.Error.Code != -32602 {
		t.Errorf("unknown tool after a matching header: %+v", r)
	}
}

// TestModernUnknownMethod: 2026-07-28 requires 404 with -32601 for a
// method the server does not implement, including removed legacy ones.
func TestModernUnknownMethod(t *testing.T) {
	leakcheck.Check(t)
	srv, _ := start(t, streamhttp.Options{})
	for _, m := range []string{"unknown/method", "initialize", "ping"} {
		resp := post(t, srv, modern(m, ""), `{"jsonrpc":"2.0","id":601,"method":"`+m+`","params":{`+modernMeta+`}}`)
		wantError(t, resp, http.StatusNotFound, -32601, "601")
	}
}

// TestNotificationIs202: notifications and responses from the client are
// 202 Accepted with no body.
func TestNotificationIs202(t *testing.T) {
	leakcheck.Check(t)
	srv, _ := start(t, streamhttp.Options{})
	for _, body := range []string{
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":9,"result":{}}`,
	} {
		resp := post(t, srv, nil, body)
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusAccepted || len(b) != 0 {
			t.Errorf("%s: %d %q", body, resp.StatusCode, b)
		}
	}
}

// --- Responses: JSON or SSE ---

// TestProgressStreamsAsSSE: a call that reports progress, from a client
// that accepts SSE, is answered with an SSE stream: the progress
// notifications, then the response, then the end of the stream.
func TestProgressStreamsAsSSE(t *testing.T) {
	leakcheck.Check(t)
	srv, h := start(t, streamhttp.Options{})
	for _, tc := range []struct {
		name string
		hdr  hdr
		body string
	}{
		{"2026-07-28", modern("tools/call", "progress"), `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"progress","_meta":{"progressToken":"p","io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`},
		{"2025-03-26 headerless", nil, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"progress","_meta":{"progressToken":"p"}}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp := post(t, srv, tc.hdr, tc.body)
			if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "text/event-stream" ||
				resp.Header.Get("Cache-Control") != "no-cache" || resp.Header.Get("X-Accel-Buffering") != "no" {
				t.Fatalf("want an SSE response, got %d %v", resp.StatusCode, resp.Header)
			}
			ch := readSSE(resp.Body)
			for _, want := range []float64{1, 2} {
				n, ok := next(t, ch, nil)
				if !ok || n.Method != "notifications/progress" {
					t.Fatalf("want progress %v, got %+v", want, n)
				}
				var p struct {
					ProgressToken string  `json:"progressToken"`
					Progress      float64 `json:"progress"`
				}
				json.Unmarshal(n.Params, &p)
				if p.ProgressToken != "p" || p.Progress != want {
					t.Errorf("progress params %s", n.Params)
				}
			}
			r, ok := next(t, ch, nil)
			if !ok || string(r.ID) != "1" || r.Result == nil {
				t.Fatalf("want the response last, got %+v", r)
			}
			waitEnd(t, ch)
		})
	}
	eventually(t, "stream slots given back", func() bool { return h.OpenStreams() == 0 })
}

// TestLateNotificationsAfterTheResponse: notifications a handler sends
// after its call returned never reach the wire after the response, nor
// race with a JSON answer (run with -race).
func TestLateNotificationsAfterTheResponse(t *testing.T) {
	leakcheck.Check(t)
	srv, h := start(t, streamhttp.Options{})
	for i := range 30 {
		resp := post(t, srv, nil, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"late","_meta":{"progressToken":1}}}`)
		if resp.Header.Get("Content-Type") == "application/json" {
			if r := decode(t, resp, http.StatusOK); r.Result == nil {
				t.Fatalf("run %d: %+v", i, r)
			}
			continue
		}
		ch := readSSE(resp.Body)
		for {
			r, ok := next(t, ch, nil)
			if !ok {
				t.Fatalf("run %d: the stream ended without the response", i)
			}
			if r.Method == "" {
				if string(r.ID) != "1" || r.Result == nil {
					t.Fatalf("run %d: %+v", i, r)
				}
				break
			}
		}
		waitEnd(t, ch)
	}
	eventually(t, "slots given back", func() bool { return h.OpenStreams() == 0 })
}

// TestProgressWithoutSSEIsJSON: a client that accepts only JSON gets JSON;
// the notifications have nowhere to go.
func TestProgressWithoutSSEIsJSON(t *testing.T) {
	leakcheck.Check(t)
	srv, _ := start(t, streamhttp.Options{})
	h := modern("tools/call", "progress")
	h["Accept"] = "application/json"
	resp := post(t, srv, h, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"progress","_meta":{"progressToken":"p","io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`)
	if r := decode(t, resp, http.StatusOK); r.Result == nil {
		t.Errorf("want a JSON result, got %+v", r)
	}
}

// TestSSEOnlyClientGetsSSE: a client that accepts only text/event-stream
// gets its response as one SSE event.
func TestSSEOnlyClientGetsSSE(t *testing.T) {
	leakcheck.Check(t)
	srv, _ := start(t, streamhttp.Options{})
	resp := post(t, srv, hdr{"Accept": "text/event-stream"}, `{"jsonrpc":"2.0","id":1,"method":"ping"}`)
	if resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("Content-Type %q", resp.Header.Get("Content-Type"))
	}
	ch := readSSE(resp.Body)
	if r, ok := next(t, ch, nil); !ok || string(r.ID) != "1" {
		t.Fatalf("want the response, got %+v", r)
	}
	waitEnd(t, ch)
}

// TestListenHoldsUntilClientCancels: subscriptions/listen is a held SSE
// stream: the acknowledgement first, keep-alive comments while quiet, and
// it ends (giving its slot back) when the client goes away.
func TestListenHoldsUntilClientCancels(t *testing.T) {
	leakcheck.Check(t)
	srv, h := start(t, streamhttp.Options{KeepAlive: 10 * time.Millisecond})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	resp := do(t, ctx, http.MethodPost, srv.URL, modern("subscriptions/listen", ""), `{"jsonrpc":"2.0","id":"L1","method":"subscriptions/listen","params":{"notifications":{},`+modernMeta+`}}`)
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("listen: %d %v", resp.StatusCode, resp.Header)
	}
	ch := readSSE(resp.Body)
	comments := 0
	ack, ok := next(t, ch, &comments)
	if !ok || ack.Method != "notifications/subscriptions/acknowledged" || !strings.Contains(string(ack.Params), `"io.modelcontextprotocol/subscriptionId":"L1"`) {
		t.Fatalf("first event: %+v %s", ack, ack.Params)
	}
	for comments < 2 {
		select {
		case ev, ok := <-ch:
			if !ok || !ev.comment {
				t.Fatalf("while quiet: %+v (open %v)", ev, ok)
			}
			comments++
		case <-time.After(5 * time.Second):
			t.Fatal("no keep-alive within 5s")
		}
	}
	if h.OpenStreams() != 1 {
		t.Errorf("%d streams open, want 1", h.OpenStreams())
	}
	cancel()
	eventually(t, "listen ends when the client cancels", func() bool { return h.OpenStreams() == 0 })
}

// TestListenWithoutSSEIsAnError: a listen from a client that does not take
// SSE cannot be held.
func TestListenWithoutSSEIsAnError(t *testing.T) {
	leakcheck.Check(t)
	srv, _ := start(t, streamhttp.Options{})
	h := modern("subscriptions/listen", "")
	h["Accept"] = "application/json"
	resp := post(t, srv, h, `{"jsonrpc":"2.0","id":1,"method":"subscriptions/listen","params":{"notifications":{},`+modernMeta+`}}`)
	if r := decode(t, resp, http.StatusOK); r.Error == nil || r.Error.Code != -32603 {
		t.Errorf("listen without SSE: %+v", r)
	}
}

// TestGetStreamHeldWithKeepAlive: GET with a session opens its standalone
// stream, kept alive with comments until the session ends.
func TestGetStreamHeldWithKeepAlive(t *testing.T) {
	leakcheck.Check(t)
	srv, h := start(t, streamhttp.Options{KeepAlive: 10 * time.Millisecond})
	sid := openSession(t, srv, "2025-11-25")
	resp := do(t, nil, http.MethodGet, srv.URL, hdr{"Mcp-Session-Id": sid, "MCP-Protocol-Version": "2025-11-25", "Accept": "text/event-stream"}, "")
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "text/event-stream" || resp.Header.Get("X-Accel-Buffering") != "no" {
		t.Fatalf("GET: %d %v", resp.StatusCode, resp.Header)
	}
	ch := readSSE(resp.Body)
	select {
	case ev := <-ch:
		if !ev.comment {
			t.Fatalf("want a keep-alive comment, got %+v", ev)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no keep-alive within 5s")
	}
	do(t, nil, http.MethodDelete, srv.URL, hdr{"Mcp-Session-Id": sid}, "").Body.Close()
	waitEnd(t, ch)
	eventually(t, "slot given back", func() bool { return h.OpenStreams() == 0 })
}

// TestGetWithoutSessionIs405: a GET without a session (and any GET from a
// 2026-07-28 client) is 405 with Allow: POST.
func TestGetWithoutSessionIs405(t *testing.T) {
	leakcheck.Check(t)
	srv, _ := start(t, streamhttp.Options{})
	for _, h := range []hdr{{"Accept": "text/event-stream"}, {"Accept": "text/event-stream", "MCP-Protocol-Version": "2026-07-28", "Mcp-Session-Id": "x"}} {
		resp := do(t, nil, http.MethodGet, srv.URL, h, "")
		if resp.Header.Get("Allow") != "POST" {
			t.Errorf("Allow %q", resp.Header.Get("Allow"))
		}
		wantError(t, resp, http.StatusMethodNotAllowed, -32600, "null")
	}
}

// TestOtherMethodsAre405: PUT and the like are 405 naming what is allowed.
func TestOtherMethodsAre405(t *testing.T) {
	leakcheck.Check(t)
	srv, _ := start(t, streamhttp.Options{})
	resp := do(t, nil, http.MethodPut, srv.URL, nil, "")
	if resp.Header.Get("Allow") != "GET, POST, DELETE" {
		t.Errorf("Allow %q", resp.Header.Get("Allow"))
	}
	wantError(t, resp, http.StatusMethodNotAllowed, -32600, "null")
}

// --- Input checks and limits ---

// TestWrongContentTypeIs415: the body must be application/json.
func TestWrongContentTypeIs415(t *testing.T) {
	leakcheck.Check(t)
	srv, _ := start(t, streamhttp.Options{})
	for _, ct := range []string{"text/plain", ""} {
		wantError(t, post(t, srv, hdr{"Content-Type": ct}, `{"jsonrpc":"2.0","id":1,"method":"ping"}`), http.StatusUnsupportedMediaType, -32600, "null")
	}
	resp := post(t, srv, hdr{"Content-Type": "application/json; charset=utf-8"}, `{"jsonrpc":"2.0","id":1,"method":"ping"}`)
	decode(t, resp, http.StatusOK)
}

// TestAcceptExcludingBothIs406: an Accept that allows neither JSON nor SSE
// is 406; a missing Accept or */* is taken leniently.
func TestAcceptExcludingBothIs406(t *testing.T) {
	leakcheck.Check(t)
	srv, _ := start(t, streamhttp.Options{})
	ping := `{"jsonrpc":"2.0","id":1,"method":"ping"}`
	wantError(t, post(t, srv, hdr{"Accept": "text/html"}, ping), http.StatusNotAcceptable, -32600, "1")
	wantError(t, post(t, srv, hdr{"Accept": "application/json;q=0, text/event-stream;q=0"}, ping), http.StatusNotAcceptable, -32600, "1")
	decode(t, post(t, srv, hdr{"Accept": ""}, ping), http.StatusOK)
	decode(t, post(t, srv, hdr{"Accept": "*/*"}, ping), http.StatusOK)
	// A notification needs no Accept.
	resp := post(t, srv, hdr{"Accept": "text/html"}, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	if resp.StatusCode != http.StatusAccepted {
		t.Errorf("notification with Accept text/html: %d", resp.StatusCode)
	}
	resp.Body.Close()
}

// TestHugeBodyIs413: a body over MaxBody is 413.
func TestHugeBodyIs413(t *testing.T) {
	leakcheck.Check(t)
	srv, _ := start(t, streamhttp.Options{MaxBody: 1024})
	body := `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"pad":"` + strings.Repeat("x", 2048) + `"}}`
	wantError(t, post(t, srv, nil, body), http.StatusRequestEntityTooLarge, -32600, "null")
	decode(t, post(t, srv, nil, `{"jsonrpc":"2.0","id":1,"method":"ping"}`), http.StatusOK)
}

// TestTooManyStreamsIs503: beyond MaxStreams a GET stream or a listen is
// 503; a request that merely reports progress falls back to JSON.
func TestTooManyStreamsIs503(t *testing.T) {
	leakcheck.Check(t)
	srv, h := start(t, streamhttp.Options{MaxStreams: 1})
	sid := openSession(t, srv, "2025-11-25")
	get := hdr{"Mcp-Session-Id": sid, "Accept": "text/event-stream"}
	first := do(t, nil, http.MethodGet, srv.URL, get, "")
	if first.StatusCode != http.StatusOK {
		t.Fatalf("first GET: %d", first.StatusCode)
	}
	defer first.Body.Close()
	eventually(t, "first stream open", func() bool { return h.OpenStreams() == 1 })
	wantError(t, do(t, nil, http.MethodGet, srv.URL, get, ""), http.StatusServiceUnavailable, -32603, "null")
	listen := `{"jsonrpc":"2.0","id":5,"method":"subscriptions/listen","params":{"notifications":{},` + modernMeta + `}}`
	wantError(t, post(t, srv, modern("subscriptions/listen", ""), listen), http.StatusServiceUnavailable, -32603, "5")
	resp := post(t, srv, modern("tools/call", "progress"), `{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"progress","_meta":{"progressToken":"p","io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`)
	if r := decode(t, resp, http.StatusOK); r.Result == nil {
		t.Errorf("progress call with no stream slot: %+v", r)
	}
}

// TestTooManyRequestsIs503: beyond MaxInFlight a request is answered 503
// with Retry-After before it is handled; notifications still pass, and the
// slot comes back when the request in progress ends.
func TestTooManyRequestsIs503(t *testing.T) {
	leakcheck.Check(t)
	srv, _ := start(t, streamhttp.Options{MaxInFlight: 1, Logger: discard()})
	sid := openSession(t, srv, "2025-11-25")
	h := hdr{"Mcp-Session-Id": sid, "MCP-Protocol-Version": "2025-11-25"}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	held := make(chan *http.Response, 1)
	go func() { // not do: it fails the test when the call is cancelled
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL, strings.NewReader(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"wait"}}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		for k, v := range h {
			req.Header.Set(k, v)
		}
		resp, _ := http.DefaultClient.Do(req)
		held <- resp
	}()
	ping := `{"jsonrpc":"2.0","id":8,"method":"ping"}`
	var refused *http.Response
	eventually(t, "a request refused while the call runs", func() bool {
		resp := post(t, srv, h, ping)
		if resp.StatusCode == http.StatusOK {
			resp.Body.Close()
			return false
		}
		refused = resp
		return true
	})
	if got := refused.Header.Get("Retry-After"); got != "1" {
		t.Errorf("Retry-After %q, want 1", got)
	}
	wantError(t, refused, http.StatusServiceUnavailable, -32603, "8")
	note := post(t, srv, h, `{"jsonrpc":"2.0","method":"notifications/roots/list_changed"}`)
	if note.StatusCode != http.StatusAccepted {
		t.Errorf("a notification while full: %d, want 202", note.StatusCode)
	}
	note.Body.Close()
	cancel()
	if resp := <-held; resp != nil {
		resp.Body.Close()
	}
	eventually(t, "the slot back", func() bool {
		resp := post(t, srv, h, ping)
		defer resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	})
}

// TestJSONAnswersDeclareLength: a JSON answer carries its Content-Length,
// however long (net/http alone would send one over 2 kB chunked).
func TestJSONAnswersDeclareLength(t *testing.T) {
	leakcheck.Check(t)
	srv, _ := start(t, streamhttp.Options{})
	for _, body := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":"` + strings.Repeat("x", 4096) + `","method":"ping"}`, // the answer repeats the id
	} {
		resp := post(t, srv, hdr{"Accept": "application/json"}, body)
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.ContentLength != int64(len(b)) || len(resp.TransferEncoding) != 0 || len(b) == 0 {
			t.Errorf("%.40s: Content-Length %d, Transfer-Encoding %v, body %d bytes", body, resp.ContentLength, resp.TransferEncoding, len(b))
		}
	}
}

// TestPanicIs500: a panic while serving is 500 with -32603, and the
// server keeps serving.
func TestPanicIs500(t *testing.T) {
	leakcheck.Check(t)
	srv, _ := start(t, streamhttp.Options{Logger: discard()})
	wantError(t, post(t, srv, nil, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"boom"}}`), http.StatusInternalServerError, -32603, "1")
	decode(t, post(t, srv, nil, `{"jsonrpc":"2.0","id":2,"method":"ping"}`), http.StatusOK)
}

// --- DNS rebinding ---

// TestForeignOriginIs403: an Origin that is neither loopback nor allowed
// is 403; loopback origins on any port and configured ones are served.
func TestForeignOriginIs403(t *testing.T) {
	leakcheck.Check(t)
	srv, _ := start(t, streamhttp.Options{AllowedOrigins: []string{"https://app.example.com"}})
	ping := `{"jsonrpc":"2.0","id":1,"method":"ping"}`
	for _, o := range []string{"http://evil.example.com", "null", "http://localhost.evil.com", "file://localhost"} {
		wantError(t, post(t, srv, hdr{"Origin": o}, ping), http.StatusForbidden, -32600, "null")
	}
	for _, o := range []string{"http://localhost:3000", "https://127.0.0.1", "http://[::1]:8080", "https://app.example.com", "HTTPS://APP.example.com"} {
		decode(t, post(t, srv, hdr{"Origin": o}, ping), http.StatusOK)
	}
}

// TestForeignHostIs403: on a loopback listener the Host must name this
// machine (or an allowed origin's host).
func TestForeignHostIs403(t *testing.T) {
	leakcheck.Check(t)
	srv, _ := start(t, streamhttp.Options{AllowedOrigins: []string{"http://mcp.internal:7777"}})
	ping := `{"jsonrpc":"2.0","id":1,"method":"ping"}`
	wantError(t, post(t, srv, hdr{"Host": "evil.example.com"}, ping), http.StatusForbidden, -32600, "null")
	wantError(t, post(t, srv, hdr{"Host": "evil.example.com:80"}, ping), http.StatusForbidden, -32600, "null")
	for _, host := range []string{"localhost", "localhost:7777", "127.0.0.1:1", "[::1]:7777", "mcp.internal:7777"} {
		decode(t, post(t, srv, hdr{"Host": host}, ping), http.StatusOK)
	}
}

// TestDNSRebindingScenario replays the conformance suite's
// dns-rebinding-protection scenario (0.2.0-alpha.12) for every revision of
// Streamable HTTP: Host and Origin evil.example.com must be 4xx; the
// server's own host must be 2xx, and for legacy revisions the initialized
// notification with the minted session too.
func TestDNSRebindingScenario(t *testing.T) {
	leakcheck.Check(t)
	srv, _ := start(t, streamhttp.Options{})
	own := strings.TrimPrefix(srv.URL, "http://")
	for _, v := range append(revs.Strings(revs.Modern()), streamableLegacy()...) {
		body, method := initialize(v), "initialize"
		if revs.IsModern(v) {
			body, method = `{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"`+v+`","io.modelcontextprotocol/clientInfo":{"name":"conformance-dns-rebinding-test","version":"1.0.0"},"io.modelcontextprotocol/clientCapabilities":{}}}}`, "server/discover"
		}
		h := func(host string) hdr {
			return hdr{"Host": host, "Origin": "http://" + host, "MCP-Protocol-Version": v, "Mcp-Method": method}
		}
		resp := post(t, srv, h("evil.example.com"), body)
		resp.Body.Close() // else its connection is never given back
		if resp.StatusCode < 400 || resp.StatusCode >= 500 {
			t.Errorf("%s: evil host answered %d", v, resp.StatusCode)
		}
		resp = post(t, srv, h(own), body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("%s: own host answered %d", v, resp.StatusCode)
		}
		if revs.IsModern(v) {
			continue
		}
		nh := h(own)
		nh["Mcp-Method"] = "notifications/initialized"
		nh["Mcp-Session-Id"] = resp.Header.Get("Mcp-Session-Id")
		resp = post(t, srv, nh, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
		resp.Body.Close()
		if resp.StatusCode != http.StatusAccepted {
			t.Errorf("%s: initialized notification answered %d", v, resp.StatusCode)
		}
	}
}

// --- Close ---

// TestCloseEndsHeldStreams: Close ends GET streams and listens (the listen
// gets notifications/cancelled and its final result first) and refuses new requests with 503; a call
// already running finishes.
func TestCloseEndsHeldStreams(t *testing.T) {
	leakcheck.Check(t)
	srv, h := start(t, streamhttp.Options{})
	sid := openSession(t, srv, "2025-11-25")
	get := do(t, nil, http.MethodGet, srv.URL, hdr{"Mcp-Session-Id": sid, "Accept": "text/event-stream"}, "")
	getCh := readSSE(get.Body)
	listen := post(t, srv, modern("subscriptions/listen", ""), `{"jsonrpc":"2.0","id":"L","method":"subscriptions/listen","params":{"notifications":{},`+modernMeta+`}}`)
	listenCh := readSSE(listen.Body)
	if ack, ok := next(t, listenCh, nil); !ok || ack.Method != "notifications/subscriptions/acknowledged" {
		t.Fatalf("listen ack: %+v", ack)
	}
	var wg sync.WaitGroup
	wg.Add(1)
	var slow reply
	go func() {
		defer wg.Done()
		resp := post(t, srv, modern("tools/call", "slow"), `{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"slow",`+modernMeta+`}}`)
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		json.Unmarshal(b, &slow)
	}()
	time.Sleep(50 * time.Millisecond) // let the slow call start
	h.Close()

	// mcpx ends the stream: notifications/cancelled naming the listen id
	// first, then the listen's result (docs/revisions.md#subscriptionslisten).
	if r, ok := next(t, listenCh, nil); !ok || r.Method != "notifications/cancelled" {
		t.Errorf("listen's event after Close: %+v (open %v)", r, ok)
	}
	if r, ok := next(t, listenCh, nil); !ok || string(r.ID) != `"L"` || r.Result == nil {
		t.Errorf("listen's last event: %+v (open %v)", r, ok)
	}
	waitEnd(t, listenCh)
	waitEnd(t, getCh)
	wg.Wait()
	if slow.Result == nil {
		t.Errorf("the running call did not finish: %+v", slow)
	}
	wantError(t, post(t, srv, nil, `{"jsonrpc":"2.0","id":1,"method":"ping"}`), http.StatusServiceUnavailable, -32603, "null")
	if h.OpenStreams() != 0 || h.OpenSessions() != 0 {
		t.Errorf("after Close: %d streams, %d sessions", h.OpenStreams(), h.OpenSessions())
	}
}

// TestModernMemberInBatchRefused: 2026-07-28 has no batches, so a member
// whose _meta names a protocol version is answered -32600 on its own
// instead of being served without the header checks it would get alone;
// the other members are served. A batch under the 2026-07-28 header is
// refused whole.
func TestModernMemberInBatchRefused(t *testing.T) {
	leakcheck.Check(t)
	srv, _ := start(t, streamhttp.Options{})
	call := `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"progress",` + modernMeta + `}}`
	legacyMeta := `{"jsonrpc":"2.0","id":3,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2025-11-25"}}}`
	note := `{"jsonrpc":"2.0","method":"notifications/initialized","params":{` + modernMeta + `}}`
	batch := `[{"jsonrpc":"2.0","id":1,"method":"ping"},` + call + `,` + legacyMeta + `,` + note + `]`
	sid := openSession(t, srv, "2025-03-26")
	for _, h := range []hdr{nil, {"Mcp-Session-Id": sid, "MCP-Protocol-Version": "2025-03-26"}} {
		resp := post(t, srv, h, batch)
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		var arr []reply
		if resp.StatusCode != http.StatusOK || json.Unmarshal(b, &arr) != nil || len(arr) != 4 {
			t.Fatalf("batch with 2026-07-28 members (%v): %d %s", h, resp.StatusCode, b)
		}
		if arr[0].Error != nil || string(arr[0].ID) != "1" {
			t.Errorf("the ping was not served: %s", b)
		}
		for i, id := range []string{"2", "3", "null"} {
			r := arr[i+1]
			if r.Error == nil || r.Error.Code != -32600 || string(r.ID) != id || !strings.Contains(r.Error.Message, "batch") {
				t.Errorf("member %s: want -32600 about batches, got %s", id, b)
			}
		}
	}
	resp := post(t, srv, modern("tools/call", "progress"), "["+call+"]")
	wantError(t, resp, http.StatusBadRequest, -32600, "null")
}
