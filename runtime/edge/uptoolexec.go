package edge

import (
	"encoding/json"

	"github.com/mcpx-dev/mcpx/generated/mcp"
	"github.com/mcpx-dev/mcpx/generated/revision"
	"github.com/mcpx-dev/mcpx/internal/mcpjson"
)

// An upstream's tool task support where its revision has no
// Tool.execution (issue 13). No 2026-07-28 schema has it: the core schema
// drops it (the overlay's "removed" entry, SEP-2663), and the tasks
// extension's schema does not add it back (the server alone decides). A
// 2026-07-28 upstream may still send execution.taskSupport (a server
// written for 2025-11-25 tools), and it is what mcpx needs to refuse a
// tool that runs only as a task to a client without the extension before
// anything runs (-32021), and to list a 2025-11-25 client the tool's
// execution. The generator cannot express a member read from a revision
// but never written to it (a downgrade writes every member its revision
// has, so 2026-07-28 clients would get a member no schema of theirs
// defines), so it is read here, from the raw result, into the hub Tool's
// Execution; the 2026-07-28 downgrade still drops it.

// ReadToolExecution sets the Execution of each tool of res, the decoded
// tools/list result (raw as the upstream sent it), when the upstream's
// revision has no Tool.execution; values other than the three
// taskSupport values are ignored, as are results that do not line up.
func (d *Dialect) ReadToolExecution(raw json.RawMessage, res any) {
	r, ok := res.(*mcp.ListToolsResult)
	if !ok || r == nil || hasField(revision.Lookup(d.rev), "Tool", "execution") {
		return
	}
	var wire struct {
		Tools []struct {
			Name      string `json:"name"`
			Execution *struct {
				TaskSupport mcp.TaskSupport `json:"taskSupport"`
			} `json:"execution"`
		} `json:"tools"`
	}
	if mcpjson.Unmarshal(raw, &wire) != nil || len(wire.Tools) != len(r.Tools) {
		return
	}
	for i, w := range wire.Tools {
		if w.Execution == nil || r.Tools[i].Name != w.Name || r.Tools[i].Execution != nil {
			continue
		}
		switch s := w.Execution.TaskSupport; s {
		case mcp.TaskSupportForbidden, mcp.TaskSupportOptional, mcp.TaskSupportRequired:
			r.Tools[i].Execution = &mcp.ToolExecution{TaskSupport: s}
		}
	}
}
