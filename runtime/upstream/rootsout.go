package upstream

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/mcpx-dev/mcpx/generated/mcp"
	"github.com/mcpx-dev/mcpx/runtime/server"
)

// roots/list outside any call (issue 12): an upstream may ask for the
// roots when no call of a client is running on it (server-everything asks
// right after initialized, before the call that started it is sent; an
// HTTP upstream may ask on its standalone GET stream). No call says whose
// roots it wants, but the client sessions using the upstream can: with
// exactly one (always so for a `session: per-client` upstream, which
// belongs to one), mcpx answers with the roots that session last gave
// mcpx (through any upstream), unless it has said since that they
// changed, else asks the session through a call of its that is waiting on
// this upstream (the one that started it, still connecting, say). With none or
// several, the upstream gets an error and mcpx logs why. Elicitation and
// sampling outside any call are not answered for anyone: a person's
// answer, or a model's, needs the call it is for.

// liveCall is a call of a client session inside Client.Call: it may still
// be connecting, so the upstream has not seen it yet.
type liveCall struct{ ctx context.Context }

// calling records that client's call (ctx) is inside Call until the
// returned func is called.
func (r *rootsClients) calling(client uint64, ctx context.Context) func() {
	lc := &liveCall{ctx: ctx}
	r.mu.Lock()
	if r.live == nil {
		r.live = map[uint64]map[*liveCall]bool{}
	}
	if r.live[client] == nil {
		r.live[client] = map[*liveCall]bool{}
	}
	r.live[client][lc] = true
	r.mu.Unlock()
	return func() {
		r.mu.Lock()
		delete(r.live[client], lc)
		if len(r.live[client]) == 0 {
			delete(r.live, client)
		}
		r.mu.Unlock()
	}
}

// sessions are the client sessions using the upstream: those with a call
// inside Call now, and those whose calls it served within rootsClientTTL.
// It stops counting at two.
func (r *rootsClients) sessions() []uint64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	now := r.clock()
	var out []uint64
	add := func(id uint64) {
		for _, o := range out {
			if o == id {
				return
			}
		}
		out = append(out, id)
	}
	for id := range r.live {
		if add(id); len(out) > 1 {
			return out
		}
	}
	for id, t := range r.m {
		if now.Sub(t) <= rootsClientTTL {
			if add(id); len(out) > 1 {
				return out
			}
		}
	}
	return out
}

// liveContext is the context of one of client's calls inside Call that
// has not ended, or nil.
func (r *rootsClients) liveContext(client uint64) context.Context {
	r.mu.Lock()
	defer r.mu.Unlock()
	for lc := range r.live[client] {
		if lc.ctx.Err() == nil {
			return lc.ctx
		}
	}
	return nil
}

// sessionRoots are the roots each client session last answered with,
// through any upstream (a session's roots are its own, whichever server
// asked), for a roots/list asked outside any call: by session token, at
// most maxRootsClients, each kept while its session lives, until it says
// its roots changed, and at most rootsClientTTL.
var sessionRoots = rootsStore{m: map[uint64]knownRoots{}}

type rootsStore struct {
	mu  sync.Mutex
	m   map[uint64]knownRoots
	now func() time.Time // tests
}

type knownRoots struct {
	res *mcp.ListRootsResult
	at  time.Time
}

func (s *rootsStore) clock() time.Time {
	if s.now != nil {
		return s.now()
	}
	return time.Now()
}

// remember keeps the roots the client session of ctx answered with.
func (s *rootsStore) remember(ctx context.Context, res *mcp.ListRootsResult) {
	client, done, ok := server.ClientSession(ctx)
	if !ok || client == 0 || res == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.clock()
	if _, had := s.m[client]; !had {
		if len(s.m) >= maxRootsClients {
			var oldest uint64
			for k, r := range s.m {
				if oldest == 0 || r.at.Before(s.m[oldest].at) {
					oldest = k
				}
			}
			delete(s.m, oldest)
		}
		if done != nil {
			go func() { <-done; s.forget(client) }() // one per session remembered
		}
	}
	s.m[client] = knownRoots{res: res, at: now}
}

// roots are the roots client last answered with, within rootsClientTTL.
func (s *rootsStore) roots(client uint64) (*mcp.ListRootsResult, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.m[client]
	if !ok || s.clock().Sub(r.at) > rootsClientTTL {
		return nil, false
	}
	return r.res, true
}

// forget drops what client answered: its roots changed, or it ended.
func (s *rootsStore) forget(client uint64) {
	s.mu.Lock()
	delete(s.m, client)
	s.mu.Unlock()
}

// rootsOutsideCall is whose roots a roots/list that no call places is
// for, and how to answer it: ctx, a call of that client session's to ask
// through; else known, the roots it gave before; else why neither.
func (c *Client) rootsOutsideCall() (client uint64, ctx context.Context, known *mcp.ListRootsResult, why string) {
	switch s := c.rootsClients.sessions(); len(s) {
	case 0:
		return 0, nil, nil, "no call of a client is in flight on this upstream, and no client session has used it, so there are no roots to give"
	case 1:
		client = s[0]
	default:
		return 0, nil, nil, "no call of a client is in flight on this upstream, and several client sessions use it, whose roots may differ (`session: per-client` gives each its own upstream)"
	}
	// What the session answered before saves asking it again.
	if res, ok := sessionRoots.roots(client); ok {
		return client, nil, res, ""
	}
	if ctx := c.rootsClients.liveContext(client); ctx != nil {
		return client, ctx, nil, ""
	}
	return client, nil, nil, fmt.Sprintf("no call of a client is in flight on this upstream; its one client session (%d) has no call running to ask on, and mcpx does not know its roots (not asked yet, or changed since)", client)
}
