package gatewaytest

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

// TestResultLane: through the gateway, a 2026-07-28 client's tools/call
// of a 2026-07-28 upstream's tool answered with text blocks crosses as
// the upstream wrote it (runtime/edge/lane.go: the upstream's spacing
// kept), in the envelope mcpx writes (its serverInfo in _meta in place
// of the upstream's, the upstream's other keys kept, resultType
// "complete"); one with an annotation goes the typed way (re-encoded).
// Both are the same answer to the client.
func TestResultLane(t *testing.T) {
	const asWritten = `{"content" : [ {"text" : "crossed as written", "type" : "text"} ], "_meta" : {"io.modelcontextprotocol/serverInfo":{"name":"up","version":"1"},"k":"v"}}`
	const annotated = `{"content":[{"type":"text","text":"crossed as written","annotations":{"priority":0.5}}],"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"up","version":"1"},"k":"v"}}`
	url := rawModernUpstream(t, func(_ *http.Request, m *rawCall, reply rawReply) {
		switch {
		case m.Method == "server/discover":
			reply.result(discoverResult("up", `{"tools":{}}`))
		case m.Method == "tools/list":
			reply.result(toolsResult("plain", "annotated"))
		case m.Method == "tools/call" && m.Params.Name == "plain":
			reply.result(asWritten)
		case m.Method == "tools/call" && m.Params.Name == "annotated":
			reply.result(annotated)
		default:
			reply.error(-32601, "no "+m.Method+" here")
		}
	})
	gw, _ := readyGateway(t, "lane.json", `{"mcpServers": {"up": {"url": "`+url+`"}}}`, "", nil)
	c := newModernClient(t, gw, "http")
	call := func(tool string) (raw string, result map[string]json.RawMessage) {
		a := c.sendParams("tools/call", "up__"+tool, `{`+modernMeta+`,"name":"up__`+tool+`","arguments":{}}`)
		var m struct{ Result map[string]json.RawMessage }
		if err := json.Unmarshal([]byte(a.raw), &m); err != nil || m.Result == nil {
			t.Fatalf("%s: no result in %s (%v)", tool, a.raw, err)
		}
		return a.raw, m.Result
	}
	info, _ := json.Marshal(serverInfo)
	for _, tool := range []string{"plain", "annotated"} {
		raw, r := call(tool)
		if lane := strings.Contains(raw, `{"text" : "crossed as written"`); lane != (tool == "plain") {
			t.Errorf("%s: crossed as written %v, want %v: %s", tool, lane, tool == "plain", raw)
		}
		var meta map[string]json.RawMessage
		json.Unmarshal(r["_meta"], &meta)
		if string(r["resultType"]) != `"complete"` || string(meta["k"]) != `"v"` || string(meta["io.modelcontextprotocol/serverInfo"]) != string(info) {
			t.Errorf("%s: resultType %s, _meta %s; want complete, k v and mcpx's serverInfo %s", tool, r["resultType"], r["_meta"], info)
		}
		var content []struct{ Type, Text string }
		if json.Unmarshal(r["content"], &content) != nil || len(content) != 1 || content[0].Text != "crossed as written" {
			t.Errorf("%s: content %s", tool, r["content"])
		}
	}
}
