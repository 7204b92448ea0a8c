package stdio_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpx-dev/mcpx/generated/mcp"
	"github.com/mcpx-dev/mcpx/runtime/edge"
	"github.com/mcpx-dev/mcpx/runtime/server"
	"github.com/mcpx-dev/mcpx/runtime/transport/stdio"
	"github.com/mcpx-dev/mcpx/testkit/leakcheck"
)

// changingNS tells of list changes (server.Changer) and of parts removed
// (server.Remover), as the gateway does: a removal takes capabilities
// away, then calls the OnRemove functions.
type changingNS struct {
	ns
	changes chan string

	mu      sync.Mutex
	caps    mcp.ServerCapabilities
	removed map[int]func(string)
	n       int
}

func newChangingNS() *changingNS {
	return &changingNS{changes: make(chan string, 16), removed: map[int]func(string){}, caps: mcp.ServerCapabilities{
		Tools: &mcp.ServerCapabilitiesTools{}, Prompts: &mcp.ServerCapabilitiesPrompts{}, Resources: &mcp.ServerCapabilitiesResources{}}}
}

func (n *changingNS) Capabilities() mcp.ServerCapabilities {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.caps
}
func (n *changingNS) Changes() <-chan string { return n.changes }
func (n *changingNS) OnRemove(f func(string)) func() {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.n++
	id := n.n
	n.removed[id] = f
	return func() { n.mu.Lock(); delete(n.removed, id); n.mu.Unlock() }
}

// remove drops the part name, which took the prompts with it.
func (n *changingNS) remove(name string) {
	// The edge registers when WatchChanges starts, in its own goroutine.
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		n.mu.Lock()
		watched := len(n.removed) > 0
		n.mu.Unlock()
		if watched {
			break
		}
	}
	n.mu.Lock()
	n.caps.Prompts = nil
	fns := make([]func(string), 0, len(n.removed))
	for _, f := range n.removed {
		fns = append(fns, f)
	}
	n.mu.Unlock()
	for _, f := range fns {
		f(name)
	}
}

// startWith serves namespace on pipes, its changes watched, until ctx ends
// or the test does.
func startWith(t *testing.T, ctx context.Context, namespace server.Namespace, opt stdio.Options) *session {
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	e := &edge.Edge{Server: &server.Server{NS: namespace, Info: mcp.Implementation{Name: "t", Version: "1"}}}
	wctx, stop := context.WithCancel(context.Background())
	watched := make(chan struct{})
	go func() { defer close(watched); e.WatchChanges(wctx) }()
	s := &session{t: t, in: inW, out: bufio.NewScanner(outR), done: make(chan error, 1)}
	s.out.Buffer(nil, 1<<20)
	ctx, cancel := context.WithCancel(ctx)
	go func() { s.done <- stdio.Serve(ctx, e, inR, outW, opt); outW.Close() }()
	t.Cleanup(func() {
		inW.Close()
		go io.Copy(io.Discard, outR) // what mcpx writes on the way out
		if t.Failed() {
			cancel() // a Serve stuck in what the test caught stops
		}
		<-s.done
		cancel()
		stop()
		<-watched
	})
	return s
}

func listenLine(id, filter string) string {
	return `{"jsonrpc":"2.0","id":"` + id + `","method":"subscriptions/listen","params":{"notifications":` + filter + `,"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`
}

func wantAck(t *testing.T, got, id string) {
	t.Helper()
	if !strings.Contains(got, "notifications/subscriptions/acknowledged") || !strings.Contains(got, `"io.modelcontextprotocol/subscriptionId":"`+id+`"`) {
		t.Fatalf("acknowledgement of %s: %s", id, got)
	}
}

// wantEnded checks the two messages mcpx sends when it ends listen id:
// notifications/cancelled naming it, with reason, then its result tagged
// with its subscriptionId.
func wantEnded(t *testing.T, s *session, id, reason string) {
	t.Helper()
	if got := s.recv(); !strings.Contains(got, `"method":"notifications/cancelled"`) || !strings.Contains(got, `"requestId":"`+id+`"`) || !strings.Contains(got, reason) {
		t.Fatalf("first message as listen %s ends: %s", id, got)
	}
	if got := s.recv(); !strings.Contains(got, `"id":"`+id+`","result"`) || !strings.Contains(got, `"io.modelcontextprotocol/subscriptionId":"`+id+`"`) || !strings.Contains(got, `"resultType":"complete"`) {
		t.Fatalf("second message as listen %s ends: %s", id, got)
	}
}

// TestHundredListensHoldNoSlots: open listens hold no request slot, so
// 100 of them (MaxInFlight is 64) and then an ordinary request are all
// answered.
func TestHundredListensHoldNoSlots(t *testing.T) {
	leakcheck.Check(t)
	s := startWith(t, context.Background(), newChangingNS(), stdio.Options{})
	// Written apart: were the listens to hold the slots, mcpx would stop
	// reading, and the test must see that as missing answers, not hang.
	go func() {
		for i := range 100 {
			if _, err := io.WriteString(s.in, listenLine(fmt.Sprint("L", i), `{"toolsListChanged":true}`)+"\n"); err != nil {
				return
			}
		}
		io.WriteString(s.in, `{"jsonrpc":"2.0","id":"ping","method":"ping"}`+"\n")
	}()
	acked, pong := map[string]bool{}, false
	for range 101 { // the ping's answer may come before the last acknowledgements
		got := s.recv()
		if strings.Contains(got, `"id":"ping","result"`) {
			pong = true
			continue
		}
		if !strings.Contains(got, "notifications/subscriptions/acknowledged") {
			t.Fatalf("want an acknowledgement: %s", got)
		}
		for i := range 100 {
			if strings.Contains(got, fmt.Sprintf(`"io.modelcontextprotocol/subscriptionId":"L%d"`, i)) {
				acked[fmt.Sprint("L", i)] = true
			}
		}
	}
	if len(acked) != 100 || !pong {
		t.Fatalf("%d listens acknowledged, want 100; the ping answered: %v", len(acked), pong)
	}
}

// TestListensBounded: beyond MaxListens a listen is refused at once, and
// the connection goes on.
func TestListensBounded(t *testing.T) {
	leakcheck.Check(t)
	s := startWith(t, context.Background(), newChangingNS(), stdio.Options{MaxListens: 2})
	s.send(listenLine("a", `{}`))
	wantAck(t, s.recv(), "a")
	s.send(listenLine("b", `{}`))
	wantAck(t, s.recv(), "b")
	s.send(listenLine("c", `{}`))
	if got := s.recv(); !strings.Contains(got, `"id":"c","error":{"code":-32603`) {
		t.Errorf("the listen beyond MaxListens: %s", got)
	}
	// Ending one makes room, once its goroutine is gone.
	s.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"a"}}`)
	for i := 0; ; i++ {
		id := fmt.Sprint("d", i)
		s.send(listenLine(id, `{}`))
		got := s.recv()
		if strings.Contains(got, "acknowledged") {
			wantAck(t, got, id)
			break
		}
		if i == 100 {
			t.Fatalf("no room for a listen after one was ended: %s", got)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestStdioListenEndedWhenItsSourceStops: a part of the namespace removed
// ends the listen it was the source of (promised prompt changes nothing
// can now produce): notifications/cancelled for its id, then its result.
// The tools listen on the same connection goes on.
func TestStdioListenEndedWhenItsSourceStops(t *testing.T) {
	leakcheck.Check(t)
	n := newChangingNS()
	s := startWith(t, context.Background(), n, stdio.Options{})
	s.send(listenLine("P", `{"promptsListChanged":true}`))
	wantAck(t, s.recv(), "P")
	s.send(listenLine("T", `{"toolsListChanged":true}`))
	wantAck(t, s.recv(), "T")
	n.remove("b")
	wantEnded(t, s, "P", `\"b\" was removed`)
	n.changes <- mcp.MethodNotificationsToolsListChanged
	if got := s.recv(); !strings.Contains(got, mcp.MethodNotificationsToolsListChanged) || !strings.Contains(got, `"io.modelcontextprotocol/subscriptionId":"T"`) {
		t.Errorf("the tools listen after the removal: %s", got)
	}
}

// TestStdioListenEndedAtShutdown: Serve stopping (SIGINT) ends every
// listen with notifications/cancelled, then its result with its
// subscriptionId.
func TestStdioListenEndedAtShutdown(t *testing.T) {
	leakcheck.Check(t)
	ctx, cancel := context.WithCancel(context.Background())
	s := startWith(t, ctx, newChangingNS(), stdio.Options{})
	s.send(listenLine("A", `{"toolsListChanged":true}`))
	wantAck(t, s.recv(), "A")
	cancel()
	wantEnded(t, s, "A", "closing")
}

// TestListenDoesNotHoldTheDrain: at EOF the requests still running get
// Drain to finish; an open listen is not one of them (it would never
// finish): Serve returns at once, ending it.
func TestListenDoesNotHoldTheDrain(t *testing.T) {
	leakcheck.Check(t)
	s := startWith(t, context.Background(), newChangingNS(), stdio.Options{Drain: 5 * time.Second})
	s.send(listenLine("A", `{"toolsListChanged":true}`))
	wantAck(t, s.recv(), "A")
	began := time.Now()
	s.in.Close()
	wantEnded(t, s, "A", "closing")
	select {
	case err := <-s.done:
		s.done <- err
	case <-time.After(4 * time.Second):
		t.Fatal("Serve still running 4s after EOF with only a listen open")
	}
	if d := time.Since(began); d > 2*time.Second {
		t.Errorf("Serve took %s after EOF", d)
	}
}

// TestStdioSeveralListensEachItsFilter: one connection holds several
// listens, each with its own filter; each hears only what it asked for,
// tagged with its id (and the ordinary requests between are answered).
func TestStdioSeveralListensEachItsFilter(t *testing.T) {
	leakcheck.Check(t)
	n := newChangingNS()
	s := startWith(t, context.Background(), n, stdio.Options{})
	for id, f := range map[string]string{"tools": `{"toolsListChanged":true}`, "prompts": `{"promptsListChanged":true}`, "both": `{"toolsListChanged":true,"resourcesListChanged":true}`} {
		s.send(listenLine(id, f))
		wantAck(t, s.recv(), id)
	}
	n.changes <- mcp.MethodNotificationsPromptsListChanged
	n.changes <- mcp.MethodNotificationsResourcesListChanged
	n.changes <- mcp.MethodNotificationsToolsListChanged
	got := map[string][]string{}
	for range 4 {
		line := s.recv()
		for _, id := range []string{"tools", "prompts", "both"} {
			if strings.Contains(line, `"io.modelcontextprotocol/subscriptionId":"`+id+`"`) {
				for _, m := range []string{mcp.MethodNotificationsToolsListChanged, mcp.MethodNotificationsPromptsListChanged, mcp.MethodNotificationsResourcesListChanged} {
					if strings.Contains(line, m) {
						got[id] = append(got[id], m)
					}
				}
			}
		}
	}
	want := map[string]string{
		"tools":   fmt.Sprint([]string{mcp.MethodNotificationsToolsListChanged}),
		"prompts": fmt.Sprint([]string{mcp.MethodNotificationsPromptsListChanged}),
		"both":    fmt.Sprint([]string{mcp.MethodNotificationsResourcesListChanged, mcp.MethodNotificationsToolsListChanged}),
	}
	for id, w := range want {
		if fmt.Sprint(got[id]) != w {
			t.Errorf("listen %s heard %v, want %s", id, got[id], w)
		}
	}
	s.send(`{"jsonrpc":"2.0","id":"ping","method":"ping"}`)
	if line := s.recv(); !strings.Contains(line, `"id":"ping","result"`) {
		t.Errorf("after the changes, want only the ping's answer: %s", line)
	}
}
