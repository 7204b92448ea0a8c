package upstream

import (
	"sync"
	"time"

	"github.com/mcpx-dev/mcpx/generated/mcp"
	"github.com/mcpx-dev/mcpx/runtime/jsonrpc"
)

// A client's notifications/roots/list_changed reaches the legacy
// upstreams that client's calls have used, and no others. A shared
// upstream serves many clients, and roots/list from it is answered by
// the client whose call is running; "the roots changed" means "ask
// again", which matters only to an upstream that may hold this client's
// roots. An upstream the client never called has none of them: telling
// it would make it ask again on behalf of nobody. mcpx declares
// roots.listChanged to every legacy upstream (relayCapabilities), so each
// may receive it. A 2026-07-28 upstream has no such notification; it
// gets the roots with each request it asks them in.

const (
	// maxRootsClients bounds the client sessions an upstream remembers
	// having served; the one used longest ago is forgotten first.
	maxRootsClients = 1024
	// rootsClientTTL is how long after its last call a client is still
	// one whose roots the upstream may hold.
	rootsClientTTL = time.Hour
)

type rootsClients struct {
	mu  sync.Mutex
	m   map[uint64]time.Time // client token -> last call
	now func() time.Time     // tests

	// For a roots/list outside any call (rootsout.go).
	live  map[uint64]map[*liveCall]bool   // client token -> its calls inside Call now
	known map[uint64]*mcp.ListRootsResult // client token -> the roots it last answered
}

func (r *rootsClients) clock() time.Time {
	if r.now != nil {
		return r.now()
	}
	return time.Now()
}

// used records that client's call reached the upstream.
func (r *rootsClients) used(client uint64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	now := r.clock()
	if r.m == nil {
		r.m = map[uint64]time.Time{}
	}
	if _, ok := r.m[client]; !ok && len(r.m) >= maxRootsClients {
		var oldest uint64
		for k, t := range r.m {
			if now.Sub(t) > rootsClientTTL {
				delete(r.m, k)
				continue
			}
			if oldest == 0 || t.Before(r.m[oldest]) {
				oldest = k
			}
		}
		if len(r.m) >= maxRootsClients {
			delete(r.m, oldest)
		}
	}
	r.m[client] = now
}

// served reports whether client's calls reached the upstream lately.
func (r *rootsClients) served(client uint64) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	t, ok := r.m[client]
	return ok && r.clock().Sub(t) <= rootsClientTTL
}

// RootsChanged passes a client's notifications/roots/list_changed to the
// upstream if that client's calls used it and its revision has the
// notification (not 2026-07-28); it does not wait (the notification goes out in the
// background) and does not start an upstream that is not running.
func (c *Client) RootsChanged(client uint64) {
	if client != 0 {
		sessionRoots.forget(client) // what it answered before is stale (rootsout.go)
	}
	if client == 0 || !c.rootsClients.served(client) {
		return
	}
	c.mu.Lock()
	cn, d := c.c, c.d
	c.mu.Unlock()
	if cn == nil || d == nil || !d.Has(mcp.MethodNotificationsRootsListChanged) {
		return
	}
	c.log.Debug("passing a client's notifications/roots/list_changed to the upstream")
	cn.send(jsonrpc.Notification(mcp.MethodNotificationsRootsListChanged, nil))
}
