package gatewaytest

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// laneTools answers m when it calls the tool "plain" (text in the
// upstream's own spacing, which only the lane keeps) or "annotated" (the
// same text with an annotation, which goes the typed way), each result
// with _meta meta; false for any other request.
func laneTools(m *rawCall, reply rawReply, meta string) bool {
	switch {
	case m.Method == "tools/call" && m.Params.Name == "plain":
		reply.result(`{"content" : [ {"text" : "crossed as written", "type" : "text"} ], "_meta" : ` + meta + `}`)
	case m.Method == "tools/call" && m.Params.Name == "annotated":
		reply.result(`{"content":[{"type":"text","text":"crossed as written","annotations":{"priority":0.5}}],"_meta":` + meta + `}`)
	default:
		return false
	}
	return true
}

// TestResultLane: through the gateway, a 2026-07-28 client's tools/call
// of a 2026-07-28 upstream's tool answered with text blocks crosses as
// the upstream wrote it (runtime/edge/lane.go: the upstream's spacing
// kept), in the envelope mcpx writes (its serverInfo in _meta in place
// of the upstream's, the upstream's other keys kept, resultType
// "complete"); one with an annotation goes the typed way (re-encoded).
// Both are the same answer to the client.
func TestResultLane(t *testing.T) {
	url := rawModernUpstream(t, func(_ *http.Request, m *rawCall, reply rawReply) {
		switch {
		case m.Method == "server/discover":
			reply.result(discoverResult("up", `{"tools":{}}`))
		case m.Method == "tools/list":
			reply.result(toolsResult("plain", "annotated"))
		case !laneTools(m, reply, `{"io.modelcontextprotocol/serverInfo":{"name":"up","version":"1"},"k":"v"}`):
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

// TestResultLaneAcrossRevisions: the lane between two revisions. A
// 2025-11-25 upstream answers a 2025-06-18 client's tools/call with text
// blocks: the result crosses as the upstream wrote it; an annotated one
// goes the typed way (re-encoded). (A 2026-07-28 client's call to a
// legacy upstream is parked, for the questions the upstream may ask by
// request, and a parked call has no lane.)
func TestResultLaneAcrossRevisions(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			w.WriteHeader(http.StatusMethodNotAllowed)
			return
		}
		var m rawCall
		if json.NewDecoder(r.Body).Decode(&m) != nil || m.ID == nil {
			w.WriteHeader(http.StatusAccepted)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		reply := rawReply{w: w, id: m.ID}
		switch {
		case m.Method == "initialize":
			reply.result(`{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"up","version":"1"}}`)
		case m.Method == "tools/list":
			reply.result(`{"tools":[{"name":"plain","inputSchema":{"type":"object"}},{"name":"annotated","inputSchema":{"type":"object"}}]}`)
		case !laneTools(&m, reply, `{"k":"v"}`):
			reply.error(-32601, "no "+m.Method+" here")
		}
	}))
	t.Cleanup(srv.Close)
	gw, _ := readyGateway(t, "lane.json", `{"mcpServers": {"up": {"url": "`+srv.URL+`"}}}`, "", nil)
	r, w := serveStdio(t, gw, "2025-06-18")
	t.Cleanup(func() { w.Close(); r.Close() })
	lines := bufio.NewScanner(r)
	send := func(msg string) string {
		if _, err := io.WriteString(w, msg+"\n"); err != nil {
			t.Fatal(err)
		}
		if strings.Contains(msg, `"method":"notifications/`) {
			return ""
		}
		if !lines.Scan() {
			t.Fatalf("no answer to %s: %v", msg, lines.Err())
		}
		return lines.Text()
	}
	send(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	for i, tool := range []string{"plain", "annotated"} {
		raw := send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"up__%s","arguments":{}}}`, i+1, tool))
		if lane := strings.Contains(raw, `{"text" : "crossed as written"`); lane != (tool == "plain") {
			t.Errorf("%s: crossed as written %v, want %v: %s", tool, lane, tool == "plain", raw)
		}
		var m struct {
			Result struct {
				Meta    map[string]json.RawMessage `json:"_meta"`
				Content []struct{ Type, Text string }
			}
		}
		if err := json.Unmarshal([]byte(raw), &m); err != nil {
			t.Fatalf("%s: %v in %s", tool, err, raw)
		}
		if len(m.Result.Meta) != 1 || string(m.Result.Meta["k"]) != `"v"` || len(m.Result.Content) != 1 || m.Result.Content[0].Text != "crossed as written" {
			t.Errorf("%s: %s", tool, raw)
		}
	}
}
