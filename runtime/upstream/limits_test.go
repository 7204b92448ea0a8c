package upstream

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpx-dev/mcpx/generated/mcp"
	"github.com/mcpx-dev/mcpx/runtime/catalog"
	"github.com/mcpx-dev/mcpx/testkit/leakcheck"
)

// TestMaxInFlight: calls beyond Spec.MaxInFlight wait for a slot as long
// as their deadline allows, then fail saying why; the upstream never sees
// more than the limit at once, and slots come back when calls end.
func TestMaxInFlight(t *testing.T) {
	leakcheck.Check(t)
	const limit = 2
	release := make(chan struct{})
	var mu sync.Mutex
	running, most := 0, 0
	cat := catalog.New()
	cat.AddTool(mcp.Tool{Name: "hold", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(ctx context.Context, _ json.RawMessage) (*mcp.CallToolResult, error) {
			mu.Lock()
			running++
			most = max(most, running)
			mu.Unlock()
			defer func() { mu.Lock(); running--; mu.Unlock() }()
			select {
			case <-release:
			case <-ctx.Done():
			}
			return catalog.TextResult("done"), nil
		})
	c := New(Spec{Name: "busy", URL: serveCatalog(t, cat), Timeout: 10 * time.Second, MaxInFlight: limit}, mcpxInfo, testLog(t))
	defer c.Close()
	call := func(ctx context.Context) error {
		_, err := mcp.CallTool(ctx, c, &mcp.CallToolRequestParams{Name: "hold"})
		return err
	}

	errs := make(chan error, limit)
	for range limit {
		go func() { errs <- call(context.Background()) }()
	}
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		mu.Lock()
		n := running
		mu.Unlock()
		if n == limit {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d calls reached the upstream, want %d", n, limit)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	if err := call(ctx); err == nil || !strings.Contains(err.Error(), "2 calls were in flight") {
		t.Errorf("a call beyond the limit: %v, want an error saying the limit was reached", err)
	}
	close(release)
	for range limit {
		if err := <-errs; err != nil {
			t.Errorf("a call within the limit: %v", err)
		}
	}
	if err := call(context.Background()); err != nil {
		t.Errorf("a call after the others ended: %v", err)
	}
	if most > limit {
		t.Errorf("the upstream ran %d calls at once, limit %d", most, limit)
	}
}
