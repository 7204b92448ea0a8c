package upstream

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/mcpx-dev/mcpx/generated/mcp"
	"github.com/mcpx-dev/mcpx/runtime/edge"
	"github.com/mcpx-dev/mcpx/runtime/jsonrpc"
	"github.com/mcpx-dev/mcpx/runtime/server"
)

// maxRelays is how many of an upstream's questions (sampling, elicitation,
// roots) may be waiting for clients' answers at once; one more is
// answered -32603 at once. Each waits in a goroutine of its own, never
// the one reading the upstream.
const maxRelays = 64

// relay puts the upstream's request m to the client whose call caused it,
// and answers the upstream under m's own id, in its revision, through the
// outbox. The client's call is the one whose HTTP response stream carried
// m (related), else the only call in flight on this upstream: with
// several, a question that came on stdio or on the standalone GET stream
// cannot be placed, and is refused. A roots/list no call places is
// answered for the one client session using the upstream, if there is
// one (rootsout.go).
func (c *Client) relay(cn conn, d *edge.Dialect, m *jsonrpc.Message, related json.RawMessage) {
	refuse := func(why string) {
		c.log.Warn("upstream request not relayed to a client", "method", m.Method, "id", truncate(m.ID, 64), "why", why)
		cn.send(jsonrpc.ErrorResponse(m.ID, jsonrpc.Errorf(jsonrpc.InternalError, nil, "mcpx cannot relay %s: %s", m.Method, why)))
	}
	// A question that is not one (its params do not decode, or break its
	// schema) is refused as such, wherever it belongs.
	params, err := d.ServerRequest(m.Method, m.Params)
	if err != nil {
		cn.send(d.Reply(m.ID, m.Method, nil, err))
		return
	}
	key, target, why := c.askTarget(related)
	// A question of an upstream task names it (related-task): it belongs
	// to the call following that task, wherever it came (tasks.go).
	k, t, tagged := c.taskTarget(m.Params)
	if tagged {
		key, target = k, t
		untagged(params)
	}
	var known *mcp.ListRootsResult
	if target == nil && related == nil && !tagged && m.Method == mcp.MethodRootsList {
		// No call places it; the client session using the upstream may
		// (rootsout.go).
		var client uint64
		client, target, known, why = c.rootsOutsideCall()
		if target != nil || known != nil {
			c.log.Info("an upstream's roots/list outside any call is answered for the one client session using it", "client", client, "asked", target != nil)
		}
	}
	if target == nil && known == nil {
		refuse(why)
		return
	}
	if known != nil {
		cn.send(d.Reply(m.ID, m.Method, known, nil))
		return
	}
	select {
	case c.relays <- struct{}{}:
	default:
		refuse("too many of its questions are waiting for answers")
		return
	}
	go func() {
		defer func() { <-c.relays }()
		// The question ends with the call that caused it, or with the
		// connection it came on.
		ctx, cancel := context.WithCancel(target)
		defer cancel()
		go func() {
			select {
			case <-cn.dead():
				cancel()
			case <-ctx.Done():
			}
		}()
		// A person may be answering: the call's timeout does not run
		// meanwhile (its longest extension still does), and starts
		// again with the answer.
		if k, ok := c.inflight.Load(key); ok {
			k.(*callClock).pause()
			defer k.(*callClock).resume()
		}
		res, err := server.Ask(ctx, m.Method, params)
		if err != nil {
			var je *jsonrpc.Error
			switch {
			case errors.As(err, &je):
				// The client's own error, or mcpx's refusal of a question
				// the client cannot take, which names the client.
				c.log.Info("upstream request answered with an error", "method", m.Method, "code", je.Code, "err", je.Message)
			default:
				c.log.Warn("upstream request not relayed to a client", "method", m.Method, "err", err)
			}
		}
		if err == nil {
			c.expectCompletion(target, params, res) // complete.go
			if r, ok := res.(*mcp.ListRootsResult); ok {
				// For a roots/list later asked outside any call (rootsout.go).
				sessionRoots.remember(target, r)
			}
		}
		cn.send(d.Reply(m.ID, m.Method, res, err))
	}()
}

// askTarget is the client call a question from the upstream belongs to
// (its request id and context), or nil and why not.
func (c *Client) askTarget(related json.RawMessage) (string, context.Context, string) {
	if related != nil {
		if k, ok := c.inflight.Load(string(related)); ok {
			return string(related), k.(*callClock).caller, ""
		}
		return "", nil, "it came on the response stream of a call that is no longer running"
	}
	var only context.Context
	var key string
	n := 0
	// Only calls made for a client count: mcpx's own (its list loads
	// after a list change, say) have no one to ask, and must not make a
	// client's question ambiguous.
	c.inflight.Range(func(k, v any) bool {
		if ctx := v.(*callClock).caller; server.CanAsk(ctx) {
			key, only, n = k.(string), ctx, n+1
		}
		return n < 2
	})
	switch n {
	case 0:
		return "", nil, "no call of a client is in flight on this upstream, so no client caused it"
	case 1:
		return key, only, ""
	}
	return "", nil, "several calls are in flight on this upstream and the request does not say which one it belongs to (a per-client session would tell them apart)"
}

// pause stops the call's timeout while a question of its waits for the
// client's answer; the longest extension keeps running.
func (k *callClock) pause() {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.paused++
	if k.paused == 1 && k.timer.Stop() {
		k.due = k.end
		k.timer.Reset(time.Until(k.end))
	}
}

// resume starts the timeout again, from now, once no question of the call
// waits any more: the answer is the call's latest sign of life.
func (k *callClock) resume() {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.paused--
	if k.paused == 0 && k.ctx.Err() == nil && k.timer.Stop() {
		k.progressed = true
		k.rearm()
	}
}
