package server_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/mcpx-dev/mcpx/generated/mcp"
	"github.com/mcpx-dev/mcpx/runtime/catalog"
	"github.com/mcpx-dev/mcpx/runtime/server"
)

// caller records what it is asked and answers with res.
type caller struct {
	method string
	params any
	res    any
}

func (c *caller) Call(_ context.Context, method string, params any) (any, error) {
	c.method, c.params = method, params
	return c.res, nil
}

// tools answers tools/call only, through its generated interface.
type tools struct{ got *mcp.CallToolRequestParams }

func (t *tools) CallTool(_ context.Context, p *mcp.CallToolRequestParams) (*mcp.CallToolResult, error) {
	t.got = p
	if p.Name == "nil" {
		return nil, nil
	}
	return &mcp.CallToolResult{}, nil
}

// TestGeneratedDispatch pins the generated mcp.Dispatch: a handler without
// the method's interface, or a method that is no client request, is
// ErrNoHandler; absent params are the zero value; params of another type
// are an error (not a panic); a nil result is an untyped nil.
func TestGeneratedDispatch(t *testing.T) {
	ctx := context.Background()
	h := &tools{}
	if _, err := mcp.Dispatch(ctx, struct{}{}, mcp.MethodToolsCall, nil); !errors.Is(err, mcp.ErrNoHandler) {
		t.Errorf("no interface: %v, want ErrNoHandler", err)
	}
	if _, err := mcp.Dispatch(ctx, h, "no/such", nil); !errors.Is(err, mcp.ErrNoHandler) {
		t.Errorf("unknown method: %v, want ErrNoHandler", err)
	}
	if _, err := mcp.Dispatch(ctx, h, mcp.MethodNotificationsProgress, nil); !errors.Is(err, mcp.ErrNoHandler) {
		t.Errorf("a notification: %v, want ErrNoHandler", err)
	}
	if r, err := mcp.Dispatch(ctx, h, mcp.MethodToolsCall, nil); err != nil || h.got == nil || r == nil {
		t.Errorf("nil params: %v, %v; handler got %v", r, err, h.got)
	}
	if _, err := mcp.Dispatch(ctx, h, mcp.MethodToolsCall, &mcp.GetPromptRequestParams{}); err == nil || errors.Is(err, mcp.ErrNoHandler) {
		t.Errorf("params of another type: %v, want an error", err)
	}
	if r, err := mcp.Dispatch(ctx, h, mcp.MethodToolsCall, &mcp.CallToolRequestParams{Name: "nil"}); r != nil || err != nil {
		t.Errorf("a nil result: %#v, %v; want an untyped nil", r, err)
	}
}

// TestGeneratedCalls pins the client side: mcp.<Method> sends the method
// with params (a new zero value for nil, so a request always has params to
// carry _meta) and checks the result's type.
func TestGeneratedCalls(t *testing.T) {
	ctx := context.Background()
	c := &caller{res: &mcp.ListToolsResult{}}
	if _, err := mcp.ListTools(ctx, c, nil); err != nil || c.method != mcp.MethodToolsList {
		t.Fatalf("ListTools: %v, sent %s", err, c.method)
	}
	if p, ok := c.params.(*mcp.PaginatedRequestParams); !ok || p == nil {
		t.Fatalf("ListTools(nil) sent %#v", c.params)
	}
	if _, err := mcp.CallTool(ctx, c, &mcp.CallToolRequestParams{Name: "x"}); err == nil {
		t.Fatal("CallTool answered a ListToolsResult: no error")
	}
}

// taskCatalog is a catalog that answers tasks/get too.
type taskCatalog struct{ *catalog.Catalog }

func (taskCatalog) GetTask(_ context.Context, p *mcp.GetTaskRequestParams) (*mcp.GetTaskResult, error) {
	return &mcp.GetTaskResult{TaskID: p.TaskID}, nil
}

// forwarder is a namespace that forwards what it has no handler for.
type forwarder struct {
	*catalog.Catalog
	method string
}

func (f *forwarder) Forward(_ context.Context, method string, _ any) (any, error) {
	f.method = method
	return &mcp.Result{}, nil
}

// TestHandleOrder: Server.Handle answers with the server's own method
// first (tools/list is paginated there), then the namespace's handler for
// the method, then a Forwarder's Forward; else ErrNoHandler.
func TestHandleOrder(t *testing.T) {
	ctx := context.Background()
	cat := catalog.New()
	cat.AddTool(mcp.Tool{Name: "x"}, func(context.Context, json.RawMessage) (*mcp.CallToolResult, error) { return &mcp.CallToolResult{}, nil })
	s := &server.Server{NS: cat}
	if r, err := s.Handle(ctx, mcp.MethodToolsList, nil); err != nil {
		t.Fatalf("tools/list: %v", err)
	} else if l, ok := r.(*mcp.ListToolsResult); !ok || l.Tools == nil {
		t.Fatalf("tools/list: %#v, want the server's page", r)
	}
	if _, err := s.Handle(ctx, mcp.MethodTasksGet, &mcp.GetTaskRequestParams{TaskID: "t"}); !errors.Is(err, mcp.ErrNoHandler) {
		t.Fatalf("tasks/get on a plain catalog: %v, want ErrNoHandler", err)
	}
	s.NS = taskCatalog{cat}
	if r, err := s.Handle(ctx, mcp.MethodTasksGet, &mcp.GetTaskRequestParams{TaskID: "t"}); err != nil || r.(*mcp.GetTaskResult).TaskID != "t" {
		t.Fatalf("tasks/get on a catalog with GetTask: %v, %v", r, err)
	}
	f := &forwarder{Catalog: cat}
	s.NS = f
	if _, err := s.Handle(ctx, mcp.MethodTasksGet, nil); err != nil || f.method != mcp.MethodTasksGet {
		t.Fatalf("tasks/get on a forwarder: %v, forwarded %q", err, f.method)
	}
	f.method = ""
	if _, err := s.Handle(ctx, mcp.MethodToolsCall, &mcp.CallToolRequestParams{Name: "x"}); f.method != "" {
		t.Fatalf("tools/call went to Forward (%v), not to the namespace's CallTool", err)
	}
}
