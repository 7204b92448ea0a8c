package gateway

import (
	"context"
	"encoding/json"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpx-dev/mcpx/generated/mcp"
	"github.com/mcpx-dev/mcpx/runtime/edge"
	"github.com/mcpx-dev/mcpx/runtime/jsonrpc"
	"github.com/mcpx-dev/mcpx/runtime/server"
	"github.com/mcpx-dev/mcpx/testkit/leakcheck"
)

// drainChanges empties g's Changes, for a test that waits for the next.
func drainChanges(g *Gateway) {
	for {
		select {
		case <-g.Changes():
		default:
			return
		}
	}
}

// TestRemove: Remove takes an upstream out while the gateway serves: its
// tools leave the list (tools list_changed), it is closed, its watcher
// stops (leakcheck), the OnRemove functions hear its name, and a second
// Remove, or a call to its tools, fails; the name can be added again.
func TestRemove(t *testing.T) {
	leakcheck.Check(t)
	a, b := newFake("a", "x"), newFake("b", "y")
	g, _ := gateway(t, a, b)
	drainChanges(g)
	var heard []string
	unregister := g.OnRemove(func(name string) { heard = append(heard, name) })
	if err := g.Remove("b"); err != nil {
		t.Fatal(err)
	}
	if got := toolNames(t, g); !slices.Equal(got, []string{"a__x"}) {
		t.Errorf("tools after removing b: %v", got)
	}
	select {
	case m := <-g.Changes():
		if m != mcp.MethodNotificationsToolsListChanged {
			t.Errorf("change after the removal: %s", m)
		}
	default:
		t.Error("no list change signalled for the removal")
	}
	b.mu.Lock()
	closed := b.closed
	b.mu.Unlock()
	if !closed || !slices.Equal(heard, []string{"b"}) {
		t.Errorf("closed %v, OnRemove heard %v", closed, heard)
	}
	if _, err := g.CallTool(context.Background(), &mcp.CallToolRequestParams{Name: "b__y"}); err == nil {
		t.Error("a call to a removed upstream's tool succeeded")
	}
	if err := g.Remove("b"); err == nil || !strings.Contains(err.Error(), `no upstream "b"`) {
		t.Errorf("second Remove: %v", err)
	}
	unregister()
	if err := g.Add(newFake("b", "z"), Options{}); err != nil {
		t.Fatal(err)
	}
	if err := g.Ready(context.Background()); err != nil {
		t.Fatal(err)
	}
	eventually(t, "b back with its new tool", func() bool { return slices.Equal(toolNames(t, g), []string{"a__x", "b__z"}) })
	if len(heard) != 1 {
		t.Errorf("an unregistered OnRemove heard %v", heard)
	}
}

// TestRemoveBeforeFirstLoad: an upstream removed while its first load
// hangs, or lazy and never woken, stops being waited for: Ready returns.
func TestRemoveBeforeFirstLoad(t *testing.T) {
	leakcheck.Check(t)
	g := New(slog.New(slog.DiscardHandler))
	defer g.Close()
	slow := newFake("slow", "s")
	slow.hold = make(chan struct{}) // never closed: its load waits for its context
	if err := g.Add(slow, Options{}); err != nil {
		t.Fatal(err)
	}
	if err := g.Add(newFake("lazy", "l"), Options{Lazy: true}); err != nil {
		t.Fatal(err)
	}
	if err := g.Remove("lazy"); err != nil {
		t.Fatal(err)
	}
	if err := g.Remove("slow"); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := g.Ready(ctx); err != nil {
		t.Fatalf("Ready after removing the upstreams not loaded: %v", err)
	}
}

// sink records what the edge sends one listen.
type sink struct {
	mu   sync.Mutex
	msgs []*jsonrpc.Message
}

func (s *sink) add(m *jsonrpc.Message) { s.mu.Lock(); s.msgs = append(s.msgs, m); s.mu.Unlock() }
func (s *sink) snapshot() []*jsonrpc.Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]*jsonrpc.Message(nil), s.msgs...)
}

func (s *sink) methods() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for _, m := range s.msgs {
		out = append(out, m.Method)
	}
	return out
}

// TestRemoveEndsAffectedListens: through the edge, the upstream that
// alone had prompts removed: the listen promised prompt changes is ended
// by mcpx (notifications/cancelled for its id, then its result with the
// subscriptionId); the tools listen goes on and is told the tools list
// changed.
func TestRemoveEndsAffectedListens(t *testing.T) {
	leakcheck.Check(t)
	a, b := newFake("a", "x"), newFake("b", "y")
	b.caps.Prompts = &mcp.ServerCapabilitiesPrompts{}
	b.prompts = []mcp.Prompt{{Name: "p"}}
	g, _ := gateway(t, a, b)
	e := &edge.Edge{Server: &server.Server{NS: g, Info: mcp.Implementation{Name: "mcpx", Version: "0"}}, Log: slog.New(slog.DiscardHandler)}
	ctx, cancel := context.WithCancel(context.Background())
	watched := make(chan struct{})
	go func() { defer close(watched); e.WatchChanges(ctx) }()
	defer func() { cancel(); <-watched }()

	type listen struct {
		sink  sink
		reply chan edge.Reply
		stop  context.CancelFunc
	}
	open := func(id, filter string) *listen {
		l := &listen{reply: make(chan edge.Reply, 1)}
		lctx, stop := context.WithCancel(context.Background())
		l.stop = stop
		m := &jsonrpc.Message{JSONRPC: "2.0", ID: json.RawMessage(`"` + id + `"`), Method: "subscriptions/listen",
			Params: json.RawMessage(`{"notifications":` + filter + `,` + modernMeta + `}`)}
		go func() { l.reply <- e.Handle(lctx, new(edge.Session), edge.In{Msg: m}, l.sink.add) }()
		// The acknowledgement first; a list change of the upstreams' first
		// loads may follow it at once.
		eventually(t, "the acknowledgement of "+id, func() bool {
			m := l.sink.methods()
			return len(m) > 0 && m[0] == mcp.MethodNotificationsSubscriptionsAcknowledged
		})
		return l
	}
	prompts := open("P", `{"promptsListChanged":true}`)
	tools := open("T", `{"toolsListChanged":true}`)
	defer tools.stop()
	eventually(t, "the edge watching removals", func() bool {
		g.removing.mu.Lock()
		defer g.removing.mu.Unlock()
		return len(g.removing.fns) > 0
	})
	if err := g.Remove("b"); err != nil {
		t.Fatal(err)
	}
	select {
	case r := <-prompts.reply:
		if r.Msg == nil || r.Msg.Error != nil || !strings.Contains(string(r.Msg.Result), `"io.modelcontextprotocol/subscriptionId":"P"`) {
			t.Errorf("the prompts listen's answer: %+v", r.Msg)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the prompts listen was not ended by the removal")
	}
	got := prompts.sink.methods()
	if len(got) < 2 || got[len(got)-1] != mcp.MethodNotificationsCancelled {
		t.Errorf("the prompts listen heard %v, want the cancellation last", got)
	} else if p := string(prompts.sink.msgs[len(got)-1].Params); !strings.Contains(p, `"requestId":"P"`) || !strings.Contains(p, `\"b\" was removed`) {
		t.Errorf("the cancellation: %s", p)
	}
	eventually(t, "the tools listen told of the change", func() bool {
		return slices.Contains(tools.sink.methods(), mcp.MethodNotificationsToolsListChanged)
	})
	select {
	case r := <-tools.reply:
		t.Fatalf("the tools listen ended: %+v", r.Msg)
	default:
	}
}

// TestRemoveEndsListensFollowingItsResources: a listen that follows a
// resource of the upstream removed is ended by mcpx (its updates stopped
// with it), as a listen promised a kind of change no upstream makes any
// more is.
func TestRemoveEndsListensFollowingItsResources(t *testing.T) {
	leakcheck.Check(t)
	a := newFake("a", "x")
	b := newSubFake("b", true) // subscriptions_test.go: its resource x://1
	g, _ := gateway(t, a, b)
	e := &edge.Edge{Server: &server.Server{NS: g, Info: mcp.Implementation{Name: "mcpx", Version: "0"}}, Log: slog.New(slog.DiscardHandler)}
	ctx, cancel := context.WithCancel(context.Background())
	watched := make(chan struct{})
	go func() { defer close(watched); e.WatchChanges(ctx) }()
	defer func() { cancel(); <-watched }()

	var got sink
	reply := make(chan edge.Reply, 1)
	m := &jsonrpc.Message{JSONRPC: "2.0", ID: json.RawMessage(`"R"`), Method: "subscriptions/listen",
		Params: json.RawMessage(`{"notifications":{"resourceSubscriptions":["mcpx://b/x://1"]},` + modernMeta + `}`)}
	go func() { reply <- e.Handle(context.Background(), new(edge.Session), edge.In{Msg: m}, got.add) }()
	eventually(t, "the acknowledgement naming the resource", func() bool {
		for _, msg := range got.snapshot() {
			if msg.Method == mcp.MethodNotificationsSubscriptionsAcknowledged && strings.Contains(string(msg.Params), "mcpx://b/x://1") {
				return true
			}
		}
		return false
	})
	eventually(t, "the edge watching removals", func() bool {
		g.removing.mu.Lock()
		defer g.removing.mu.Unlock()
		return len(g.removing.fns) > 0
	})
	if err := g.Remove("b"); err != nil {
		t.Fatal(err)
	}
	select {
	case r := <-reply:
		if r.Msg == nil || r.Msg.Error != nil || !strings.Contains(string(r.Msg.Result), `"io.modelcontextprotocol/subscriptionId":"R"`) {
			t.Errorf("the listen's answer: %+v", r.Msg)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the listen following b's resource was not ended by b's removal")
	}
	if ms := got.methods(); ms[len(ms)-1] != mcp.MethodNotificationsCancelled {
		t.Errorf("heard %v, want the cancellation last", ms)
	}
}
