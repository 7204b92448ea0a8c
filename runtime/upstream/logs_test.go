package upstream

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/mcpx-dev/mcpx/generated/mcp"
	"github.com/mcpx-dev/mcpx/runtime/catalog"
	"github.com/mcpx-dev/mcpx/runtime/edge"
	"github.com/mcpx-dev/mcpx/runtime/server"
	"github.com/mcpx-dev/mcpx/runtime/transport/streamhttp"
	"github.com/mcpx-dev/mcpx/testkit/leakcheck"
)

// logNotifier is a client's server.Notifier that asked for log messages.
type logNotifier struct {
	mu  sync.Mutex
	got []string
}

func (n *logNotifier) Notify(method string, params any) bool {
	if p, ok := params.(*mcp.LoggingMessageNotificationParams); ok && method == mcp.MethodNotificationsMessage {
		var s string
		_ = json.Unmarshal(p.Data, &s)
		n.mu.Lock()
		n.got = append(n.got, s)
		n.mu.Unlock()
	}
	return true
}
func (n *logNotifier) ProgressToken() json.RawMessage { return nil }
func (n *logNotifier) LogLevel() mcp.LoggingLevel     { return mcp.LoggingLevelDebug }

// TestLogsFollowTheirRequest: an HTTP upstream's log message on a request's
// response stream reaches the client of that request, even while other
// requests that asked for logs run on the same upstream.
func TestLogsFollowTheirRequest(t *testing.T) {
	leakcheck.Check(t)
	const calls = 3
	var arrived sync.WaitGroup
	arrived.Add(calls)
	cat := catalog.New()
	cat.SetLogging(true)
	cat.AddTool(mcp.Tool{Name: "say", InputSchema: json.RawMessage(`{"type":"object","properties":{"n":{"type":"integer"}}}`)},
		func(ctx context.Context, args json.RawMessage) (*mcp.CallToolResult, error) {
			var a struct{ N int }
			_ = json.Unmarshal(args, &a)
			arrived.Done()
			arrived.Wait() // every call is running before any logs
			server.Log(ctx, mcp.LoggingLevelInfo, "say", "call "+strconv.Itoa(a.N))
			return catalog.TextResult("ok"), nil
		})
	c := New(Spec{Name: "logs", URL: serveCatalog(t, cat), Timeout: 10 * time.Second}, mcpxInfo, testLog(t))
	defer c.Close()

	clients := make([]*logNotifier, calls)
	var wg sync.WaitGroup
	for i := range clients {
		clients[i] = &logNotifier{}
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx := server.WithNotifier(context.Background(), clients[i])
			if _, err := mcp.CallTool(ctx, c, &mcp.CallToolRequestParams{Name: "say", Arguments: json.RawMessage(`{"n":` + strconv.Itoa(i) + `}`)}); err != nil {
				t.Errorf("call %d: %v", i, err)
			}
		}()
	}
	wg.Wait()
	for i, n := range clients {
		if want := "call " + strconv.Itoa(i); len(n.got) != 1 || n.got[0] != want {
			t.Errorf("client %d got log messages %q, want [%q]", i, n.got, want)
		}
	}
}

// serveCatalog serves cat over Streamable HTTP (mcpx's own runtime) until
// the test ends and returns its endpoint.
func serveCatalog(t *testing.T, cat *catalog.Catalog) string {
	srv := httptest.NewServer(streamhttp.New(&edge.Edge{Server: &server.Server{NS: cat, Info: mcp.Implementation{Name: "catalog", Version: "1"}}}, streamhttp.Options{}))
	t.Cleanup(srv.Close)
	return srv.URL + "/mcp"
}
