package upstream

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/mcpx-dev/mcpx/generated/mcp"
	"github.com/mcpx-dev/mcpx/runtime/budget"
	"github.com/mcpx-dev/mcpx/runtime/catalog"
	"github.com/mcpx-dev/mcpx/runtime/edge"
	"github.com/mcpx-dev/mcpx/runtime/jsonrpc"
	"github.com/mcpx-dev/mcpx/runtime/server"
	"github.com/mcpx-dev/mcpx/runtime/transport/streamhttp"
)

// bigAnswer is the size of the "big" tool's text: over the budget's
// threshold in these tests.
const bigAnswer = 2 << 20

// smallBudget makes the process's large-message budget 3 MiB (counting
// messages over 1 MiB, waiting 300ms) until the test ends.
func smallBudget(t *testing.T) *budget.Budget {
	old := budget.Default()
	b := budget.New(3<<20, 1<<20, 300*time.Millisecond)
	budget.SetDefault(b)
	t.Cleanup(func() { budget.SetDefault(old) })
	return b
}

// TestLargeAnswerBudget: while the large-message budget is held, a large
// answer from a stdio or an HTTP upstream is dropped after the budget's
// wait, and its call gets -32603 saying the server is busy with large
// messages (not a timeout, not a hang, not a lost answer); once the
// budget has room, the same call is answered, and the budget is given
// back.
func TestLargeAnswerBudget(t *testing.T) {
	cat := catalog.New()
	cat.AddTool(mcp.Tool{Name: "big", InputSchema: []byte(`{"type":"object"}`)}, func(context.Context, json.RawMessage) (*mcp.CallToolResult, error) {
		return catalog.TextResult(strings.Repeat("b", bigAnswer)), nil
	})
	for _, kind := range []string{"stdio", "http", "sse"} {
		t.Run(kind, func(t *testing.T) {
			defer noLeaks(t)()
			b := smallBudget(t)
			spec := newProc(t, "big", "raw:").spec
			switch kind {
			case "http":
				srv := httptest.NewServer(streamhttp.New(&edge.Edge{Server: &server.Server{NS: cat, Info: mcp.Implementation{Name: "catalog", Version: "1"}}}, streamhttp.Options{}))
				defer srv.Close()
				spec = Spec{Name: "big", URL: srv.URL + "/mcp", Timeout: 10 * time.Second}
			case "sse":
				srv := httptest.NewServer(sseBig{})
				defer srv.Close()
				spec = Spec{Name: "big", URL: srv.URL + "/mcp", Timeout: 10 * time.Second}
			}
			c := New(spec, mcpxInfo, testLog(t))
			defer c.Close()
			ctx := context.Background()
			if err := c.Start(ctx); err != nil {
				t.Fatal(err)
			}
			call := func() (*mcp.CallToolResult, error) {
				return mcp.CallTool(ctx, c, &mcp.CallToolRequestParams{Name: "big", Arguments: []byte(`{}`)})
			}

			other := b.Hold() // another large message in flight
			if err := other.Add(ctx, 2<<20+512<<10); err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			err := within(t, 5*time.Second, "a call whose answer the budget has no room for", func() error { _, err := call(); return err })
			var rpc *jsonrpc.Error
			if !errors.As(err, &rpc) || rpc.Code != jsonrpc.InternalError || !strings.Contains(rpc.Message, "busy with large messages") || !strings.Contains(rpc.Message, `upstream "big"`) {
				t.Fatalf("call with the budget held: %v; want -32603 naming the upstream and saying it is busy with large messages", err)
			}
			if d := time.Since(start); d < 250*time.Millisecond {
				t.Errorf("refused after %s, before the budget's wait", d)
			}
			other.Release()

			res := within(t, 5*time.Second, "a call once the budget has room", func() *mcp.CallToolResult {
				res, err := call()
				if err != nil {
					t.Errorf("call with room in the budget: %v", err)
				}
				return res
			})
			if res != nil {
				if txt, ok := res.Content[0].Value.(*mcp.TextContent); !ok || len(txt.Text) != bigAnswer {
					t.Errorf("the large answer came back wrong")
				}
			}
			// Given back once the answer is written, which the client may read
			// a moment before.
			for deadline := time.Now().Add(2 * time.Second); b.Used() != 0 && time.Now().Before(deadline); {
				time.Sleep(time.Millisecond)
			}
			if n := b.Used(); n != 0 {
				t.Errorf("%d bytes of the budget still held after the calls", n)
			}
			if kind == "stdio" { // and the upstream is served as before
				if err := echo(ctx, c); err != nil {
					t.Errorf("echo after: %v", err)
				}
			}
		})
	}
}

// sseBig is a hand-written Streamable HTTP server (2025-06-18, no
// session) that answers tools/call "big" on an SSE stream, a progress
// notification first, then the answer as one event of bigAnswer bytes
// of text; the rest as JSON.
type sseBig struct{}

func (sseBig) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	if r.Method != http.MethodPost || json.NewDecoder(r.Body).Decode(&m) != nil {
		w.WriteHeader(http.StatusMethodNotAllowed)
		return
	}
	if m.ID == nil {
		w.WriteHeader(http.StatusAccepted)
		return
	}
	answer := func(result string) string { return `{"jsonrpc":"2.0","id":` + string(m.ID) + `,` + result + `}` }
	switch m.Method {
	case "initialize":
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, answer(`"result":{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"sse","version":"1"}}`))
	case "tools/call":
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{\"level\":\"info\",\"data\":\"x\"}}\n\n")
		io.WriteString(w, "event: message\ndata: "+answer(`"result":{"content":[{"type":"text","text":"`+strings.Repeat("b", bigAnswer)+`"}]}`)+"\n\n")
	default:
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, answer(`"error":{"code":-32601,"message":"no such method"}`))
	}
}
