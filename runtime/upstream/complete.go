package upstream

import (
	"context"
	"sync"
	"time"

	"github.com/mcpx-dev/mcpx/generated/mcp"
	"github.com/mcpx-dev/mcpx/runtime/edge"
	"github.com/mcpx-dev/mcpx/runtime/jsonrpc"
	"github.com/mcpx-dev/mcpx/runtime/server"
)

// URL-mode elicitation (2025-11-25) ends out of band: once the user is
// done at the URL, the upstream sends notifications/elicitation/complete
// naming its elicitationId, maybe long after the call that asked. mcpx
// remembers, for each URL-mode question a client accepted, which client
// it went to and under which elicitationId, and tells that client alone.
// A 2026-07-28 client has no such notification and is never told.

const (
	// maxCompletions bounds the elicitations an upstream may have
	// waiting for completion; the oldest is forgotten for a new one.
	maxCompletions = 256
	// completionTTL is how long mcpx waits for one to complete: a person
	// at a URL, but not forever.
	completionTTL = time.Hour
)

type completion struct {
	tell     func(method string, params any) bool
	clientID string // the elicitationId the client was given
	expires  time.Time
}

// completions maps the upstream's elicitationIds to the clients asked.
type completions struct {
	mu  sync.Mutex
	m   map[string]completion
	now func() time.Time // tests
}

func (cs *completions) clock() time.Time {
	if cs.now != nil {
		return cs.now()
	}
	return time.Now()
}

// expect remembers that upstreamID was put to a client, which tell
// reaches, as clientID.
func (cs *completions) expect(upstreamID, clientID string, tell func(string, any) bool) {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	now := cs.clock()
	if cs.m == nil {
		cs.m = map[string]completion{}
	}
	for id, c := range cs.m {
		if now.After(c.expires) {
			delete(cs.m, id)
		}
	}
	if _, ok := cs.m[upstreamID]; !ok && len(cs.m) >= maxCompletions {
		oldest := ""
		for id, c := range cs.m {
			if oldest == "" || c.expires.Before(cs.m[oldest].expires) {
				oldest = id
			}
		}
		delete(cs.m, oldest)
	}
	cs.m[upstreamID] = completion{tell: tell, clientID: clientID, expires: now.Add(completionTTL)}
}

// complete tells the client asked upstreamID that it completed, once, and
// reports whether upstreamID was one mcpx knows (and not expired).
func (cs *completions) complete(upstreamID string) bool {
	cs.mu.Lock()
	c, ok := cs.m[upstreamID]
	delete(cs.m, upstreamID)
	cs.mu.Unlock()
	if !ok || cs.clock().After(c.expires) {
		return false
	}
	c.tell(mcp.MethodNotificationsElicitationComplete, &mcp.ElicitationCompleteNotificationParams{ElicitationID: c.clientID})
	return true
}

// expectCompletion is called with a question the client answered: a
// URL-mode elicitation it accepted, from an upstream that named it, is
// remembered for its notifications/elicitation/complete.
func (c *Client) expectCompletion(target context.Context, params, res any) {
	p, ok := params.(*mcp.ElicitRequestParams)
	if !ok {
		return
	}
	u, ok := p.Value.(*mcp.ElicitRequestURLParams)
	if !ok || u.ElicitationID == "" {
		return
	}
	if r, ok := res.(*mcp.ElicitResult); !ok || r.Action != mcp.ActionAccept {
		return
	}
	tell := server.Later(target)
	if tell == nil {
		return // a 2026-07-28 client: 2026-07-28 has no such notification
	}
	// The edge passes an elicitationId the upstream gave through to the
	// client unchanged (it makes one up only where there is none).
	c.elicits.expect(u.ElicitationID, u.ElicitationID, tell)
}

// completed handles the upstream's notifications/elicitation/complete:
// the client asked is told under its own elicitationId; an id mcpx does
// not know (never relayed, declined, already completed, expired) is
// dropped.
func (c *Client) completed(d *edge.Dialect, m *jsonrpc.Message) {
	v, err := d.Notification(m.Method, m.Params)
	p, _ := v.(*mcp.ElicitationCompleteNotificationParams)
	if err != nil || p == nil {
		c.log.Debug("upstream elicitation completion dropped: its params do not decode", "err", err)
		return
	}
	if !c.elicits.complete(p.ElicitationID) {
		c.log.Debug("upstream elicitation completion dropped: no client is waiting for it", "elicitationId", jsonrpc.Clip(p.ElicitationID))
	}
}
