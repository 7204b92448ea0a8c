package peertest

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	mcpgo "github.com/mark3labs/mcp-go/mcp"
	gosdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestCancellation starts a ten-second countdown from each client pinned
// to each revision over each transport and cancels it on its first
// progress notification: the call must end with the context's error, the
// session must go on (echo), and mcpx must not answer the cancelled request
// (checked on the wire). Over stdio the clients send
// notifications/cancelled; over HTTP they may just abandon the request,
// which mcpx must take as cancellation too. A countdown mcpx did not stop
// would hold the shutdown (the stdio drain, the HTTP graceful shutdown)
// and answer late, which the wire check reports.
func TestCancellation(t *testing.T) {
	t.Parallel()
	clients := []struct {
		name string
		revs []string
		run  func(t *testing.T, transport, rev string)
	}{
		{"go-sdk", goSDKRevisions, goSDKCancel},
		{"mcp-go", mcpGoRevisions, mcpGoCancel},
	}
	for _, c := range clients {
		for _, transport := range transports {
			for _, rev := range c.revs {
				t.Run(fmt.Sprintf("%s over %s pinned to %s", c.name, transport, rev), func(t *testing.T) {
					t.Parallel()
					c.run(t, transport, rev)
				})
			}
		}
	}
}

// signal returns a channel that gets one value the first time notify is
// called.
func signal() (<-chan struct{}, func()) {
	ch := make(chan struct{}, 1)
	return ch, func() {
		select {
		case ch <- struct{}{}:
		default:
		}
	}
}

// cancelOnFirst waits for the first progress notification, cancels the
// call and waits for it to return an error. Which error is the client's
// business: go-sdk returns the context's, mcp-go over HTTP sometimes a
// transport error ("unexpected nil response") when its SSE read is cut.
func cancelOnFirst(t *testing.T, first <-chan struct{}, cancel func(), done <-chan error) {
	t.Helper()
	select {
	case <-first:
	case err := <-done:
		t.Fatalf("countdown ended before any progress: %v", err)
	case <-time.After(notificationWait):
		t.Fatalf("no progress notification from countdown within %s", notificationWait)
	}
	cancel()
	select {
	case err := <-done:
		if err == nil {
			t.Errorf("the cancelled call returned no error")
		} else if !errors.Is(err, context.Canceled) {
			t.Logf("the cancelled call returned %v", err)
		}
	case <-time.After(notificationWait):
		t.Fatalf("the cancelled call had not returned %s later", notificationWait)
	}
}

func goSDKCancel(t *testing.T, transport, rev string) {
	first, notify := signal()
	cs, m := connectGoSDK(t, transport, rev, &gosdk.ClientOptions{
		ProgressNotificationHandler: func(context.Context, *gosdk.ProgressNotificationClientRequest) { notify() },
	})
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	done := make(chan error, 1)
	go func() {
		params := &gosdk.CallToolParams{Name: "countdown", Arguments: map[string]any{"seconds": 10}}
		params.SetProgressToken("cancel-me")
		_, err := cs.CallTool(ctx, params)
		done <- err
	}()
	cancelOnFirst(t, first, cancel, done)
	m.awaitCancelled(t, "countdown")
	res, err := cs.CallTool(t.Context(), &gosdk.CallToolParams{Name: "echo", Arguments: map[string]any{"text": echoText}})
	if err != nil {
		t.Fatalf("echo after the cancellation: %v", err)
	}
	if tc, ok := res.Content[0].(*gosdk.TextContent); !ok || tc.Text != echoText {
		t.Errorf("echo after the cancellation: %#v", res.Content[0])
	}
}

func mcpGoCancel(t *testing.T, transport, rev string) {
	c, _, m := connectMCPGo(t, transport, rev)
	first, notify := signal()
	c.OnNotification(func(n mcpgo.JSONRPCNotification) {
		if n.Method == string(mcpgo.MethodNotificationProgress) {
			notify()
		}
	})
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	done := make(chan error, 1)
	go func() {
		req := mcpgo.CallToolRequest{}
		req.Params.Name = "countdown"
		req.Params.Arguments = map[string]any{"seconds": 10}
		req.Params.Meta = &mcpgo.Meta{ProgressToken: "cancel-me"}
		_, err := c.CallTool(ctx, req)
		done <- err
	}()
	cancelOnFirst(t, first, cancel, done)
	m.awaitCancelled(t, "countdown")
	req := mcpgo.CallToolRequest{}
	req.Params.Name = "echo"
	req.Params.Arguments = map[string]any{"text": echoText}
	res, err := c.CallTool(t.Context(), req)
	if err != nil {
		t.Fatalf("echo after the cancellation: %v", err)
	}
	if got := mcpGoText(t, res.Content); got != echoText {
		t.Errorf("echo after the cancellation: %q", got)
	}
}
