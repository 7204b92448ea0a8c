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

// fakePeers answers every relay with answer (or err), recording what it was sent.
type fakePeers struct {
	answer  string
	err     error
	replica string
	req     string
}

func (*fakePeers) PublishChange(string)       {}
func (*fakePeers) PeerChanges() <-chan string { return nil }
func (p *fakePeers) Relay(_ context.Context, replica string, req []byte) ([]byte, error) {
	p.replica, p.req = replica, string(req)
	return []byte(p.answer), p.err
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
