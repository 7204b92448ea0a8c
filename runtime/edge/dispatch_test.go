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

// TestDispatchToHandlerInterface: a client request goes through the
// generated dispatch to the namespace's handler for it, with no edge or
// server code for the method; a namespace without the handler is method
// not found (-32601, HTTP 404 for 2026-07-28), as for a method mcpx does
// not know.
func TestDispatchToHandlerInterface(t *testing.T) {
	params := `{` + modernMeta + `,"taskId":"t1"}`
	c := newClient(t)
	r := c.do(mcp.MethodTasksGet, params)
	if e := rpcError(t, r); e.Code != jsonrpc.MethodNotFound || r.Status != http.StatusNotFound || !strings.Contains(e.Message, "not served by mcpx") {
		t.Fatalf("tasks/get without a handler: %d %q status %d", e.Code, e.Message, r.Status)
	}

	c = newClient(t)
	c.e = &edge.Edge{Server: &server.Server{NS: taskNS{}, Info: mcp.Implementation{Name: "mcpx-test", Version: "0.0.1"}}}
	r = c.do(mcp.MethodTasksGet, params)
	if got := result(t, r); got["taskId"] != "t1" || got["status"] != "working" {
		t.Fatalf("tasks/get with a handler: %v", got)
	}
	// Not closed-world checked: the 2026-07-28 envelope adds _meta
	// (serverInfo) to every result, which the tasks extension's
	// GetTaskResult does not declare; tasks are not served yet.
}
