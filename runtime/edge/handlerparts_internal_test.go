package edge

import (
	"context"
	"testing"

	"github.com/mcpx-dev/mcpx/generated/mcp"
	"github.com/mcpx-dev/mcpx/runtime/server"
)

// TestHandlerContextPartsOnce: a call's own notifier and asker serve its
// first handler context only; a later one (rounds.go), or one of a copy of
// the call, gets its own, and the first context's are left as they were.
func TestHandlerContextPartsOnce(t *testing.T) {
	e := &Edge{}
	ca := &callAlloc{call: call{ctx: context.Background(), sess: new(Session), rev: mcp.Rev20260728}}
	c := &ca.call
	c.parts = &ca.parts
	first := e.handlerContext(c, mcp.MethodToolsCall)
	cp := *c
	cp.rev = mcp.Rev20251125
	second := e.handlerContext(&cp, mcp.MethodToolsCall)
	third := e.handlerContext(c, mcp.MethodToolsCall)
	n1, n2, n3 := server.NotifierOf(first), server.NotifierOf(second), server.NotifierOf(third)
	if n1 != server.Notifier(&ca.parts.n) {
		t.Errorf("the first context's notifier is not the call's own")
	}
	if n2 == n1 || n3 == n1 || n2 == n3 {
		t.Errorf("contexts share a notifier: %p %p %p", n1, n2, n3)
	}
	if ca.parts.a.c != c || ca.parts.n.rev != mcp.Rev20260728 {
		t.Errorf("the first context's parts were changed by a later one")
	}
}
