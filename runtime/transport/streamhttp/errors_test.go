package streamhttp_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/mcpx-dev/mcpx/runtime/transport/streamhttp"
	"github.com/mcpx-dev/mcpx/testkit/leakcheck"
)

// TestErrorMessagesAreClearAndBounded: JSON nested too deeply is said to
// be that, not invalid; a _meta of the wrong type is described in JSON
// terms, not Go types; a long value the client sent is repeated only in
// part.
func TestErrorMessagesAreClearAndBounded(t *testing.T) {
	leakcheck.Check(t)
	srv, _ := start(t, streamhttp.Options{})
	deep := strings.Repeat("[", 10001) + strings.Repeat("]", 10001)
	r := wantError(t, post(t, srv, nil, `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"a":`+deep+`}}`), http.StatusBadRequest, -32700, "null")
	if !strings.Contains(r.Error.Message, "10000 levels deep") {
		t.Errorf("too deep: %q", r.Error.Message)
	}

	for _, h := range []hdr{nil, modern("ping", "")} {
		r = decode(t, post(t, srv, h, `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"_meta":"x"}}`), http.StatusOK)
		if r.Error == nil || r.Error.Code != -32602 || strings.Contains(r.Error.Message, "Go ") || !strings.Contains(r.Error.Message, "expected an object, not a string") {
			t.Errorf("_meta of the wrong type (%v): %+v", h, r.Error)
		}
	}

	long := strings.Repeat("v", 4<<10)
	for what, resp := range map[string]*http.Response{
		"method":         post(t, srv, nil, `{"jsonrpc":"2.0","id":1,"method":"`+long+`"}`),
		"version header": post(t, srv, hdr{"MCP-Protocol-Version": long}, `{"jsonrpc":"2.0","id":1,"method":"ping"}`),
		"_meta version":  post(t, srv, nil, `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"`+long+`"}}}`),
		"Mcp-Method":     post(t, srv, hdr{"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": long}, `{"jsonrpc":"2.0","id":1,"method":"ping","params":{`+modernMeta+`}}`),
		"session id":     post(t, srv, hdr{"Mcp-Session-Id": long}, `{"jsonrpc":"2.0","id":1,"method":"ping"}`),
	} {
		r := decode(t, resp, resp.StatusCode)
		if r.Error == nil {
			t.Errorf("%s: no error", what)
			continue
		}
		if len(r.Error.Message) > 400 || !strings.Contains(r.Error.Message, "…") {
			t.Errorf("%s: a %d-byte message: %.200s", what, len(r.Error.Message), r.Error.Message)
		}
		if v, _ := r.Error.Data["requested"].(string); len(v) > 200 {
			t.Errorf("%s: data repeats %d bytes", what, len(v))
		}
	}
}
