package upstream

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/mcpx-dev/mcpx/generated/mcp"
	"github.com/mcpx-dev/mcpx/runtime/edge"
	"github.com/mcpx-dev/mcpx/runtime/jsonrpc"
)

// TestTaskPollInterval: the upstream's poll interval is respected within
// [pollFloor, pollCeiling]; none suggested is pollDefault. Never a busy
// loop (0), never minutes between polls.
func TestTaskPollInterval(t *testing.T) {
	ms := func(v float64) *float64 { return &v }
	for _, tc := range []struct {
		in   *float64
		want time.Duration
	}{
		{nil, pollDefault},
		{ms(0), pollFloor},
		{ms(-5), pollFloor},
		{ms(200), 200 * time.Millisecond},
		{ms(3_600_000), pollCeiling},
	} {
		var f follower
		f.setInterval(tc.in)
		if f.interval != tc.want {
			t.Errorf("pollInterval %v: polled every %s, want %s", tc.in, f.interval, tc.want)
		}
	}
}

// TestReadTaskHandle: both flavours of handle are read, with their poll
// interval under either spelling; one without a taskId is an error.
func TestReadTaskHandle(t *testing.T) {
	for _, tc := range []struct {
		raw  string
		id   string
		poll float64
	}{
		{`{"task":{"taskId":"a","status":"working","createdAt":"x","lastUpdatedAt":"x","ttl":null,"pollInterval":70}}`, "a", 70},
		{`{"resultType":"task","taskId":"b","status":"working","createdAt":"x","lastUpdatedAt":"x","ttlMs":null,"pollIntervalMs":80}`, "b", 80},
	} {
		h, err := readHandle(json.RawMessage(tc.raw))
		if err != nil || h.TaskID != tc.id || h.interval() == nil || *h.interval() != tc.poll {
			t.Errorf("%s: read %+v, %v; want task %q polled every %v ms", tc.raw, h, err, tc.id, tc.poll)
		}
	}
	if _, err := readHandle(json.RawMessage(`{"resultType":"task","status":"working"}`)); err == nil {
		t.Error("a handle without a taskId was read")
	}
}

// TestAsksByRequestDecodesOnce: whether a modern upstream declared the
// tasks extension (so that every call of a 2026-07-28 client to it must
// be parkable) is read from its capabilities once per handshake, not
// decoded again on every call; a new handshake is read again.
func TestAsksByRequestDecodesOnce(t *testing.T) {
	negotiate := func(ext string) *edge.Dialect {
		rt := func(_ context.Context, m *jsonrpc.Message) (*jsonrpc.Message, error) {
			res := `{"supportedVersions":["` + string(edge.NewestModern) + `"],"capabilities":{"tools":{},"extensions":` + ext + `},"resultType":"complete"}`
			return &jsonrpc.Message{JSONRPC: "2.0", ID: m.ID, Result: json.RawMessage(res)}, nil
		}
		d, err := edge.Negotiate(context.Background(), rt, mcp.Implementation{Name: "mcpx", Version: "test"})
		if err != nil || !d.Modern() {
			t.Fatalf("negotiate: %v, modern %v", err, d != nil && d.Modern())
		}
		return d
	}
	var c Client
	c.dialect.Store(negotiate(`{"` + tasksExtension + `":{}}`))
	if !c.AsksByRequest() {
		t.Fatal("an upstream declaring the tasks extension: AsksByRequest false")
	}
	if n := testing.AllocsPerRun(100, func() { c.AsksByRequest() }); n != 0 {
		t.Errorf("AsksByRequest allocates %v times a call, want 0 (the extensions decoded on every call)", n)
	}
	c.dialect.Store(negotiate(`{"other/ext":{}}`))
	if c.AsksByRequest() {
		t.Error("after a handshake with an upstream declaring no tasks: AsksByRequest true (the last dialect's answer kept)")
	}
}

// TestCallClockAllocations: a call's clock is one timer for its timeout
// and its maximum, not one each: what every call pays for it (8
// allocations with two timers), and its context is part of the clock
// (one more).
func TestCallClockAllocations(t *testing.T) {
	parent, cancel := context.WithCancel(context.Background())
	defer cancel()
	n := testing.AllocsPerRun(100, func() {
		_, k := startClock(parent, time.Minute)
		k.stop()
	})
	if n > 5 {
		t.Errorf("startClock and stop: %v allocations, want at most 5", n)
	}
}

// TestRequestHeadersShared: a request to a modern upstream names its
// revision and method in headers whose values are made once and shared
// (net/http only reads them), not allocated for every request; they are
// still the request's own.
func TestRequestHeadersShared(t *testing.T) {
	rt := func(_ context.Context, m *jsonrpc.Message) (*jsonrpc.Message, error) {
		res := `{"supportedVersions":["` + string(edge.NewestModern) + `"],"capabilities":{"tools":{}},"resultType":"complete"}`
		return &jsonrpc.Message{JSONRPC: "2.0", ID: m.ID, Result: json.RawMessage(res)}, nil
	}
	d, err := edge.Negotiate(context.Background(), rt, mcp.Implementation{Name: "mcpx", Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	h := &httpConn{d: d}
	m := jsonrpc.Request(json.RawMessage(`1`), mcp.MethodToolsList, json.RawMessage(`{}`))
	req := &http.Request{}
	h.headers(req, m, "")
	if got := req.Header.Get("Mcp-Method"); got != mcp.MethodToolsList {
		t.Errorf("Mcp-Method %q, want %s", got, mcp.MethodToolsList)
	}
	if got, want := req.Header.Get("Mcp-Protocol-Version"), string(edge.NewestModern); got != want {
		t.Errorf("Mcp-Protocol-Version %q, want %s", got, want)
	}
	if n := testing.AllocsPerRun(100, func() { h.headers(req, m, "") }); n > 2 {
		t.Errorf("headers: %v allocations, want at most 2 (the header map)", n)
	}
}
