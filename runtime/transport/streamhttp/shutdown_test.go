package streamhttp_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mcpx-dev/mcpx/runtime/transport/streamhttp"
	"github.com/mcpx-dev/mcpx/testkit/leakcheck"
)

// TestShutdownAnswersRunningRequests: a tools/call still running when
// ListenAndServe's context ends gets ShutdownGrace to finish, then its
// answer, a JSON-RPC error saying the server is shutting down, before the
// server stops; ListenAndServe returns nil (a clean shutdown), within the
// grace and well within ShutdownTimeout. So does a request of a legacy
// session, and a batch member.
func TestShutdownAnswersRunningRequests(t *testing.T) {
	leakcheck.Check(t)
	h := streamhttp.New(newEdge(), streamhttp.Options{ShutdownGrace: 300 * time.Millisecond})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	urls := make(chan string, 1)
	done := make(chan error, 1)
	go func() { done <- streamhttp.ListenAndServe(ctx, "127.0.0.1:0", h, func(u string) { urls <- u }) }()
	url := <-urls

	type answer struct {
		status int
		body   []byte
	}
	call := func(hd hdr, body string) <-chan answer {
		ch := make(chan answer, 1)
		go func() {
			resp := do(t, nil, http.MethodPost, url, hd, body)
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			ch <- answer{resp.StatusCode, b}
		}()
		return ch
	}
	modernCall := call(modern("tools/call", "wait"), `{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"wait",`+modernMeta+`}}`)
	// A legacy session: its initialize, then a call on it and a batch.
	resp := do(t, nil, http.MethodPost, url, nil, initialize("2025-11-25"))
	sid := resp.Header.Get("Mcp-Session-Id")
	resp.Body.Close()
	legacy := hdr{"Mcp-Session-Id": sid, "MCP-Protocol-Version": "2025-11-25"}
	legacyCall := call(legacy, `{"jsonrpc":"2.0","id":"x","method":"tools/call","params":{"name":"wait"}}`)
	resp = do(t, nil, http.MethodPost, url, nil, initialize("2025-03-26"))
	sid2 := resp.Header.Get("Mcp-Session-Id")
	resp.Body.Close()
	batch := call(hdr{"Mcp-Session-Id": sid2, "MCP-Protocol-Version": "2025-03-26", "Accept": "application/json"},
		`[{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"wait"}},{"jsonrpc":"2.0","id":2,"method":"ping"}]`)
	time.Sleep(200 * time.Millisecond) // let the calls start

	began := time.Now()
	cancel()
	check := func(what string, ch <-chan answer, id string) {
		t.Helper()
		var a answer
		select {
		case a = <-ch:
		case <-time.After(streamhttp.ShutdownTimeout):
			t.Fatalf("%s: no answer within ShutdownTimeout", what)
		}
		var r reply
		if err := json.Unmarshal(a.body, &r); err != nil {
			t.Fatalf("%s: answered %d %q, not a JSON-RPC message", what, a.status, a.body)
		}
		if a.status != http.StatusOK || r.Error == nil || r.Error.Code != -32603 || !strings.Contains(r.Error.Message, "shutting down") || string(r.ID) != id {
			t.Errorf("%s: answered %d %s; want a -32603 error saying the server is shutting down, id %s", what, a.status, a.body, id)
		}
	}
	check("a 2026-07-28 call", modernCall, "9")
	check("a legacy session's call", legacyCall, `"x"`)
	a := <-batch
	var rs []reply
	if err := json.Unmarshal(a.body, &rs); err != nil || len(rs) == 0 || rs[0].Error == nil || !strings.Contains(rs[0].Error.Message, "shutting down") {
		t.Errorf("batch: answered %d %s; want its call's error saying the server is shutting down", a.status, a.body)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("ListenAndServe after answering every request: %v; want nil (a clean shutdown)", err)
		}
	case <-time.After(streamhttp.ShutdownTimeout + time.Second):
		t.Fatal("ListenAndServe did not return")
	}
	if d := time.Since(began); d > 2*time.Second {
		t.Errorf("shutdown took %s with a grace of 300ms", d)
	}
}
