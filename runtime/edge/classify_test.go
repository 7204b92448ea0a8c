package edge_test

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/mcpx-dev/mcpx/generated/mcp"
	"github.com/mcpx-dev/mcpx/runtime/edge"
	"github.com/mcpx-dev/mcpx/runtime/jsonrpc"
)

// TestClassify: the one decision of a message's revision, as the
// transports ask it (streamable-http.mdx, Protocol Version Header).
func TestClassify(t *testing.T) {
	const (
		modernV = `{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}`
		// A request naming a revision mcpx does not serve is classified in
		// the newest modern one, which its refusal is written in.
		unknown = `{"_meta":{"io.modelcontextprotocol/protocolVersion":"v999","io.modelcontextprotocol/clientCapabilities":{}}}`
	)
	request := func(params string) *jsonrpc.Message {
		return jsonrpc.Request(json.RawMessage(`1`), "tools/list", json.RawMessage(params))
	}
	for _, tc := range []struct {
		name    string
		m       *jsonrpc.Message
		seen    edge.Seen
		refused int64 // the code of a refusal, 0 for none
		modern  bool
		headers bool
		rev     mcp.Revision
	}{
		{"stdio, _meta names 2026-07-28", request(modernV), edge.Seen{Default: edge.Oldest}, 0, true, true, "2026-07-28"},
		{"HTTP, header and _meta agree", request(modernV), edge.Seen{HTTP: true, Header: "2026-07-28"}, 0, true, true, "2026-07-28"},
		{"HTTP, _meta without the header", request(modernV), edge.Seen{HTTP: true}, jsonrpc.HeaderMismatch, true, false, "2026-07-28"},
		{"header and _meta disagree", request(modernV), edge.Seen{HTTP: true, Header: "2025-11-25"}, jsonrpc.HeaderMismatch, true, false, "2026-07-28"},
		{"disagreeing on a version mcpx does not serve", request(unknown), edge.Seen{HTTP: true, Header: "2025-11-25"}, jsonrpc.HeaderMismatch, true, false, edge.NewestModern},
		{"agreeing on a version mcpx does not serve (-32022 later)", request(unknown), edge.Seen{HTTP: true, Header: "v999"}, 0, true, false, edge.NewestModern},
		{"a header naming no revision", request(`{}`), edge.Seen{HTTP: true, Header: "1999-01-01", Default: edge.Headerless}, jsonrpc.InvalidRequest, false, false, edge.Headerless},
		{"the modern header without _meta (-32602 later)", request(`{}`), edge.Seen{HTTP: true, Header: "2026-07-28"}, 0, true, true, "2026-07-28"},
		{"a legacy header", request(`{}`), edge.Seen{HTTP: true, Header: "2025-06-18", Default: edge.Headerless}, 0, false, false, "2025-06-18"},
		{"no header", request(`{}`), edge.Seen{HTTP: true, Default: edge.Headerless}, 0, false, false, edge.Headerless},
		{"a notification is not held to _meta", jsonrpc.Notification("notifications/initialized", json.RawMessage(modernV)), edge.Seen{HTTP: true, Header: "2025-11-25"}, 0, true, false, "2026-07-28"},
		{"a GET names no body", nil, edge.Seen{HTTP: true, Header: "2026-07-28"}, 0, true, false, "2026-07-28"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cl := edge.Classify(tc.m, tc.seen)
			e, status := cl.Refusal()
			switch {
			case tc.refused == 0 && e != nil:
				t.Errorf("refused: %d %s", e.Code, e.Message)
			case tc.refused != 0 && (e == nil || e.Code != tc.refused || status != http.StatusBadRequest):
				t.Errorf("refusal %+v %d, want %d and 400", e, status, tc.refused)
			}
			if cl.Modern() != tc.modern || cl.ChecksHeaders() != tc.headers || cl.Revision(nil) != tc.rev {
				t.Errorf("modern %v, checks headers %v, revision %s; want %v, %v, %s", cl.Modern(), cl.ChecksHeaders(), cl.Revision(nil), tc.modern, tc.headers, tc.rev)
			}
		})
	}

	// A legacy session's negotiated revision governs its requests.
	c := newClient(t)
	c.initialize("2025-06-18")
	cl := edge.Classify(request(`{}`), edge.Seen{HTTP: true, Header: "2025-03-26", Default: edge.Headerless})
	if rev := cl.Revision(c.sess); rev != "2025-06-18" {
		t.Errorf("on a 2025-06-18 session: %s", rev)
	}
}
