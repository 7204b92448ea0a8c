package stdio_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/mcpx-dev/mcpx/generated/mcp"
	"github.com/mcpx-dev/mcpx/runtime/edge"
	"github.com/mcpx-dev/mcpx/runtime/server"
	"github.com/mcpx-dev/mcpx/runtime/transport/stdio"
	"github.com/mcpx-dev/mcpx/testkit/leakcheck"
)

// chattyNS changes its tool list when told and has a tool that logs.
type chattyNS struct {
	server.Namespace
	changes chan string
}

func (chattyNS) Capabilities() mcp.ServerCapabilities {
	return mcp.ServerCapabilities{Tools: &mcp.ServerCapabilitiesTools{}, Logging: json.RawMessage(`{}`)}
}
func (n chattyNS) Changes() <-chan string { return n.changes }
func (chattyNS) ListTools(context.Context) ([]mcp.Tool, error) {
	return []mcp.Tool{{Name: "log", InputSchema: json.RawMessage(`{"type":"object"}`)}}, nil
}
func (chattyNS) CallTool(ctx context.Context, p *mcp.CallToolRequestParams) (*mcp.CallToolResult, error) {
	server.Log(ctx, mcp.LoggingLevelInfo, "chatty", "hello")
	return &mcp.CallToolResult{Content: []mcp.ContentBlock{{Value: &mcp.TextContent{Text: "logged"}}}}, nil
}

// startChatty serves a chattyNS over stdio on pipes.
func startChatty(t *testing.T) (*session, chan string) {
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	ns := chattyNS{changes: make(chan string, 1)}
	e := &edge.Edge{Server: &server.Server{NS: ns, Info: mcp.Implementation{Name: "t", Version: "1"}}}
	ctx, cancel := context.WithCancel(context.Background())
	go e.WatchChanges(ctx)
	s := &session{t: t, in: inW, out: bufio.NewScanner(outR), done: make(chan error, 1)}
	s.out.Buffer(nil, 1<<20)
	go func() { s.done <- stdio.Serve(ctx, e, inR, outW, stdio.Options{}); outW.Close() }()
	t.Cleanup(func() { inW.Close(); go io.Copy(io.Discard, outR); <-s.done; cancel() })
	return s, ns.changes
}

const initialize20251125 = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`

// wantID checks that line is the response with id.
func wantID(t *testing.T, line, id string) {
	t.Helper()
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	if err := json.Unmarshal([]byte(line), &m); err != nil || string(m.ID) != id || m.Method != "" {
		t.Fatalf("want the response %s, got %s", id, line)
	}
}

// TestNoListChangeBeforeInitialized: a list change between the initialize
// response and notifications/initialized is not sent (the client lists
// once initialized anyway), neither before nor after it.
func TestNoListChangeBeforeInitialized(t *testing.T) {
	leakcheck.Check(t)
	s, changes := startChatty(t)
	s.send(initialize20251125)
	wantID(t, s.recv(), "1")
	// Answered after the initialize was served whole (stdout attached).
	s.send(`{"jsonrpc":"2.0","id":"p","method":"ping"}`)
	wantID(t, s.recv(), `"p"`)
	changes <- mcp.MethodNotificationsToolsListChanged
	time.Sleep(50 * time.Millisecond) // the change reaches the edge
	s.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	s.send(`{"jsonrpc":"2.0","id":2,"method":"ping"}`)
	wantID(t, s.recv(), "2")
	// Once initialized, list changes are sent.
	changes <- mcp.MethodNotificationsToolsListChanged
	if got := s.recv(); !strings.Contains(got, `"method":"notifications/tools/list_changed"`) {
		t.Errorf("a list change after initialized: %s", got)
	}
}

// TestLogHeldUntilInitialized: a log message sent by a request served
// before notifications/initialized is held until it arrives, then sent.
func TestLogHeldUntilInitialized(t *testing.T) {
	leakcheck.Check(t)
	s, _ := startChatty(t)
	s.send(initialize20251125)
	wantID(t, s.recv(), "1")
	s.send(`{"jsonrpc":"2.0","id":2,"method":"logging/setLevel","params":{"level":"debug"}}`)
	wantID(t, s.recv(), "2")
	s.send(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"log"}}`)
	wantID(t, s.recv(), "3")
	s.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	if got := s.recv(); !strings.Contains(got, `"method":"notifications/message"`) || !strings.Contains(got, `"hello"`) {
		t.Errorf("after notifications/initialized, want the held log message: %s", got)
	}
	s.send(`{"jsonrpc":"2.0","id":4,"method":"ping"}`)
	wantID(t, s.recv(), "4")
}

// TestModernNotHeld: a 2026-07-28 request has no handshake; its
// notifications are sent as they come.
func TestModernNotHeld(t *testing.T) {
	leakcheck.Check(t)
	s, _ := startChatty(t)
	meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/logLevel":"debug"}`
	s.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"log",` + meta + `}}`)
	if got := s.recv(); !strings.Contains(got, `"method":"notifications/message"`) {
		t.Errorf("a 2026-07-28 request's log message: %s", got)
	}
	wantID(t, s.recv(), "1")
}
