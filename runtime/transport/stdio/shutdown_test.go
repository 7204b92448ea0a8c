package stdio_test

import (
	"context"
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

// TestShutdownAnswersRunningRequests: a request still running when the
// context ends (SIGTERM) is answered with an error saying the server is
// shutting down.
func TestShutdownAnswersRunningRequests(t *testing.T) {
	leakcheck.Check(t)
	ctx, cancel := context.WithCancel(context.Background())
	s := startCtx(t, ctx, stdio.Options{})
	s.send(`{"jsonrpc":"2.0","id":"w","method":"tools/call","params":{"name":"wait"}}`)
	time.Sleep(100 * time.Millisecond) // it is running
	cancel()
	if got := s.recv(); !strings.Contains(got, `"id":"w","error"`) || !strings.Contains(got, "-32603") || !strings.Contains(got, "shutting down") {
		t.Errorf("the running request at shutdown was answered %s", got)
	}
}

// TestUnreadOutputDoesNotHoldShutdown: with a client that reads nothing
// it is sent, Serve still returns soon after its context ends (within
// WriteGrace): the writes are given up.
func TestUnreadOutputDoesNotHoldShutdown(t *testing.T) {
	leakcheck.Check(t)
	inR, inW := io.Pipe()
	defer inW.Close()
	outR, outW := io.Pipe() // never read: every write blocks
	defer outR.Close()
	e := &edge.Edge{Server: &server.Server{NS: ns{}, Info: mcp.Implementation{Name: "t", Version: "1"}}}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- stdio.Serve(ctx, e, inR, outW, stdio.Options{WriteGrace: 200 * time.Millisecond}) }()
	for i := range 4 { // the first answer blocks; the rest wait behind it
		io.WriteString(inW, `{"jsonrpc":"2.0","id":`+string(rune('1'+i))+`,"method":"ping"}`+"\n")
	}
	io.WriteString(inW, `{"jsonrpc":"2.0","id":"w","method":"tools/call","params":{"name":"wait"}}`+"\n")
	time.Sleep(100 * time.Millisecond)
	began := time.Now()
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Serve: %v", err)
		}
		if d := time.Since(began); d > 2*time.Second {
			t.Errorf("Serve took %v to return", d)
		}
	case <-time.After(5 * time.Second):
		outR.Close() // let it go
		<-done
		t.Fatal("Serve did not return within 5s of its context ending while its output was not read")
	}
	outR.Close() // the abandoned write ends; the writer goroutine with it
}
