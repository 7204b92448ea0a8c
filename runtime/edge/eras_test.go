package edge_test

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/mcpx-dev/mcpx/generated/mcp"
	"github.com/mcpx-dev/mcpx/generated/revision"
	"github.com/mcpx-dev/mcpx/runtime/edge"
	"github.com/mcpx-dev/mcpx/runtime/jsonrpc"
	"github.com/mcpx-dev/mcpx/testkit/closedworld"
)

// The tests in this file take their revisions from the generated tables,
// so that a revision added to the manifest is covered with no edit here:
// every modern revision is served in itself, every legacy one through
// initialize, and negotiation picks the newest both sides speak.

// TestPick: the negotiation rule over abstract revision lists, newest
// first on our side; the peer's order and its unknown names do not count.
func TestPick(t *testing.T) {
	ours := []mcp.Revision{"M2", "M1", "L3", "L2", "L1"} // two modern, three legacy
	for _, c := range []struct {
		name   string
		ours   []mcp.Revision
		theirs []string
		want   mcp.Revision // "" for none in common
	}{
		{"both modern revisions: the newer", ours, []string{"M1", "M2"}, "M2"},
		{"only the older modern revision", ours, []string{"M1"}, "M1"},
		{"the older modern and legacy ones: the modern", ours, []string{"L3", "M1", "L1"}, "M1"},
		{"a legacy-only peer: its newest we share", ours, []string{"L1", "L2"}, "L2"},
		{"a legacy-only peer with one revision", ours, []string{"L1"}, "L1"},
		{"unknown versions are skipped", ours, []string{"M9", "2099-01-01", "M1", "junk", ""}, "M1"},
		{"only unknown versions", ours, []string{"M9", "L0"}, ""},
		{"none in common: empty list", ours, nil, ""},
		{"we speak nothing", nil, []string{"M1"}, ""},
		{"duplicates", ours, []string{"L2", "L2"}, "L2"},
		{"case matters", ours, []string{"m2"}, ""},
		{"a newer peer than us: our newest it lists", []mcp.Revision{"M1", "L1"}, []string{"M3", "M2", "M1", "L1"}, "M1"},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, ok := edge.Pick(c.ours, c.theirs)
			if got != c.want || ok != (c.want != "") {
				t.Errorf("Pick(%v, %v) = %q, %v; want %q, %v", c.ours, c.theirs, got, ok, c.want, c.want != "")
			}
		})
	}
}

// TestErasFromTables: the era lists are the manifest's, in its order, and
// the roles follow from them.
func TestErasFromTables(t *testing.T) {
	var modern, legacy []mcp.Revision
	for _, tab := range revision.Tables {
		switch tab.Era {
		case "modern":
			modern = append(modern, tab.Revision)
		case "legacy":
			legacy = append(legacy, tab.Revision)
		default:
			t.Errorf("%s: era %q is neither modern nor legacy", tab.Revision, tab.Era)
		}
	}
	if !slices.Equal(edge.ModernRevisions, modern) || !slices.Equal(edge.LegacyRevisions, legacy) {
		t.Errorf("modern %v, legacy %v; the tables say %v, %v", edge.ModernRevisions, edge.LegacyRevisions, modern, legacy)
	}
	if edge.NewestModern != modern[0] || edge.LatestLegacy != legacy[0] || edge.Oldest != legacy[len(legacy)-1] {
		t.Errorf("newest modern %s, latest legacy %s, oldest %s; from %v and %v", edge.NewestModern, edge.LatestLegacy, edge.Oldest, modern, legacy)
	}
	for _, rev := range mcp.Revisions {
		if edge.IsModern(rev) != slices.Contains(modern, rev) {
			t.Errorf("IsModern(%s) = %v", rev, edge.IsModern(rev))
		}
	}
}

// metaFor is the _meta every request of modern revision v carries.
func metaFor(v string) string {
	return `"_meta":{"io.modelcontextprotocol/protocolVersion":` + jsonString(v) + `,"io.modelcontextprotocol/clientCapabilities":{}}`
}

func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// servedParams are requests mcpx answers itself, by method, for the
// revisions that have the method.
var servedParams = map[string]string{
	"server/discover":          `{}`,
	"tools/list":               `{}`,
	"resources/list":           `{}`,
	"resources/templates/list": `{}`,
	"prompts/list":             `{}`,
	"resources/read":           `{"uri":"test://a"}`,
	"tools/call":               `{"name":"echo","arguments":{},"_meta":{"progressToken":"p"}}`,
	"prompts/get":              `{"name":"greet","arguments":{"name":"x"}}`,
	"completion/complete":      `{"ref":{"type":"ref/prompt","name":"greet"},"argument":{"name":"name","value":""}}`,
}

// withMeta puts the modern _meta members of v into params' _meta.
func withMeta(t *testing.T, params, v string) string {
	t.Helper()
	var p map[string]json.RawMessage
	if err := json.Unmarshal([]byte(params), &p); err != nil {
		t.Fatal(err)
	}
	meta := map[string]json.RawMessage{}
	json.Unmarshal(p["_meta"], &meta)
	var add map[string]map[string]json.RawMessage
	json.Unmarshal([]byte(`{`+metaFor(v)+`}`), &add)
	for k, x := range add["_meta"] {
		meta[k] = x
	}
	p["_meta"], _ = json.Marshal(meta)
	b, _ := json.Marshal(p)
	return string(b)
}

// validMessage checks a whole message against definition def of rev.
func validMessage(t *testing.T, rev mcp.Revision, def string, m *jsonrpc.Message) {
	t.Helper()
	v, err := closedworld.Default()
	if err != nil {
		t.Fatal(err)
	}
	b, err := jsonrpc.Encode(m)
	if err != nil {
		t.Fatal(err)
	}
	if err := v.Validate(string(rev), def, b); err != nil {
		t.Errorf("%s %s %s:\n%v", rev, def, b, err)
	}
}

// TestEachModernRevisionServedInItself: a request whose _meta names a
// modern revision is answered in exactly that revision, over stdio and
// over HTTP with the matching header: its results, its notifications and
// its errors are closed-world valid for it.
func TestEachModernRevisionServedInItself(t *testing.T) {
	for _, rev := range edge.ModernRevisions {
		t.Run(string(rev), func(t *testing.T) {
			tab := revision.Lookup(rev)
			served := 0
			for _, m := range tab.Methods {
				params, ok := servedParams[m.Name]
				if !ok || !m.FromClient || m.Notification {
					continue
				}
				served++
				c := newClient(t)
				msg := &jsonrpc.Message{JSONRPC: "2.0", ID: json.RawMessage(`7`), Method: m.Name, Params: json.RawMessage(withMeta(t, params, string(rev)))}
				for _, seen := range []edge.Seen{{Default: edge.Oldest}, {HTTP: true, Header: string(rev), Default: edge.Headerless}} {
					cl := edge.Classify(msg, seen)
					if e, _ := cl.Refusal(); e != nil || !cl.Modern() || cl.Revision(nil) != rev || cl.ChecksHeaders() != true {
						t.Fatalf("%s (HTTP %v): classified %s, modern %v, refused %v", m.Name, seen.HTTP, cl.Revision(nil), cl.Modern(), e)
					}
					c.sent = nil
					r := c.e.Handle(context.Background(), c.sess, edge.In{Msg: msg, Class: cl}, func(n *jsonrpc.Message) {
						c.mu.Lock()
						c.sent = append(c.sent, n)
						c.mu.Unlock()
					})
					if r.Rev != rev {
						t.Errorf("%s answered in %s, want %s", m.Name, r.Rev, rev)
					}
					result(t, r)
					closedWorld(t, rev, m.Name, r)
					for _, n := range c.sent {
						if n.Method == mcp.MethodNotificationsProgress {
							validMessage(t, rev, "ProgressNotification", n)
						}
					}
				}
				if m.Name == mcp.MethodToolsCall && len(c.sent) == 0 {
					t.Errorf("tools/call asked for progress and got no notification")
				}
			}
			if served == 0 {
				t.Fatalf("%s has none of the methods servedParams knows", rev)
			}

			// Errors in it too: a resource that does not exist, and a
			// required _meta member missing (HTTP 400).
			c := newClient(t)
			r := c.do("resources/read", withMeta(t, `{"uri":"test://missing"}`, string(rev)))
			if e := rpcError(t, r); e.Code != jsonrpc.InvalidParams || r.Rev != rev {
				t.Errorf("resource not found: %d in %s", e.Code, r.Rev)
			}
			validMessage(t, rev, "JSONRPCErrorResponse", r.Msg)
			r = c.do("tools/list", `{"_meta":{"io.modelcontextprotocol/protocolVersion":`+jsonString(string(rev))+`}}`)
			if e := rpcError(t, r); e.Code != jsonrpc.InvalidParams || r.Status != http.StatusBadRequest || !strings.Contains(e.Message, string(rev)) {
				t.Errorf("missing clientCapabilities: %d %d %q, want -32602, 400 and a message naming %s", e.Code, r.Status, e.Message, rev)
			}
			validMessage(t, rev, "JSONRPCErrorResponse", r.Msg)
		})
	}
}

// TestModernHeaderWithoutMeta: the header of any modern revision without
// _meta is a request of that revision missing a required member, and the
// error names it.
func TestModernHeaderWithoutMeta(t *testing.T) {
	for _, rev := range edge.ModernRevisions {
		m := jsonrpc.Request(json.RawMessage(`1`), "tools/list", json.RawMessage(`{}`))
		cl := edge.Classify(m, edge.Seen{HTTP: true, Header: string(rev), Default: edge.Headerless})
		if !cl.Modern() || cl.Revision(nil) != rev || !cl.ChecksHeaders() {
			t.Errorf("%s header: classified %s, modern %v", rev, cl.Revision(nil), cl.Modern())
		}
		r := newEdge().Handle(context.Background(), new(edge.Session), edge.In{Msg: m, Class: cl}, nil)
		if r.Msg.Error == nil || r.Msg.Error.Code != jsonrpc.InvalidParams || r.Status != http.StatusBadRequest || !strings.Contains(r.Msg.Error.Message, string(rev)) {
			t.Errorf("%s header without _meta: %+v, status %d; want -32602, 400, naming %s", rev, r.Msg.Error, r.Status, rev)
		}
	}
}

// TestUnsupportedVersionListsEverything: a version in _meta that mcpx
// does not serve per request (unknown, or legacy) is -32022, HTTP 400,
// data.supported listing every version mcpx serves (2026-07-28 versioning
// page: MUST list the versions it supports) and data.requested the one
// asked for; the message names the modern revisions.
func TestUnsupportedVersionListsEverything(t *testing.T) {
	asked := []string{"1900-01-01", "2099-12-31", ""}
	for _, rev := range edge.LegacyRevisions {
		asked = append(asked, string(rev))
	}
	for _, v := range asked {
		r := newClient(t).do("tools/list", `{`+metaFor(v)+`}`)
		e := rpcError(t, r)
		var data struct {
			Supported []string
			Requested string
		}
		json.Unmarshal(e.Data, &data)
		want := make([]string, len(mcp.Revisions))
		for i, rev := range mcp.Revisions {
			want[i] = string(rev)
		}
		if e.Code != jsonrpc.UnsupportedProtocolVersion || r.Status != http.StatusBadRequest || data.Requested != v || !slices.Equal(data.Supported, want) {
			t.Errorf("%s: code %d status %d data %s; want -32022, 400, supported %v", v, e.Code, r.Status, e.Data, want)
		}
		for _, rev := range edge.ModernRevisions {
			if !strings.Contains(e.Message, string(rev)) {
				t.Errorf("%s: the message %q does not name %s", v, e.Message, rev)
			}
		}
		validMessage(t, edge.NewestModern, "UnsupportedProtocolVersionError", r.Msg)
	}
}

// TestInitializeEveryRevision: initialize naming a legacy revision gets
// it; naming a modern one, or one mcpx does not know, gets the newest
// legacy revision.
func TestInitializeEveryRevision(t *testing.T) {
	for _, rev := range edge.LegacyRevisions {
		if got := newClient(t).initialize(string(rev)); got != rev {
			t.Errorf("initialize %s: got %s", rev, got)
		}
	}
	for _, v := range append(slices.Clone(edge.ModernRevisions), "2099-12-31", "") {
		if got := newClient(t).initialize(string(v)); got != edge.LegacyRevisions[0] {
			t.Errorf("initialize %q: got %s, want %s", v, got, edge.LegacyRevisions[0])
		}
	}
}

// TestBatchRefusalNamesTheVersion: a modern member of a batch is refused
// with a message naming the version its _meta names, not a fixed one.
func TestBatchRefusalNamesTheVersion(t *testing.T) {
	for _, v := range append(edge.ModernRevisions[:len(edge.ModernRevisions):len(edge.ModernRevisions)], "2099-12-31") {
		m := jsonrpc.Request(json.RawMessage(`1`), "tools/list", json.RawMessage(`{`+metaFor(string(v))+`}`))
		r := edge.RefuseBatchMember(m, nil)
		if r == nil || r.Error == nil || r.Error.Code != jsonrpc.InvalidRequest || !strings.Contains(r.Error.Message, string(v)) {
			t.Errorf("%s: %+v, want -32600 naming %s", v, r, v)
			continue
		}
		for _, other := range edge.ModernRevisions {
			if other != v && strings.Contains(r.Error.Message, string(other)) {
				t.Errorf("%s: the message names %s: %q", v, other, r.Error.Message)
			}
		}
	}
}
