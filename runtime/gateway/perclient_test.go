package gateway

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpx-dev/mcpx/generated/mcp"
	"github.com/mcpx-dev/mcpx/runtime/server"
)

// TestPerClientPool: a request with no client session goes to the shared
// upstream; each client session gets one made by New at its first request
// and keeps it; a session's end closes its own only; a request of a session
// already ended makes none; Close closes every one left.
func TestPerClientPool(t *testing.T) {
	var mu sync.Mutex
	var made []*fake
	newUp := func() Upstream {
		mu.Lock()
		defer mu.Unlock()
		f := newFake(fmt.Sprintf("own%d", len(made)+1), "t")
		made = append(made, f)
		return f
	}
	g, _ := gateway(t, newFake("p", "t"), Options{PerClient: &PerClient{New: newUp}})
	call := func(ctx context.Context) string {
		t.Helper()
		r, err := g.CallTool(ctx, &mcp.CallToolRequestParams{Name: "p__t"})
		if err != nil {
			return "error: " + err.Error()
		}
		return text(r)
	}
	if got := call(context.Background()); got != "p:t" {
		t.Errorf("no client session: %q, want the shared upstream's", got)
	}
	end1, end2 := make(chan struct{}), make(chan struct{})
	s1 := server.WithClientSession(context.Background(), 1, end1)
	s2 := server.WithClientSession(context.Background(), 2, end2)
	for _, c := range []struct {
		ctx  context.Context
		want string
	}{{s1, "own1:t"}, {s2, "own2:t"}, {s1, "own1:t"}} {
		if got := call(c.ctx); got != c.want {
			t.Errorf("%q, want %q", got, c.want)
		}
	}
	close(end1)
	eventually(t, "session 1's upstream closed", func() bool { made[0].mu.Lock(); defer made[0].mu.Unlock(); return made[0].closed })
	if made[1].closed {
		t.Error("session 2's upstream was closed with session 1's end")
	}
	if got := call(s1); !strings.Contains(got, "the client session has ended") {
		t.Errorf("a request of an ended session: %q", got)
	}
	if len(made) != 2 {
		t.Errorf("%d upstreams made, want 2", len(made))
	}
	g.Close()
	if !made[1].closed {
		t.Error("Close left session 2's upstream open")
	}
}

// TestPerClientLimitUnit: past Max, a new session's request fails naming
// the upstream and the limit; the upstream of a session that went idle is
// closed, which makes room.
func TestPerClientLimitUnit(t *testing.T) {
	var made []*fake
	newUp := func() Upstream { f := newFake("own", "t"); made = append(made, f); return f }
	g, _ := gateway(t, newFake("p", "t"), Options{PerClient: &PerClient{New: newUp, Max: 1, Idle: 100 * time.Millisecond}})
	s := func(id uint64) context.Context {
		return server.WithClientSession(context.Background(), id, make(chan struct{}))
	}
	if _, err := g.CallTool(s(1), &mcp.CallToolRequestParams{Name: "p__t"}); err != nil {
		t.Fatal(err)
	}
	_, err := g.CallTool(s(2), &mcp.CallToolRequestParams{Name: "p__t"})
	if err == nil || !strings.HasPrefix(err.Error(), `upstream "p": its per-client limit of 1 client sessions`) {
		t.Errorf("past the limit: %v", err)
	}
	eventually(t, "a's idle upstream closed", func() bool { made[0].mu.Lock(); defer made[0].mu.Unlock(); return made[0].closed })
	if _, err := g.CallTool(s(2), &mcp.CallToolRequestParams{Name: "p__t"}); err != nil {
		t.Errorf("after a's went idle: %v", err)
	}
}
