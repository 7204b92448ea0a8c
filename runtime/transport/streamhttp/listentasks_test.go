package streamhttp_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/mcpx-dev/mcpx/generated/mcp"
	"github.com/mcpx-dev/mcpx/runtime/edge"
	"github.com/mcpx-dev/mcpx/runtime/server"
	"github.com/mcpx-dev/mcpx/runtime/tasks"
	"github.com/mcpx-dev/mcpx/runtime/transport/streamhttp"
	"github.com/mcpx-dev/mcpx/testkit/leakcheck"
)

// jobNS has one tool that supports tasks and runs until released.
type jobNS struct {
	fakeNS
	release chan struct{}
}

func (n *jobNS) ListTools(context.Context) ([]mcp.Tool, error) {
	return []mcp.Tool{{Name: "job", InputSchema: object, Execution: &mcp.ToolExecution{TaskSupport: mcp.TaskSupportOptional}}}, nil
}

func (n *jobNS) CallTool(ctx context.Context, p *mcp.CallToolRequestParams) (*mcp.CallToolResult, error) {
	select {
	case <-n.release:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	return text("job done"), nil
}

const extMeta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}}}}`

// TestListenHearsItsTask: over HTTP, a listen stream naming a task of
// mcpx's hears its state (working), then its end (completed, the result
// inline), tagged with the listen id; the stream goes on (a task's end is
// not the listen's), and Close ends it with its cancellation and result.
func TestListenHearsItsTask(t *testing.T) {
	leakcheck.Check(t)
	n := &jobNS{release: make(chan struct{})}
	e := &edge.Edge{Server: &server.Server{NS: n, Info: mcp.Implementation{Name: "mcpx-test", Version: "0.0.1"}},
		Tasks: edge.TaskOptions{Runner: &tasks.Runner{}}}
	h := streamhttp.New(e, streamhttp.Options{Logger: discard()})
	srv := httptest.NewServer(h)
	t.Cleanup(func() { h.Close(); srv.Close() })

	resp := post(t, srv, modern("tools/call", "job"), `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{`+extMeta+`,"name":"job","arguments":{}}}`)
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	var handle struct {
		Result struct {
			TaskID     string `json:"taskId"`
			ResultType string `json:"resultType"`
		} `json:"result"`
	}
	if json.Unmarshal(b, &handle) != nil || handle.Result.ResultType != "task" {
		t.Fatalf("want a task handle: %s", b)
	}
	id := handle.Result.TaskID

	lr := do(t, t.Context(), http.MethodPost, srv.URL, modern("subscriptions/listen", ""),
		`{"jsonrpc":"2.0","id":"L","method":"subscriptions/listen","params":{`+extMeta+`,"notifications":{"taskIds":["`+id+`"]}}}`)
	if lr.StatusCode != http.StatusOK || lr.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("listen: %d %v", lr.StatusCode, lr.Header)
	}
	ch := readSSE(lr.Body)
	if ack, ok := next(t, ch, nil); !ok || ack.Method != mcp.MethodNotificationsSubscriptionsAcknowledged || !strings.Contains(string(ack.Params), `"tasksStatus":["`+id+`"]`) {
		t.Fatalf("acknowledgement: %+v %s", ack, ack.Params)
	}
	if s, ok := next(t, ch, nil); !ok || s.Method != mcp.MethodNotificationsTasksStatus || !strings.Contains(string(s.Params), `"status":"working"`) || !strings.Contains(string(s.Params), `"io.modelcontextprotocol/subscriptionId":"L"`) {
		t.Fatalf("the task's state now: %+v %s", s, s.Params)
	}
	close(n.release)
	if s, ok := next(t, ch, nil); !ok || s.Method != mcp.MethodNotificationsTasksStatus || !strings.Contains(string(s.Params), `"status":"completed"`) || !strings.Contains(string(s.Params), "job done") {
		t.Fatalf("the task's end: %+v %s", s, s.Params)
	}
	h.Close()
	wantEndedByServer(t, ch, "L", "closing")
}
