package gateway

import (
	"context"
	"encoding/json"
	"log/slog"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/mcpx-dev/mcpx/generated/mcp"
	"github.com/mcpx-dev/mcpx/runtime/edge"
	"github.com/mcpx-dev/mcpx/runtime/jsonrpc"
	"github.com/mcpx-dev/mcpx/runtime/server"
	"github.com/mcpx-dev/mcpx/testkit/leakcheck"
)

// TestFollowChangesEachGetsEvery: every follower gets every change, in
// order; one that never reads holds nobody up, and what it loses is
// repeats only: when it reads at last, each kind of change signalled
// meanwhile is there, once. Its channel closes with its context.
func TestFollowChangesEachGetsEvery(t *testing.T) {
	leakcheck.Check(t)
	g := New(slog.New(slog.DiscardHandler))
	defer g.Close()
	ctx, cancel := context.WithCancel(context.Background())
	fast, slow := g.FollowChanges(ctx), g.FollowChanges(ctx)
	tools, prompts, resources := mcp.MethodNotificationsToolsListChanged, mcp.MethodNotificationsPromptsListChanged, mcp.MethodNotificationsResourcesListChanged
	var sent []string
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := range 200 {
			m := tools
			switch {
			case i == 100:
				m = prompts
			case i == 150:
				m = resources
			}
			g.signal(m)
			sent = append(sent, m)
			if got := <-fast; got != m {
				t.Errorf("the fast follower's change %d: %s, want %s", i, got, m)
			}
		}
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("a follower that does not read held the signals up")
	}
	var got []string
	for len(slow) > 0 {
		got = append(got, <-slow)
	}
	// Its queue filled with tools changes; prompts and resources joined
	// it (the repeats of tools made room), each once, after tools.
	var kinds []string
	for _, m := range got {
		if !slices.Contains(kinds, m) {
			kinds = append(kinds, m)
		}
	}
	if !slices.Equal(kinds, []string{tools, prompts, resources}) {
		t.Errorf("the slow follower read %v: want tools, prompts and resources, in that order", got)
	}
	if len(got) > ChangesQueue {
		t.Errorf("the slow follower had %d waiting, more than ChangesQueue", len(got))
	}
	cancel()
	eventually(t, "the followers' channels closed", func() bool {
		_, ok1 := <-fast
		_, ok2 := <-slow
		return !ok1 && !ok2
	})
}

// TestTwoEdgesHearEveryChange: two edges on one gateway (as several
// listeners, or a relay to other replicas, would be) each tell their own
// clients of every list change, not some each.
func TestTwoEdgesHearEveryChange(t *testing.T) {
	leakcheck.Check(t)
	f := newFake("gh", "a")
	g, _ := gateway(t, f)
	drainChanges(g)
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	defer wg.Wait()
	defer cancel()
	type heard struct {
		mu sync.Mutex
		n  int
	}
	var h [2]heard
	for i := range h {
		e := &edge.Edge{Server: &server.Server{NS: g, Info: mcp.Implementation{Name: "mcpx", Version: "0"}}, Log: slog.New(slog.DiscardHandler)}
		sess := new(edge.Session)
		m := &jsonrpc.Message{JSONRPC: "2.0", ID: json.RawMessage(`1`), Method: "initialize", Params: json.RawMessage(`{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}`)}
		if r := e.Handle(ctx, sess, edge.In{Msg: m, Default: edge.Headerless}, nil); r.Msg == nil || r.Msg.Error != nil {
			t.Fatalf("initialize: %+v", r.Msg)
		}
		e.Attach(sess, func(m *jsonrpc.Message) {
			if m.Method == mcp.MethodNotificationsToolsListChanged {
				h[i].mu.Lock()
				h[i].n++
				h[i].mu.Unlock()
			}
		})
		wg.Add(1)
		go func() { defer wg.Done(); e.WatchChanges(ctx) }()
	}
	// A third follower counts what the gateway signals: a change may be
	// told twice (the upstream's word, the merged list's).
	counted := g.FollowChanges(ctx)
	time.Sleep(50 * time.Millisecond) // both edges follow
	signalled := 0
	for i := range 5 {
		f.set(func(f *fake) { f.tools = append(f.tools, tool(string(rune('b'+i)))) })
		f.event(mcp.MethodNotificationsToolsListChanged)
		<-counted
		signalled++
		for len(counted) > 0 {
			<-counted
			signalled++
		}
		for j := range h {
			eventually(t, "each edge hears every change", func() bool {
				h[j].mu.Lock()
				defer h[j].mu.Unlock()
				return h[j].n >= i+1
			})
		}
	}
	time.Sleep(50 * time.Millisecond)
	for len(counted) > 0 {
		<-counted
		signalled++
	}
	for j := range h {
		eventually(t, "each edge hears every signal", func() bool {
			h[j].mu.Lock()
			defer h[j].mu.Unlock()
			return h[j].n == signalled
		})
	}
}
