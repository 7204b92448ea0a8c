package edge

import (
	"context"
	"encoding/json"

	"github.com/mcpx-dev/mcpx/generated/convert"
	"github.com/mcpx-dev/mcpx/generated/mcp"
	"github.com/mcpx-dev/mcpx/generated/revision"
	"github.com/mcpx-dev/mcpx/runtime/jsonrpc"
)

type contextType = context.Context

// requestNotifier sends one request's notifications in its revision.
type requestNotifier struct {
	e     *Edge
	rev   mcp.Revision
	sink  Sink
	token json.RawMessage
	level mcp.LoggingLevel
}

func (e *Edge) notifier(c *call) requestNotifier {
	n := requestNotifier{e: e, rev: c.rev, sink: c.sink, token: c.meta.progressToken()}
	if IsModern(c.rev) {
		n.level, _ = c.meta.logLevel() // checked before the handler ran
	} else {
		c.sess.mu.Lock()
		n.level = c.sess.logLevel
		c.sess.mu.Unlock()
	}
	return n
}

func (n *requestNotifier) ProgressToken() json.RawMessage { return n.token }
func (n *requestNotifier) LogLevel() mcp.LoggingLevel     { return n.level }

// Notify downgrades params and hands the notification to the transport,
// unless the revision has no such notification from the server.
func (n *requestNotifier) Notify(method string, params any) bool {
	if n.sink == nil {
		return false
	}
	m, ok := revision.Lookup(n.rev).Method(method)
	if !ok || !m.FromServer || !m.Notification {
		return false
	}
	wire, err := convert.Downgrade(n.rev, params)
	if err != nil {
		n.e.log().Error("downgrade notification", "method", method, "revision", n.rev, "err", err)
		return false
	}
	raw, err := json.Marshal(wire)
	if err != nil {
		n.e.log().Error("encode notification", "method", method, "revision", n.rev, "err", err)
		return false
	}
	n.sink(jsonrpc.Notification(method, raw))
	return true
}
