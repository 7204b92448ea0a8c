//go:build !race

package upstream

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/mcpx-dev/mcpx/generated/mcp"
	"github.com/mcpx-dev/mcpx/runtime/edge"
	"github.com/mcpx-dev/mcpx/runtime/jsonrpc"
)

// answering is a conn that answers every request at once with result.
type answering struct {
	conn
	result json.RawMessage
}

func (a answering) roundTrip(_ context.Context, m *jsonrpc.Message, _ string) (*jsonrpc.Message, error) {
	return &jsonrpc.Message{JSONRPC: "2.0", ID: m.ID, Result: a.result}, nil
}

// TestCallOnAllocations counts what a small tools/call costs the
// upstream client around its connection's round trip (the request's and
// the result's encoding and decoding included): 21. The call's context
// is part of its clock (TestCallClockAllocations), and the call is one
// entry in the in-flight map, its clock beside its caller's context (a
// second map of clocks was one entry more): 36 before. The request id's
// bytes and the request message are fields of the clock: 23 before.
func TestCallOnAllocations(t *testing.T) {
	if testing.Short() {
		t.Skip("counts allocations")
	}
	rt := func(_ context.Context, m *jsonrpc.Message) (*jsonrpc.Message, error) {
		res := `{"supportedVersions":["` + string(edge.NewestModern) + `"],"capabilities":{"tools":{}},"resultType":"complete"}`
		return &jsonrpc.Message{JSONRPC: "2.0", ID: m.ID, Result: json.RawMessage(res)}, nil
	}
	d, err := edge.Negotiate(context.Background(), rt, mcp.Implementation{Name: "mcpx", Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	c := &Client{spec: Spec{Name: "up", Timeout: time.Minute}, slots: make(chan struct{}, 1)}
	cn := answering{result: json.RawMessage(`{"content":[{"type":"text","text":"hi"}],"resultType":"complete"}`)}
	params := &mcp.CallToolRequestParams{Name: "echo", Arguments: json.RawMessage(`{}`)}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	call := func() {
		if _, err := c.callOn(ctx, cn, d, mcp.MethodToolsCall, params, nil); err != nil {
			t.Fatal(err)
		}
	}
	call()
	n := testing.AllocsPerRun(200, call)
	t.Logf("%v allocations a call", n)
	if n > 21 {
		t.Errorf("callOn: %v allocations, want at most 21", n)
	}
}
