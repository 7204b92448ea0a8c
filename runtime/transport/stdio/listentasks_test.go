package stdio_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/mcpx-dev/mcpx/generated/mcp"
	"github.com/mcpx-dev/mcpx/runtime/transport/stdio"
	"github.com/mcpx-dev/mcpx/testkit/leakcheck"
)

// jobNS has one tool that supports tasks and runs until released.
type jobNS struct {
	ns
	release chan struct{}
}

func (n *jobNS) ListTools(context.Context) ([]mcp.Tool, error) {
	return []mcp.Tool{{Name: "job", InputSchema: json.RawMessage(`{"type":"object"}`), Execution: &mcp.ToolExecution{TaskSupport: mcp.TaskSupportOptional}}}, nil
}

func (n *jobNS) CallTool(ctx context.Context, p *mcp.CallToolRequestParams) (*mcp.CallToolResult, error) {
	select {
	case <-n.release:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	return &mcp.CallToolResult{Content: []mcp.ContentBlock{{Value: &mcp.TextContent{Text: "job done"}}}}, nil
}

const extMeta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}}}}`

// TestStdioListenHearsItsTask: on stdio, a listen naming a task of mcpx's
// hears its state (working), then its end (completed, the result
// inline), tagged with the listen id; the client's notifications/cancelled
// for the listen then ends it silently.
func TestStdioListenHearsItsTask(t *testing.T) {
	leakcheck.Check(t)
	n := &jobNS{release: make(chan struct{})}
	s := startWith(t, context.Background(), n, stdio.Options{})
	s.send(`{"jsonrpc":"2.0","id":"call","method":"tools/call","params":{` + extMeta + `,"name":"job","arguments":{}}}`)
	got := s.recv()
	var handle struct {
		Result struct {
			TaskID     string `json:"taskId"`
			ResultType string `json:"resultType"`
		} `json:"result"`
	}
	if json.Unmarshal([]byte(got), &handle) != nil || handle.Result.ResultType != "task" {
		t.Fatalf("want a task handle: %s", got)
	}
	id := handle.Result.TaskID
	s.send(`{"jsonrpc":"2.0","id":"L","method":"subscriptions/listen","params":{` + extMeta + `,"notifications":{"taskIds":["` + id + `"]}}}`)
	if got := s.recv(); !strings.Contains(got, "notifications/subscriptions/acknowledged") || !strings.Contains(got, `"tasksStatus":["`+id+`"]`) {
		t.Fatalf("acknowledgement: %s", got)
	}
	if got := s.recv(); !strings.Contains(got, `"method":"notifications/tasks/status"`) || !strings.Contains(got, `"status":"working"`) || !strings.Contains(got, `"io.modelcontextprotocol/subscriptionId":"L"`) {
		t.Fatalf("the task's state now: %s", got)
	}
	close(n.release)
	if got := s.recv(); !strings.Contains(got, `"status":"completed"`) || !strings.Contains(got, "job done") || !strings.Contains(got, `"io.modelcontextprotocol/subscriptionId":"L"`) {
		t.Fatalf("the task's end: %s", got)
	}
	s.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"L"}}`)
	s.send(`{"jsonrpc":"2.0","id":"p","method":"ping"}`)
	if got := s.recv(); !strings.Contains(got, `"id":"p"`) {
		t.Fatalf("after the listen's cancellation, want the ping's answer and nothing for L: %s", got)
	}
}
