package edge

import (
	"testing"

	"github.com/mcpx-dev/mcpx/generated/mcp"
)

// TestHandlersMatchRoutes: the edge answers by hand exactly the requests
// the overlay routes "local" (initialize before a session exists, the
// others in handlers); every other client request of the tables goes
// through the generated dispatch, so a request a new revision adds has a
// handler without code here.
func TestHandlersMatchRoutes(t *testing.T) {
	for _, m := range mcp.ClientMethods {
		local := m.By == mcp.RouteByLocal
		switch {
		case m.Name == mcp.MethodInitialize:
			if !local {
				t.Errorf("initialize is routed %s; the edge answers it itself", m.By)
			}
		case handlers[m.Name] == nil:
			t.Errorf("%s has no handler", m.Name)
		case local && dispatched[m.Name]:
			t.Errorf("%s is routed local but has no hand-written edge handler: it would reach the server and be -32601", m.Name)
		case !local && !dispatched[m.Name]:
			t.Errorf("%s is routed %s but answered by a hand-written edge handler", m.Name, m.By)
		}
	}
	for name := range handlers {
		if mcp.LookupClientMethod(name) == nil {
			t.Errorf("handler for %s, which is no client request of the tables", name)
		}
	}
}
