package upstream

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpx-dev/mcpx/generated/mcp"
	"github.com/mcpx-dev/mcpx/testkit/leakcheck"
)

// TestLegacyHTTPListChanges: a legacy upstream over Streamable HTTP tells
// of list changes on its session's GET stream, which mcpx holds open; the
// change reaches Changes.
func TestLegacyHTTPListChanges(t *testing.T) {
	leakcheck.Check(t)
	s := goSDKServer("2025-06-18", func(string, ...any) {})
	srv := httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return s }, &sdk.StreamableHTTPOptions{}))
	defer srv.Close()
	c := New(Spec{Name: "legacy", URL: srv.URL, Timeout: 5 * time.Second}, mcp.Implementation{Name: "mcpx", Version: "test"}, nil)
	defer c.Close()
	if _, err := mcp.ListTools(context.Background(), c, nil); err != nil {
		t.Fatal(err)
	}
	// The GET stream opens in the background: add tools until a change is
	// heard, or give up after 5 s.
	deadline := time.After(5 * time.Second)
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for i := 0; ; i++ {
		select {
		case ev := <-c.Changes():
			if ev != mcp.MethodNotificationsToolsListChanged {
				t.Fatalf("change %q, want tools/list_changed", ev)
			}
			return
		case <-tick.C:
			s.AddTool(&sdk.Tool{Name: "added" + strconv.Itoa(i), InputSchema: map[string]any{"type": "object"}},
				func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
					return &sdk.CallToolResult{}, nil
				})
		case <-deadline:
			t.Fatal("no list change arrived on the legacy session's GET stream")
		}
	}
}
