//go:build !race

package edge

import (
	"context"
	"testing"

	"github.com/mcpx-dev/mcpx/generated/mcp"
)

// TestHandlerContextOwnPartsAllocations: with the call's own notifier and
// asker (Handle's callAlloc), a handler's context is its one frame (2
// before: the parts their own allocation).
func TestHandlerContextOwnPartsAllocations(t *testing.T) {
	e := &Edge{}
	n := testing.AllocsPerRun(100, func() {
		ca := &callAlloc{call: call{ctx: context.Background(), sess: new(Session), rev: mcp.Rev20260728}}
		ca.call.parts = &ca.parts
		e.handlerContext(&ca.call, mcp.MethodToolsCall)
	})
	if n > 3 { // the callAlloc and Session made here, and the frame
		t.Errorf("%v allocations, want at most 3", n)
	}
}
