package edge

import (
	"encoding/json"

	"github.com/mcpx-dev/mcpx/generated/mcp"
	"github.com/mcpx-dev/mcpx/generated/revision"
	"github.com/mcpx-dev/mcpx/runtime/jsonrpc"
	"github.com/mcpx-dev/mcpx/runtime/server"
)

// A 2026-07-28 client is asked through input_required: the gateway parks
// the upstream's call and answers the client's with the question (bridge
// 2 of issue 12). These tell it so, and check the question against what
// this request declared.

var _ server.ResultAsker = (*asker)(nil)

// AsksByResult reports whether the call's client is a 2026-07-28 one.
func (a *asker) AsksByResult() bool { return IsModern(a.c.rev) }

// MayAsk refuses a question the client did not declare on this request
// (mayAsk: the code each page gives).
func (a *asker) MayAsk(method string, params any) error {
	var info mcp.Implementation
	if IsModern(a.c.rev) {
		_ = json.Unmarshal(a.c.meta[mcp.MetaKeyClientInfo], &info)
	} else {
		a.c.sess.mu.Lock()
		info = a.c.sess.client
		a.c.sess.mu.Unlock()
	}
	// The question goes to the client as the gateway holds it (an
	// inputRequests entry), so a form this revision could only take
	// rewritten is refused rather than sent as it is (2026-07-28 has every
	// form field type: none is).
	who := clientName(info, a.c.rev)
	fitted, err := mayAsk(revision.Lookup(a.c.rev), a.c.clientCapabilities(), method, params, who)
	if p, ok := params.(*mcp.ElicitRequestParams); ok && err == nil && fitted != any(p) {
		err = jsonrpc.Errorf(jsonrpc.InvalidParams, nil, "the %s question cannot be sent to the client (%s) as written, and mcpx does not rewrite an input request", method, who)
	}
	return err
}
