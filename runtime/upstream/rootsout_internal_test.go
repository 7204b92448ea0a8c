package upstream

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/mcpx-dev/mcpx/generated/mcp"
	"github.com/mcpx-dev/mcpx/runtime/server"
)

// TestRootsOutsideCallDecision: whose roots a roots/list that no call
// places is for, and how it is answered. No client session: refused. One
// that answered roots before (through any upstream): those, even with a
// call of its connecting, until its roots change (RootsChanged), its
// session ends or an hour passes. One with a call inside Call (still
// connecting, not yet sent) and no roots known: asked through that call.
// Otherwise refused; two sessions too, naming per-client.
func TestRootsOutsideCallDecision(t *testing.T) {
	now := time.Now()
	c := &Client{}
	c.rootsClients.now = func() time.Time { return now }
	sessionRoots.now = func() time.Time { return now }
	defer func() { sessionRoots.now = nil }()
	ended := make(chan struct{})
	session7 := server.WithClientSession(context.Background(), 7, ended)
	want := func(step string, wantCtx context.Context, wantKnown bool, why string) {
		t.Helper()
		_, ctx, known, got := c.rootsOutsideCall()
		if ctx != wantCtx || (known != nil) != wantKnown || !strings.Contains(got, why) {
			t.Errorf("%s: ctx %v known %v why %q; want ctx %v known %v why containing %q", step, ctx, known, got, wantCtx, wantKnown, why)
		}
	}
	want("no session", nil, false, "no client session has used it")

	ctx, cancel := context.WithCancel(server.WithAsker(context.Background(), nobody{}))
	done := c.rootsClients.calling(7, ctx)
	want("a call of session 7 connecting", ctx, false, "")
	cancel()
	want("its call cancelled, still inside Call", nil, false, "does not know its roots")
	done()

	c.rootsClients.used(7)
	sessionRoots.remember(session7, &mcp.ListRootsResult{Roots: []mcp.Root{{URI: "file:///work"}}})
	want("session 7 answered roots in a call before (through any upstream)", nil, true, "")
	live, stop := context.WithCancel(server.WithAsker(context.Background(), nobody{}))
	done = c.rootsClients.calling(7, live)
	want("known roots, and a call of the session connecting", nil, true, "")
	done()
	stop()
	c.RootsChanged(7)
	want("its roots changed", nil, false, "does not know its roots (not asked yet, or changed since)")
	sessionRoots.remember(session7, &mcp.ListRootsResult{})
	want("answered again", nil, true, "")
	close(ended)
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if _, ok := sessionRoots.roots(7); !ok {
			break
		}
	}
	want("its session ended", nil, false, "does not know its roots")
	sessionRoots.remember(server.WithClientSession(context.Background(), 7, nil), &mcp.ListRootsResult{})
	now = now.Add(rootsClientTTL + time.Second)
	want("an hour after its last call", nil, false, "no client session has used it")
	if _, ok := sessionRoots.roots(7); ok {
		t.Error("roots answered over an hour ago are still known")
	}

	c.rootsClients.used(7)
	c.rootsClients.used(8)
	want("two sessions", nil, false, "several client sessions use it")
}
