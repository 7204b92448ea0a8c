package main

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"
)

// TestBuiltinStateKey: `mcpx stdio --builtin fixture` seals the
// requestState of its input_required rounds with MCPX_STATE_KEY, so a
// round begun in one process continues in another holding the same key
// (replicas), and is refused, saying why, by one with another key.
func TestBuiltinStateKey(t *testing.T) {
	const meta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{}},"io.modelcontextprotocol/clientInfo":{"name":"t","version":"1"}}`
	call := func(params string) (result struct {
		ResultType    string
		InputRequests map[string]json.RawMessage
		RequestState  string
	}, rpcErr string) {
		t.Helper()
		var out, errOut bytes.Buffer
		in := strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"test_input_required_result_multi_round","arguments":{},` + params + meta + `}}` + "\n")
		if code := runServe("stdio", []string{"--builtin", "fixture"}, in, &out, &errOut); code != 0 {
			t.Fatalf("exit %d: %s", code, errOut.String())
		}
		var resp struct {
			Result json.RawMessage
			Error  *struct{ Message string }
		}
		if err := json.Unmarshal(out.Bytes(), &resp); err != nil {
			t.Fatalf("answer %q: %v", out.String(), err)
		}
		if resp.Error != nil {
			return result, resp.Error.Message
		}
		_ = json.Unmarshal(resp.Result, &result)
		return result, ""
	}
	key := func(b byte) string { return base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{b}, 32)) }
	t.Setenv("MCPX_STATE_KEY", key(1))
	first, _ := call("")
	if first.ResultType != "input_required" || first.InputRequests["step1"] == nil || first.RequestState == "" {
		t.Fatalf("round 1 = %+v", first)
	}
	retry := `"inputResponses":{"step1":{"action":"accept","content":{"name":"Alice"}}},"requestState":"` + first.RequestState + `",`
	// Another process, the same key: the state opens, step 2 is asked.
	if second, e := call(retry); second.InputRequests["step2"] == nil {
		t.Fatalf("round 2 in another process with the same key = %+v, %q; want step2 asked", second, e)
	}
	t.Setenv("MCPX_STATE_KEY", key(2))
	if _, e := call(retry); !strings.Contains(e, "sealed under a key this mcpx does not hold") {
		t.Fatalf("round 2 under another key: %q; want the state refused", e)
	}
}
