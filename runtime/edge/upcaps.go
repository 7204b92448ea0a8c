package edge

import (
	"encoding/json"

	"github.com/mcpx-dev/mcpx/generated/mcp"
	"github.com/mcpx-dev/mcpx/runtime/server"
)

// What the client can do reaches the upstream (issue 12): a 2026-07-28
// upstream is told, on every request mcpx forwards for a client, the
// client's capabilities, but only those mcpx can carry out for that client:
// declaring a capability mcpx cannot relay would invite a question the
// client never receives.

// tasksExtension is the tasks extension's identifier in
// ClientCapabilities.extensions.
const tasksExtension = server.TasksExtension

// relayable is what mcpx declares to a 2026-07-28 upstream for a client of
// revision rev that declared caps (never nil; the empty value declares
// nothing):
//
//   - a 2026-07-28 client: its elicitation (form and url, as declared),
//     sampling (context and tools, as declared) and roots, which bridge 4
//     relays as they are (the upstream's inputRequests pass to the client,
//     its inputResponses back). roots is "{}": the 2026-07-28 roots
//     capability has no members.
//   - a legacy client: the same, from what it declared at initialize:
//     bridge 3 (rounds.go) puts the upstream's inputRequests to it as
//     requests, with bridge 1's checks.
//   - experimental capabilities and extensions: none; mcpx relays none of
//     them. The tasks extension (io.modelcontextprotocol/tasks) is declared
//     only for a client that declared it AND once mcpx relays task handles
//     to that client's revision; neither bridge relays them yet, so it is
//     never declared (tasksRelayed).
func relayable(rev mcp.Revision, caps *mcp.ClientCapabilities) *mcp.ClientCapabilities {
	out := &mcp.ClientCapabilities{}
	if caps == nil {
		return out
	}
	if el := caps.Elicitation; el != nil {
		out.Elicitation = &mcp.ClientCapabilitiesElicitation{Form: el.Form, URL: el.URL}
	}
	if s := caps.Sampling; s != nil {
		out.Sampling = &mcp.ClientCapabilitiesSampling{Context: s.Context, Tools: s.Tools}
	}
	if caps.Roots != nil {
		out.Roots = json.RawMessage(`{}`)
	}
	if settings, ok := declaredExtension(caps, tasksExtension); ok && tasksRelayed(rev) {
		out.Extensions = mustJSON(map[string]json.RawMessage{tasksExtension: settings})
	}
	return out
}

// tasksRelayed reports whether mcpx relays a task handle an upstream
// answers to a client of revision rev: not yet for any (a task handle is
// -32603, see UnrelayedResultError).
func tasksRelayed(mcp.Revision) bool { return false }

// declaredExtension returns the settings caps declares for extension id.
func declaredExtension(caps *mcp.ClientCapabilities, id string) (json.RawMessage, bool) {
	return server.Extension(caps.Extensions, id)
}
