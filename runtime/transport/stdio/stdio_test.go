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

// ns is a namespace whose one tool either answers or waits to be cancelled.
type ns struct{ server.Namespace }

func (ns) Capabilities() mcp.ServerCapabilities {
	return mcp.ServerCapabilities{Tools: &mcp.ServerCapabilitiesTools{}}
}
func (ns) ListTools(context.Context) ([]mcp.Tool, error) {
	return []mcp.Tool{{Name: "wait", Title: "Wait", InputSchema: json.RawMessage(`{"type":"object"}`)}}, nil
}
func (ns) CallTool(ctx context.Context, p *mcp.CallToolRequestParams) (*mcp.CallToolResult, error) {
	if p.Name == "wait" {
		<-ctx.Done()
		return nil, ctx.Err()
	}
	return &mcp.CallToolResult{Content: []mcp.ContentBlock{{Value: &mcp.TextContent{Text: "ok"}}}}, nil
}

// session runs stdio.Serve on pipes and returns a line writer and reader.
type session struct {
	t    *testing.T
	in   *io.PipeWriter
	out  *bufio.Scanner
	done chan error
}

func start(t *testing.T, opt stdio.Options) *session {
	return startCtx(t, context.Background(), opt)
}

func startCtx(t *testing.T, ctx context.Context, opt stdio.Options) *session {
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	e := &edge.Edge{Server: &server.Server{NS: ns{}, Info: mcp.Implementation{Name: "t", Version: "1"}}}
	s := &session{t: t, in: inW, out: bufio.NewScanner(outR), done: make(chan error, 1)}
	s.out.Buffer(nil, 1<<20)
	go func() { s.done <- stdio.Serve(ctx, e, inR, outW, opt); outW.Close() }()
	t.Cleanup(func() { inW.Close(); <-s.done })
	return s
}

func (s *session) send(line string) {
	s.t.Helper()
	if _, err := io.WriteString(s.in, line+"\n"); err != nil {
		s.t.Fatal(err)
	}
}

func (s *session) recv() string {
	s.t.Helper()
	got := make(chan string, 1)
	go func() {
		if s.out.Scan() {
			got <- s.out.Text()
		}
		close(got)
	}()
	select {
	case l, ok := <-got:
		if !ok {
			s.t.Fatal("the server closed its output")
		}
		return l
	case <-time.After(5 * time.Second):
		s.t.Fatal("no answer within 5s")
	}
	return ""
}

// TestIDsKeptExactly: a string id stays a string, a large integer and a
// float keep their spelling.
func TestIDsKeptExactly(t *testing.T) {
	leakcheck.Check(t)
	s := start(t, stdio.Options{})
	for _, id := range []string{`"abc"`, `12345678901234567890`, `1.0`, `-3`} {
		s.send(`{"jsonrpc":"2.0","id":` + id + `,"method":"ping"}`)
		if got := s.recv(); !strings.Contains(got, `"id":`+id+`,`) && !strings.HasSuffix(got, `"id":`+id+`}`) {
			t.Errorf("id %s came back as %s", id, got)
		}
	}
}

// TestUndeclaredClientGetsOldestSpelling — "Oldest still governs how a
// result is spelled for a stdio client that declared nothing": no title on
// a tool before initialize.
func TestUndeclaredClientGetsOldestSpelling(t *testing.T) {
	leakcheck.Check(t)
	s := start(t, stdio.Options{})
	s.send(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)
	if got := s.recv(); strings.Contains(got, "title") || !strings.Contains(got, `"name":"wait"`) {
		t.Errorf("tools/list before initialize: %s", got)
	}
}

// TestBatchBeforeInitializeIs20250326 — "a stdio batch before initialize
// ... [is] taken as 2025-03-26": the batch is answered as one array.
func TestBatchBeforeInitializeIs20250326(t *testing.T) {
	leakcheck.Check(t)
	s := start(t, stdio.Options{})
	s.send(`[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","method":"notifications/initialized"},{"jsonrpc":"2.0","id":2,"method":"tools/list"}]`)
	got := s.recv()
	var arr []json.RawMessage
	if err := json.Unmarshal([]byte(got), &arr); err != nil || len(arr) != 2 {
		t.Fatalf("want an array of two responses, got %s", got)
	}
}

// TestBatchRejectedAfter20250618: a 2025-06-18 session has no batches.
func TestBatchRejectedAfter20250618(t *testing.T) {
	leakcheck.Check(t)
	s := start(t, stdio.Options{})
	s.send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`)
	s.recv()
	s.send(`[{"jsonrpc":"2.0","id":2,"method":"ping"}]`)
	if got := s.recv(); !strings.Contains(got, `"code":-32600`) {
		t.Errorf("batch in 2025-06-18: %s", got)
	}
}

// TestModernMemberInBatchRefused: 2026-07-28 has no batches, so a member
// whose _meta names a protocol version is answered -32600 on its own; the
// others are served.
func TestModernMemberInBatchRefused(t *testing.T) {
	leakcheck.Check(t)
	s := start(t, stdio.Options{})
	s.send(`[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}]`)
	got := s.recv()
	var arr []struct {
		ID     json.RawMessage
		Result json.RawMessage
		Error  *struct{ Code int }
	}
	if err := json.Unmarshal([]byte(got), &arr); err != nil || len(arr) != 2 {
		t.Fatalf("want an array of two responses, got %s", got)
	}
	for _, r := range arr {
		switch string(r.ID) {
		case "1":
			if r.Result == nil {
				t.Errorf("the legacy member was not served: %s", got)
			}
		case "2":
			if r.Error == nil || r.Error.Code != -32600 {
				t.Errorf("the 2026-07-28 member: want -32600, got %s", got)
			}
		}
	}
}

// TestInitializeInBatchRejected: 2025-03-26 says initialize MUST NOT be batched.
func TestInitializeInBatchRejected(t *testing.T) {
	leakcheck.Check(t)
	s := start(t, stdio.Options{})
	s.send(`[{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}]`)
	if got := s.recv(); !strings.Contains(got, `"code":-32600`) || !strings.HasPrefix(got, "[") {
		t.Errorf("initialize in a batch: %s", got)
	}
}

// TestCancelledRequestGetsNoAnswer: after notifications/cancelled the
// server sends nothing for that request (cancellation page, MUST NOT).
func TestCancelledRequestGetsNoAnswer(t *testing.T) {
	leakcheck.Check(t)
	s := start(t, stdio.Options{})
	s.send(`{"jsonrpc":"2.0","id":"slow","method":"tools/call","params":{"name":"wait"}}`)
	time.Sleep(50 * time.Millisecond)
	s.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"slow"}}`)
	s.send(`{"jsonrpc":"2.0","id":"next","method":"ping"}`)
	if got := s.recv(); !strings.Contains(got, `"id":"next"`) {
		t.Errorf("the first line after a cancellation should answer the next request: %s", got)
	}
}

// TestBadInput: not JSON is -32700, not a request is -32600, both with the
// id when it could be read, and the connection goes on.
func TestBadInput(t *testing.T) {
	leakcheck.Check(t)
	s := start(t, stdio.Options{MaxMessage: 256})
	for line, want := range map[string]string{
		`{not json`: `"id":null,"error":{"code":-32700`,
		`{"jsonrpc":"1.0","id":1,"method":"ping"}`:  `"code":-32600`,
		`{"jsonrpc":"2.0","id":{},"method":"ping"}`: `"code":-32600`,
		`"just a string"`:                           `"code":-32600`,
		`{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":"` + strings.Repeat("a", 300) + `"}}`: `"code":-32700`,
	} {
		s.send(line)
		if got := s.recv(); !strings.Contains(got, want) {
			t.Errorf("%.40s...: got %s, want %s", line, got, want)
		}
	}
	s.send(`{"jsonrpc":"2.0","id":9,"method":"ping"}`)
	if got := s.recv(); !strings.Contains(got, `"id":9,"result":{}`) {
		t.Errorf("after bad input: %s", got)
	}
}

// TestEOFEndsServe: stdin closing ends Serve promptly.
func TestEOFEndsServe(t *testing.T) {
	leakcheck.Check(t)
	s := start(t, stdio.Options{})
	s.in.Close()
	select {
	case <-s.done:
		s.done <- nil // for the cleanup
	case <-time.After(2 * time.Second):
		t.Fatal("Serve did not return after EOF")
	}
}

// TestEOFDrains: requests read before the input ended are still answered
// (`printf '...' | mcpx stdio`).
func TestEOFDrains(t *testing.T) {
	leakcheck.Check(t)
	s := start(t, stdio.Options{})
	s.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"quick"}}`)
	s.in.Close()
	if got := s.recv(); !strings.Contains(got, `"id":1,"result"`) {
		t.Errorf("after EOF: %s", got)
	}
}

const listen = `{"jsonrpc":"2.0","id":"L","method":"subscriptions/listen","params":{"notifications":{},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`

// TestListenEndedByTheClient: on stdio the client ends a listen stream
// with notifications/cancelled naming it; nothing more is sent for it.
func TestListenEndedByTheClient(t *testing.T) {
	leakcheck.Check(t)
	s := start(t, stdio.Options{})
	s.send(listen)
	if got := s.recv(); !strings.Contains(got, "notifications/subscriptions/acknowledged") || !strings.Contains(got, `"io.modelcontextprotocol/subscriptionId":"L"`) {
		t.Fatalf("first message of a listen: %s", got)
	}
	s.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"L"}}`)
	s.send(`{"jsonrpc":"2.0","id":"next","method":"ping"}`)
	if got := s.recv(); !strings.Contains(got, `"id":"next"`) {
		t.Errorf("after the client ended the listen: %s", got)
	}
}

// TestListenEndedByTheServer: when mcpx shuts down it sends
// notifications/cancelled for the listen id, then the listen's result
// (docs/revisions.md#subscriptionslisten).
func TestListenEndedByTheServer(t *testing.T) {
	leakcheck.Check(t)
	ctx, cancel := context.WithCancel(context.Background())
	s := startCtx(t, ctx, stdio.Options{})
	s.send(listen)
	s.recv() // the acknowledgement
	cancel()
	if got := s.recv(); !strings.Contains(got, `"method":"notifications/cancelled"`) || !strings.Contains(got, `"requestId":"L"`) {
		t.Errorf("first message at shutdown: %s", got)
	}
	if got := s.recv(); !strings.Contains(got, `"id":"L","result"`) {
		t.Errorf("second message at shutdown: %s", got)
	}
}

// TestContextStopsServe: SIGINT (ctx ending) stops Serve even while the
// client keeps stdin open.
func TestContextStopsServe(t *testing.T) {
	leakcheck.Check(t)
	ctx, cancel := context.WithCancel(context.Background())
	s := startCtx(t, ctx, stdio.Options{})
	cancel()
	select {
	case err := <-s.done:
		s.done <- err // for the cleanup
	case <-time.After(2 * time.Second):
		t.Fatal("Serve still running 2s after its context ended")
	}
}
