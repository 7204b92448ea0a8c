package requeststate_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/mcpx-dev/mcpx/generated/mcp"
	"github.com/mcpx-dev/mcpx/runtime/catalog"
	"github.com/mcpx-dev/mcpx/runtime/edge"
	"github.com/mcpx-dev/mcpx/runtime/jsonrpc"
	"github.com/mcpx-dev/mcpx/runtime/requeststate"
	"github.com/mcpx-dev/mcpx/runtime/server"
)

// opening is a namespace whose tools/call opens the requestState it is
// given, bound to the hub params it has, as a bridge will.
type opening struct {
	*catalog.Catalog
	s *requeststate.Sealer
}

func (o opening) CallTool(ctx context.Context, p *mcp.CallToolRequestParams) (*mcp.CallToolResult, error) {
	b, err := requeststate.BindParams(mcp.MethodToolsCall, p, "ns")
	if err != nil {
		return nil, err
	}
	got, err := o.s.Open(p.RequestState, b)
	if err != nil {
		return nil, err
	}
	return catalog.TextResult("opened: " + got.Upstream), nil
}

// TestRefusedStateIsInvalidParams: through the real edge, a 2026-07-28
// client's tools/call with a state that opens is served; one altered,
// sealed under another key, for other arguments, or expired is answered
// -32602 with the state's one-sentence reason (HTTP 200: the request is
// well formed).
func TestRefusedStateIsInvalidParams(t *testing.T) {
	key := []byte(strings.Repeat("k", 32))
	s, _ := requeststate.New(key)
	other, _ := requeststate.New([]byte(strings.Repeat("o", 32)))
	c := catalog.New()
	c.AddTool(mcp.Tool{Name: "ask", InputSchema: json.RawMessage(`{"type":"object"}`)}, func(context.Context, json.RawMessage) (*mcp.CallToolResult, error) {
		return nil, nil
	})
	e := &edge.Edge{Server: &server.Server{NS: opening{c, s}, Info: mcp.Implementation{Name: "mcpx", Version: "0"}}, Log: slog.New(slog.DiscardHandler)}

	args := json.RawMessage(`{"city":"Paris"}`)
	b, err := requeststate.BindParams(mcp.MethodToolsCall, &mcp.CallToolRequestParams{Name: "ask", Arguments: args}, "ns")
	if err != nil {
		t.Fatal(err)
	}
	good, _ := s.Seal(b, requeststate.Payload{Upstream: "u-state"}, time.Minute)
	foreign, _ := other.Seal(b, requeststate.Payload{}, time.Minute)
	expired, _ := s.Seal(b, requeststate.Payload{}, time.Millisecond)
	time.Sleep(5 * time.Millisecond)
	tampered := good[:len(good)-2] + map[bool]string{true: "AA", false: "BB"}[!strings.HasSuffix(good, "AA")]

	call := func(state, arguments string) edge.Reply {
		params := `{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}},"name":"ask","arguments":` + arguments + `,"inputResponses":{"k":{"action":"accept","content":{}}},"requestState":"` + state + `"}`
		m := &jsonrpc.Message{JSONRPC: "2.0", ID: json.RawMessage(`1`), Method: "tools/call", Params: json.RawMessage(params)}
		return e.Handle(context.Background(), new(edge.Session), edge.In{Msg: m, Default: edge.Headerless}, nil)
	}
	if r := call(good, ` { "city" : "Paris" } `); r.Msg.Error != nil || !strings.Contains(string(r.Msg.Result), "opened: u-state") {
		t.Fatalf("a good state: %s %+v", r.Msg.Result, r.Msg.Error)
	}
	for _, tc := range []struct{ about, state, arguments, says string }{
		{"tampered", tampered, string(args), "requestState has been altered"},
		{"another key", foreign, string(args), "requestState was sealed under a key this mcpx does not hold"},
		{"other arguments", good, `{"city":"Rome"}`, "requestState was issued for a tools/call request with other params"},
		{"expired", expired, string(args), "requestState expired"},
		{"not mcpx's", "opaque", string(args), "requestState is not one mcpx issued"},
	} {
		r := call(tc.state, tc.arguments)
		if r.Msg.Error == nil || r.Msg.Error.Code != jsonrpc.InvalidParams || !strings.HasPrefix(r.Msg.Error.Message, tc.says) || r.Status != 200 {
			t.Errorf("%s: %d %s %+v, want -32602 %q", tc.about, r.Status, r.Msg.Result, r.Msg.Error, tc.says)
		}
	}
}
