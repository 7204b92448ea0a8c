package gateway

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/mcpx-dev/mcpx/generated/mcp"
	"github.com/mcpx-dev/mcpx/runtime/jsonrpc"
	"github.com/mcpx-dev/mcpx/runtime/server"
)

// withMethod adds a client request no revision has to the tables the
// gateway routes by, as the generator would for an overlay entry
// {"kind": "route", "at": name, "by": "name", "space": "tool"}: its params
// have tools/call's shape ({name, arguments}), so tools/call's generated
// Key and WithKey are the ones it would get.
func withMethod(t *testing.T, name string) {
	t.Helper()
	call := mcp.LookupClientMethod(mcp.MethodToolsCall)
	m := *call
	m.Name, m.Result, m.Fallback = name, "Result", "refuse"
	old := clientMethod
	clientMethod = func(n string) *mcp.ClientMethod {
		if n == name {
			return &m
		}
		return old(n)
	}
	t.Cleanup(func() { clientMethod = old })
}

// TestForwardNewMethod: a method with a route and no gateway code of its
// own (no post step, no error rule: tools/validate, as a new revision
// would add it) is forwarded to the upstream behind the tool name, by the
// upstream's own name, and its result passes unchanged; an upstream whose
// revision lacks it is refused with -32601 naming it; a name no upstream
// has is an unknown tool, as for tools/call.
func TestForwardNewMethod(t *testing.T) {
	const method = "tools/validate"
	withMethod(t, method)
	if post[method] != nil || failures[method] != nil {
		t.Fatalf("%s has gateway code of its own; the test is about the generic route", method)
	}
	newer := newFake("newer", "check")
	answer := &mcp.Result{Meta: mcp.Meta{"valid": []byte("true")}}
	newer.other = func(m string, params any) (any, error) {
		if m != method {
			return nil, errors.New("unexpected method " + m)
		}
		return answer, nil
	}
	older := newFake("older", "check")
	g, _ := gateway(t, newer, older)
	ctx := context.Background()

	res, err := g.Forward(ctx, method, &mcp.CallToolRequestParams{Name: "newer__check", Arguments: []byte(`{"a":1}`)})
	if err != nil || res != answer {
		t.Fatalf("Forward to newer: %v, %v; want the upstream's result unchanged", res, err)
	}
	got, ok := newer.last().(*mcp.CallToolRequestParams)
	if !ok || got.Name != "check" || string(got.Arguments) != `{"a":1}` {
		t.Fatalf("newer got %#v, want its own name check and the arguments", newer.last())
	}

	_, err = g.Forward(ctx, method, &mcp.CallToolRequestParams{Name: "older__check"})
	var je *jsonrpc.Error
	if !errors.As(err, &je) || je.Code != jsonrpc.MethodNotFound || !strings.Contains(je.Message, `upstream "older"`) || !strings.Contains(je.Message, "2025-06-18") {
		t.Fatalf("Forward to older: %v, want -32601 naming the upstream and its revision", err)
	}

	if _, err := g.Forward(ctx, method, &mcp.CallToolRequestParams{Name: "nobody__check"}); !errors.Is(err, server.ErrUnknownTool) {
		t.Fatalf("Forward of an unknown tool: %v, want ErrUnknownTool", err)
	}
}

// TestForwardThroughServer: the server hands a request it and the
// namespace have no handler for to the gateway's Forward (the path a new
// method takes from the edge), and one the route does not forward (a list,
// a local method) is no handler, which the edge answers -32601.
func TestForwardThroughServer(t *testing.T) {
	const method = "tools/validate"
	withMethod(t, method)
	up := newFake("up", "check")
	up.other = func(string, any) (any, error) { return &mcp.Result{}, nil }
	g, _ := gateway(t, up)
	s := &server.Server{NS: g}
	ctx := context.Background()
	if _, err := s.Handle(ctx, method, &mcp.CallToolRequestParams{Name: "up__check"}); err != nil {
		t.Fatalf("Handle(%s): %v", method, err)
	}
	if got, _ := up.last().(*mcp.CallToolRequestParams); got == nil || got.Name != "check" {
		t.Fatalf("upstream got %#v", up.last())
	}
	for _, m := range []string{mcp.MethodTasksList, mcp.MethodPing, "no/such"} {
		if _, err := s.Handle(ctx, m, nil); !errors.Is(err, mcp.ErrNoHandler) {
			t.Errorf("Handle(%s): %v, want ErrNoHandler", m, err)
		}
	}
	// The task methods are mcpx's own (route local: the edge holds every
	// task a client sees), never forwarded.
	if _, err := s.Handle(ctx, mcp.MethodTasksGet, &mcp.GetTaskRequestParams{TaskID: "t"}); !errors.Is(err, mcp.ErrNoHandler) {
		t.Errorf("Handle(tasks/get): %v, want ErrNoHandler", err)
	}
}

// TestRoutesCovered: every forwarded route of the tables is one the
// gateway resolves (by tool or prompt name, URI, or reference), except by
// task id, which it declines clearly; a route kind it does not know would
// reach the default and be refused, so a new kind is noticed here.
func TestRoutesCovered(t *testing.T) {
	for _, m := range mcp.ClientMethods {
		if m.Key == nil {
			if m.By != mcp.RouteByMerge && m.By != mcp.RouteByLocal {
				t.Errorf("%s: route %s has no key", m.Name, m.By)
			}
			continue
		}
		switch {
		case m.By == mcp.RouteByName && (m.Space == "tool" || m.Space == "prompt"),
			m.By == mcp.RouteByURI, m.By == mcp.RouteByRef && m.Space == "prompt", m.By == mcp.RouteByTask:
		default:
			t.Errorf("%s: route by %s in %q: the gateway does not resolve it", m.Name, m.By, m.Space)
		}
		if m.Fallback != "refuse" && m.Fallback != "empty" {
			t.Errorf("%s: fallback %q", m.Name, m.Fallback)
		}
	}
}
