package edge_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/mcpx-dev/mcpx/generated/mcp"
	"github.com/mcpx-dev/mcpx/runtime/edge"
	"github.com/mcpx-dev/mcpx/runtime/jsonrpc"
	"github.com/mcpx-dev/mcpx/runtime/server"
)

// taskNS is fakeNS answering tasks/get too: a namespace that answers a
// request the Namespace interface does not name implements only the
// request's generated handler interface, mcp.GetTaskHandler.
type taskNS struct{ fakeNS }

func (taskNS) GetTask(_ context.Context, p *mcp.GetTaskRequestParams) (*mcp.GetTaskResult, error) {
	return &mcp.GetTaskResult{TaskID: p.TaskID, Status: mcp.TaskStatusWorking, CreatedAt: "2026-01-01T00:00:00Z", LastUpdatedAt: "2026-01-01T00:00:00Z", TTLMs: mcp.Ptr(1000.0)}, nil
}

// TestTaskMethodsAreTheEdges: mcpx holds every task a client sees, so
// tasks/get is the edge's own (route local), never the namespace's: a
// namespace's GetTask handler is not consulted. Without the extension on
// the request it is -32021 (HTTP 400); with it, an id mcpx did not hand
// out is -32602.
func TestTaskMethodsAreTheEdges(t *testing.T) {
	c := newClient(t)
	c.e = &edge.Edge{Server: &server.Server{NS: taskNS{}, Info: mcp.Implementation{Name: "mcpx-test", Version: "0.0.1"}}}
	r := c.do(mcp.MethodTasksGet, `{`+modernMeta+`,"taskId":"t1"}`)
	if e := rpcError(t, r); e.Code != jsonrpc.MissingRequiredClientCapability || r.Status != http.StatusBadRequest || !strings.Contains(e.Message, "io.modelcontextprotocol/tasks") {
		t.Fatalf("tasks/get without the extension: %d %q status %d", e.Code, e.Message, r.Status)
	}
	withExt := strings.Replace(modernMeta, `"io.modelcontextprotocol/clientCapabilities":{}`, `"io.modelcontextprotocol/clientCapabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}}}`, 1)
	if withExt == modernMeta {
		t.Fatal("modernMeta changed shape; fix the test")
	}
	r = c.do(mcp.MethodTasksGet, `{`+withExt+`,"taskId":"t1"}`)
	if e := rpcError(t, r); e.Code != jsonrpc.InvalidParams || !strings.Contains(e.Message, "unknown task") {
		t.Fatalf("tasks/get of a task the namespace, not mcpx, knows: %d %q", e.Code, e.Message)
	}
}
