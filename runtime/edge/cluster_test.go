package edge_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/mcpx-dev/mcpx/generated/mcp"
	"github.com/mcpx-dev/mcpx/runtime/edge"
	"github.com/mcpx-dev/mcpx/runtime/jsonrpc"
	"github.com/mcpx-dev/mcpx/runtime/server"
)

// elsewhereNS says every tools/call belongs to replica "r2".
type elsewhereNS struct{ fakeNS }

func (elsewhereNS) CallTool(context.Context, *mcp.CallToolRequestParams) (*mcp.CallToolResult, error) {
	return nil, &server.Elsewhere{Replica: "r2"}
}

// fakePeers answers every relay with answer (or err), recording what it
// was sent, after giving notify (when the relay has one, recorded) notes.
type fakePeers struct {
	answer   string
	status   int // the holder's HTTP status (0: a holder that does not say)
	err      error
	notes    []string
	replica  string
	req      string
	notified bool
}

func (*fakePeers) PublishChange(string)       {}
func (*fakePeers) PeerChanges() <-chan string { return nil }
func (p *fakePeers) Relay(_ context.Context, replica string, req []byte, notify func([]byte)) ([]byte, int, error) {
	p.replica, p.req, p.notified = replica, string(req), notify != nil
	if notify != nil {
		for _, n := range p.notes {
			notify([]byte(n))
		}
	}
	return []byte(p.answer), p.status, p.err
}

// TestRelayedNotifications: the holder serves a relayed request with a
// stream when the asker has one, its notifications encoded as they would
// go on a stream of its own client (the same filtering); the asker puts
// the notifications the holder sent on its client's stream, before the
// answer, and nothing else (a request on it is dropped), and relays
// without a stream when its client has none.
func TestRelayedNotifications(t *testing.T) {
	e := &edge.Edge{Server: &server.Server{NS: fakeNS{}, Info: mcp.Implementation{Name: "t", Version: "1"}}}
	for _, meta := range []string{
		`"progressToken":"p","io.modelcontextprotocol/logLevel":"info"`, // both
		`"io.modelcontextprotocol/logLevel":"error"`,                    // neither
	} {
		req := `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},` + meta + `},"name":"echo","arguments":{}}}`
		var direct []string
		msgs, _, _ := jsonrpc.Decode([]byte(req), false)
		e.Handle(context.Background(), new(edge.Session), edge.In{Msg: msgs[0]}, func(m *jsonrpc.Message) {
			raw, _ := jsonrpc.Encode(m)
			direct = append(direct, string(raw))
		})
		var relayed []string
		if _, st, err := e.ServeRelayed(context.Background(), []byte(req), func(raw []byte) { relayed = append(relayed, string(raw)) }); err != nil || st != http.StatusOK {
			t.Fatalf("HTTP %d, %v", st, err)
		}
		if fmt.Sprint(relayed) != fmt.Sprint(direct) {
			t.Fatalf("with %s, relayed: %s, want as served directly: %s", meta, relayed, direct)
		}
		if strings.Contains(meta, "progressToken") && len(relayed) != 2 {
			t.Fatalf("with %s: %s, want progress and a log message", meta, relayed)
		}
	}

	call := &jsonrpc.Message{JSONRPC: "2.0", ID: json.RawMessage(`5`), Method: "tools/call",
		Params: json.RawMessage(`{` + modernMeta + `,"name":"echo","arguments":{}}`)}
	progress := `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"p","progress":1}}`
	peers := &fakePeers{answer: `{"jsonrpc":"2.0","id":5,"result":{"content":[],"resultType":"complete"}}`,
		notes: []string{progress, `{"jsonrpc":"2.0","id":9,"method":"elicitation/create","params":{}}`, `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"x"}}`}}
	e = &edge.Edge{Server: &server.Server{NS: elsewhereNS{}, Info: mcp.Implementation{Name: "t", Version: "1"}}, Peers: peers}
	var heard []string
	r := e.Handle(context.Background(), new(edge.Session), edge.In{Msg: call}, func(m *jsonrpc.Message) { heard = append(heard, m.Method) })
	if r.Msg == nil || r.Msg.Result == nil || !peers.notified {
		t.Fatalf("relayed with a stream: %+v (a stream: %v)", r.Msg, peers.notified)
	}
	if fmt.Sprint(heard) != "[notifications/progress notifications/message]" {
		t.Fatalf("the client's stream heard %v", heard)
	}
	if r = e.Handle(context.Background(), new(edge.Session), edge.In{Msg: call}, nil); r.Msg == nil || peers.notified {
		t.Fatalf("relayed without a stream: %+v (a stream: %v)", r.Msg, peers.notified)
	}
}

// TestRelayElsewhere: a request the namespace says another replica must
// serve is relayed there as the client sent it, and answered with what
// that replica said, with the HTTP status the edge gives that answer; a
// replica that is gone is -32602 (start over), any other failure -32603.
func TestRelayElsewhere(t *testing.T) {
	call := &jsonrpc.Message{JSONRPC: "2.0", ID: json.RawMessage(`5`), Method: "tools/call",
		Params: json.RawMessage(`{` + modernMeta + `,"name":"echo","arguments":{}}`)}
	for _, tc := range []struct {
		name   string
		peers  *fakePeers
		code   int64
		status int
		text   string
	}{
		{"the holder's result", &fakePeers{answer: `{"jsonrpc":"2.0","id":5,"result":{"content":[],"resultType":"complete"}}`}, 0, http.StatusOK, ""},
		{"the holder's error, its status", &fakePeers{answer: `{"jsonrpc":"2.0","id":5,"error":{"code":-32601,"message":"gone tool"}}`}, jsonrpc.MethodNotFound, http.StatusNotFound, "gone tool"},
		// The holder's own status, from causes the asker cannot read in
		// the error (its task store down: 503).
		{"the holder's 503", &fakePeers{answer: `{"jsonrpc":"2.0","id":5,"error":{"code":-32603,"message":"the task store is unavailable"}}`, status: http.StatusServiceUnavailable}, jsonrpc.InternalError, http.StatusServiceUnavailable, "unavailable"},
		{"the holder is gone", &fakePeers{err: fmt.Errorf("%w: no answer", edge.ErrPeerGone)}, jsonrpc.InvalidParams, http.StatusOK, "r2, which is gone"},
		{"the bus fails", &fakePeers{err: fmt.Errorf("redis down")}, jsonrpc.InternalError, http.StatusOK, "could not be relayed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := &edge.Edge{Server: &server.Server{NS: elsewhereNS{}, Info: mcp.Implementation{Name: "t", Version: "1"}}, Peers: tc.peers}
			r := e.Handle(context.Background(), new(edge.Session), edge.In{Msg: call}, nil)
			if tc.peers.replica != "r2" || !strings.Contains(tc.peers.req, `"name":"echo"`) {
				t.Fatalf("relayed to %q: %s", tc.peers.replica, tc.peers.req)
			}
			if r.Status != tc.status || r.Msg == nil {
				t.Fatalf("status %d, %+v", r.Status, r.Msg)
			}
			if tc.code == 0 {
				if r.Msg.Error != nil || r.Msg.Result == nil {
					t.Fatalf("want the result, got %+v", r.Msg)
				}
				return
			}
			if r.Msg.Error == nil || r.Msg.Error.Code != tc.code || !strings.Contains(r.Msg.Error.Message, tc.text) {
				t.Fatalf("want %d %q, got %+v", tc.code, tc.text, r.Msg.Error)
			}
		})
	}
	// Without peers, Elsewhere is an error like any other.
	e := &edge.Edge{Server: &server.Server{NS: elsewhereNS{}, Info: mcp.Implementation{Name: "t", Version: "1"}}}
	if r := e.Handle(context.Background(), new(edge.Session), edge.In{Msg: call}, nil); r.Msg == nil || r.Msg.Error == nil {
		t.Fatalf("without peers: %+v", r.Msg)
	}
}
