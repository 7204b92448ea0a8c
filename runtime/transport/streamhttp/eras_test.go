package streamhttp_test

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/mcpx-dev/mcpx/runtime/edge"
	"github.com/mcpx-dev/mcpx/runtime/transport/streamhttp"
	"github.com/mcpx-dev/mcpx/testkit/closedworld"
)

// TestEachModernRevisionOverHTTP: for every modern revision in the
// tables, a request whose header and _meta name it is served statelessly
// in it (closed-world valid for it), and one whose header names another
// modern revision than its _meta is -32020.
func TestEachModernRevisionOverHTTP(t *testing.T) {
	v, err := closedworld.Default()
	if err != nil {
		t.Fatal(err)
	}
	srv, h := start(t, streamhttp.Options{})
	for _, rev := range edge.ModernRevisions {
		meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"` + string(rev) + `","io.modelcontextprotocol/clientCapabilities":{}}`
		hd := hdr{"MCP-Protocol-Version": string(rev), "Mcp-Method": "tools/list"}
		resp := post(t, srv, hd, `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{`+meta+`}}`)
		r := decode(t, resp, http.StatusOK)
		raw, _ := json.Marshal(r.Result)
		if err := v.Validate(string(rev), "ListToolsResult", raw); err != nil {
			t.Errorf("%s tools/list: %v", rev, err)
		}
		for _, other := range edge.ModernRevisions {
			if other == rev {
				continue
			}
			hd["MCP-Protocol-Version"] = string(other)
			wantError(t, post(t, srv, hd, `{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{`+meta+`}}`), http.StatusBadRequest, -32020, "2")
		}
	}
	if h.OpenSessions() != 0 {
		t.Error("a modern request minted a session")
	}
}
