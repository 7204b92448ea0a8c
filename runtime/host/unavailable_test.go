package host_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"

	"github.com/mcpx-dev/mcpx/runtime/requeststate"
)

// TestStoreUnavailable: with the task store's Redis gone, what needs it
// fails saying so (a 2026-07-28 request with 503 and Retry-After, a
// legacy session's with -32603 and 200, tasks/list no longer blaming the
// cursor), what does not keeps working (a plain tools/call; a call that
// would have become a task is answered inline), and once Redis is back
// the task started before is there again, without restarting mcpx.
func TestStoreUnavailable(t *testing.T) {
	m := miniredis.RunT(t)
	url := serveReplica(t, "redis://"+m.Addr(), requeststate.Random())
	const meta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}}}}`
	_, _, msg := rpc(t, url, "", modernHeaders("tools/call", "countdown"), `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{`+meta+`,"name":"countdown","arguments":{"seconds":1}}}`)
	res, _ := msg["result"].(map[string]any)
	id, _ := res["taskId"].(string)
	if id == "" {
		t.Fatalf("no task: %v", msg)
	}
	const rev = "2025-11-25"
	sid := legacySessionAt(t, url, "", rev)
	legacy := map[string]string{"Mcp-Session-Id": sid, "MCP-Protocol-Version": rev}
	get := `{"jsonrpc":"2.0","id":2,"method":"tasks/get","params":{` + meta + `,"taskId":"` + id + `"}}`

	m.Close()

	st, h, msg := rpc(t, url, "", modernHeaders("tasks/get", id), get)
	code, text := errorOf(msg)
	if st != http.StatusServiceUnavailable || h.Get("Retry-After") == "" || code != -32603 || !strings.Contains(text, "task store is unavailable") {
		t.Errorf("2026-07-28 tasks/get with Redis down: %d Retry-After=%q %v %q", st, h.Get("Retry-After"), code, text)
	}
	st, _, msg = rpc(t, url, "", legacy, `{"jsonrpc":"2.0","id":3,"method":"tasks/get","params":{"taskId":"`+id+`"}}`)
	if code, text := errorOf(msg); st != http.StatusOK || code != -32603 || !strings.Contains(text, "unavailable") {
		t.Errorf("2025-11-25 tasks/get with Redis down: %d %v %q", st, code, text)
	}
	_, _, msg = rpc(t, url, "", legacy, `{"jsonrpc":"2.0","id":4,"method":"tasks/list","params":{}}`)
	if code, text := errorOf(msg); code != -32603 || !strings.Contains(text, "unavailable") {
		t.Errorf("2025-11-25 tasks/list with Redis down: %v %q", code, text)
	}
	_, _, msg = rpc(t, url, "", legacy, `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"echo","arguments":{"text":"x"},"task":{"ttl":60000}}}`)
	if code, text := errorOf(msg); code != -32603 || !strings.Contains(text, "unavailable") {
		t.Errorf("2025-11-25 task-augmented call with Redis down: %v %q", code, text)
	}
	// Needing no store: a plain call, on either flavour of client.
	st, _, msg = rpc(t, url, "", modernHeaders("tools/call", "echo"), `{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{`+meta+`,"name":"echo","arguments":{"text":"plain"}}}`)
	if st != http.StatusOK || !strings.Contains(strings.ToLower(toJSON(msg)), "plain") {
		t.Errorf("a plain 2026-07-28 tools/call with Redis down: %d %v", st, msg)
	}
	_, _, msg = rpc(t, url, "", legacy, `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo","arguments":{"text":"plain"}}}`)
	if msg["result"] == nil {
		t.Errorf("a plain 2025-11-25 tools/call with Redis down: %v", msg)
	}
	// A call that would have become a task is answered when it ends.
	st, _, msg = rpc(t, url, "", modernHeaders("tools/call", "countdown"), `{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{`+meta+`,"name":"countdown","arguments":{"seconds":1}}}`)
	if res, _ := msg["result"].(map[string]any); st != http.StatusOK || res == nil || res["taskId"] != nil {
		t.Errorf("countdown with Redis down: %d %v", st, msg)
	}

	if err := m.Restart(); err != nil { // same address, same data
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		st, _, msg := rpc(t, url, "", modernHeaders("tasks/get", id), get)
		if res, _ := msg["result"].(map[string]any); st == http.StatusOK && res != nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("tasks/get after Redis is back: %d %v", st, msg)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func toJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
