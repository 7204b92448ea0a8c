package server

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/mcpx-dev/mcpx/generated/mcp"
)

type testNotifier struct{ name string }

func (testNotifier) Notify(string, any) bool                    { return false }
func (testNotifier) ProgressToken() json.RawMessage             { return nil }
func (n testNotifier) LogLevel() mcp.LoggingLevel               { return mcp.LoggingLevel(n.name) }
func (testAsker) Ask(context.Context, string, any) (any, error) { return nil, nil }

type testAsker struct{ name string }

// testCaps counts its reads.
type testCaps struct{ client, relayed int }

func (c *testCaps) ClientCapabilities() *mcp.ClientCapabilities {
	c.client++
	return &mcp.ClientCapabilities{Roots: json.RawMessage(`{}`)}
}

func (c *testCaps) RelayedCapabilities(declared *mcp.ClientCapabilities) *mcp.ClientCapabilities {
	c.relayed++
	return &mcp.ClientCapabilities{Roots: declared.Roots, Experimental: json.RawMessage(`{"relayed":{}}`)}
}

// TestWithRequest: a Request in one frame reads as the six values set one
// by one would: each accessor finds its field, the capabilities are read
// once however often they are asked, a value set over it afterwards wins,
// and one it does not hold (no session) is the parent's.
func TestWithRequest(t *testing.T) {
	done := make(chan struct{})
	parent := WithClientSession(context.Background(), 7, done)
	caps := &testCaps{}
	ctx := WithRequest(parent, Request{TakesInputRequired: true, Notifier: testNotifier{"debug"}, Asker: testAsker{"a"}, Caps: caps})

	if !TakesInputRequired(ctx) || LogLevel(ctx) != "debug" || !CanAsk(ctx) {
		t.Errorf("TakesInputRequired %v, LogLevel %q, CanAsk %v; want true, debug, true", TakesInputRequired(ctx), LogLevel(ctx), CanAsk(ctx))
	}
	if id, d, ok := ClientSession(ctx); id != 7 || d != done || !ok {
		t.Errorf("no session in the Request: ClientSession = %d, %v, %v; want the parent's 7", id, d, ok)
	}
	for range 3 {
		if c := ClientCapabilities(ctx); c.Roots == nil {
			t.Errorf("ClientCapabilities = %+v, want the Request's", c)
		}
		if c := RelayedCapabilities(ctx); c == nil || c.Roots == nil || c.Experimental == nil {
			t.Errorf("RelayedCapabilities = %+v, want those relayed for the Request's", c)
		}
	}
	if caps.client != 1 || caps.relayed != 1 {
		t.Errorf("capabilities read %d and %d times, want once each", caps.client, caps.relayed)
	}

	if FollowLimit(ctx) != 0 {
		t.Errorf("FollowLimit %v with none set, want 0", FollowLimit(ctx))
	}
	if got := FollowLimit(WithRequest(WithFollowLimit(parent, time.Hour), Request{})); got != time.Hour {
		t.Errorf("FollowLimit %v, want the parent's hour", got)
	}
	if got := FollowLimit(WithRequest(parent, Request{FollowLimit: time.Minute})); got != time.Minute {
		t.Errorf("FollowLimit %v, want the Request's minute", got)
	}
	if got := FollowLimit(WithFollowLimit(WithRequest(parent, Request{FollowLimit: time.Minute}), time.Second)); got != time.Second {
		t.Errorf("FollowLimit %v, want the second set over the Request", got)
	}

	other := make(chan struct{})
	own := WithRequest(parent, Request{Session: 9, SessionDone: other})
	if id, d, _ := ClientSession(own); id != 9 || d != other {
		t.Errorf("ClientSession = %d, want the Request's 9", id)
	}
	if TakesInputRequired(own) || CanAsk(own) || NotifierOf(own) != nil || RelayedCapabilities(own) != nil {
		t.Error("an empty Request reads as something set")
	}
	if c := ClientCapabilities(own); c == nil || c.Roots != nil {
		t.Errorf("ClientCapabilities with none = %+v, want empty", c)
	}

	over := WithNotifier(WithTakesInputRequired(WithClientSession(ctx, 8, other), false), testNotifier{"error"})
	over = WithClientCapabilities(over, func() *mcp.ClientCapabilities { return &mcp.ClientCapabilities{} })
	if TakesInputRequired(over) || LogLevel(over) != "error" || ClientCapabilities(over).Roots != nil || Client(over) != 8 {
		t.Errorf("values set over the Request are not the ones read: TakesInputRequired %v, LogLevel %q, session %d", TakesInputRequired(over), LogLevel(over), Client(over))
	}
	if a, _ := WithAsker(ctx, testAsker{"b"}).Value(askerKey{}).(testAsker); a.name != "b" {
		t.Errorf("asker set over the Request: %q, want b", a.name)
	}
	// The context package follows a cancellation through it.
	cctx, cancel := context.WithCancel(context.Background())
	child, stop := context.WithCancel(WithRequest(cctx, Request{}))
	defer stop()
	cancel()
	<-child.Done()
}
