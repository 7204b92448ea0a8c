package gateway

import (
	"github.com/mcpx-dev/mcpx/generated/mcp"
)

// The task field of a tools/call to an upstream (issue 13, bridging):
// mcpx holds every task its client sees, and follows the upstream's
// itself (runtime/upstream, tasks.go), so the client's own task field is
// never forwarded as it is. A 2025-11-25 upstream that declared
// tasks.requests.tools.call gets one where its tool needs it:
//
//   - taskSupport "required": always (the upstream refuses the call
//     otherwise, -32601);
//   - "optional": only when the client's request asked for a task (it
//     expects a long call, which a task carries past the call timeout);
//     otherwise a plain call, which costs one round trip where a task
//     costs three (the call, tasks/result, and the handle's own);
//   - "forbidden" or none: never.
//
// The client's ttl, if it gave one, is passed on. Other revisions drop
// the field when the params are converted (a 2026-07-28 upstream decides
// by itself, the extension being declared on every tools/call).

// taskField sets the task field of up, the upstream's copy of the
// client's tools/call params (client), for m's tool named tool.
func (g *Gateway) taskField(m *member, tool string, client, up any) {
	p, ok := up.(*mcp.CallToolRequestParams)
	if !ok || p == client {
		return
	}
	asked, _ := client.(*mcp.CallToolRequestParams)
	p.Task = nil
	g.mu.RLock()
	caps := m.caps
	var support mcp.TaskSupport
	for i := range m.tools {
		if t := &m.tools[i]; t.Name == tool {
			if t.Execution != nil {
				support = t.Execution.TaskSupport
			}
			break
		}
	}
	g.mu.RUnlock()
	if caps == nil || caps.Tasks == nil || caps.Tasks.Requests == nil || caps.Tasks.Requests.Tools == nil || caps.Tasks.Requests.Tools.Call == nil {
		return
	}
	switch {
	case support == mcp.TaskSupportRequired:
	case support == mcp.TaskSupportOptional && asked != nil && asked.Task != nil:
	default:
		return
	}
	p.Task = &mcp.TaskMetadata{}
	if asked != nil && asked.Task != nil {
		p.Task.TTL = asked.Task.TTL
	}
}
