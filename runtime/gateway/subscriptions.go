package gateway

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/mcpx-dev/mcpx/generated/mcp"
	"github.com/mcpx-dev/mcpx/runtime/jsonrpc"
	"github.com/mcpx-dev/mcpx/runtime/server"
)

// Resource subscriptions through the gateway. The edge calls Subscribe
// once per client that starts following an exposed URI and Unsubscribe
// once when it stops; the gateway follows each upstream URI at its
// upstream once, however many clients follow it, and lets it go when the
// last one leaves. An upstream's updates come back mapped to the URI
// clients know (mcpx://<namespace>/<uri>, unchanged for the root).

var _ server.Subscriber = (*Gateway)(nil)

// Subscriber is an Upstream that can follow its resources (the upstream
// client: resources/subscribe for a legacy server, subscriptions/listen
// for a 2026-07-28 one, again after a restart). Updated delivers the
// upstream URIs its updates name.
type Subscriber interface {
	Subscribe(ctx context.Context, uri string) error
	Unsubscribe(ctx context.Context, uri string) error
	Updated() <-chan string
}

// unsubscribeTimeout bounds telling an upstream that mcpx stops following.
const unsubscribeTimeout = 5 * time.Second

// updatesQueue bounds the updates waiting for the edge.
const updatesQueue = 1024

// subscriptions counts the clients per followed upstream URI.
type subscriptions struct {
	mu      sync.Mutex
	m       map[followKey]*followed
	readers map[chan string]bool // see Gateway.Updates
}

type followKey struct {
	m   *member
	uri string // the upstream's own
}

// followed is one upstream URI: mu is held across the upstream's
// subscribe and unsubscribe, so that they reach it in order; gone marks
// an entry removed from the map (look it up again).
type followed struct {
	mu   sync.Mutex
	n    int
	gone bool
}

// Updates implements [server.Subscriber]: the exposed URIs the upstreams
// said were updated, until ctx ends; every caller gets each.
func (g *Gateway) Updates(ctx context.Context) <-chan string {
	ch := make(chan string, updatesQueue)
	g.subs.mu.Lock()
	if g.subs.readers == nil {
		g.subs.readers = map[chan string]bool{}
	}
	g.subs.readers[ch] = true
	g.subs.mu.Unlock()
	context.AfterFunc(ctx, func() {
		g.subs.mu.Lock()
		delete(g.subs.readers, ch)
		g.subs.mu.Unlock()
	})
	return ch
}

// publish hands an exposed URI's update to every reader, dropping it
// (logged) for a reader that is far behind: the upstream's reader never
// waits on a client.
func (g *Gateway) publish(m *member, uri string) {
	exposed := m.outURI(uri)
	g.subs.mu.Lock()
	defer g.subs.mu.Unlock()
	for ch := range g.subs.readers {
		select {
		case ch <- exposed:
		default:
			g.log.Warn("gateway: a resource update was dropped: too many waiting for the clients", "upstream", m.name, "uri", uri, "queue", updatesQueue)
		}
	}
}

// offersSubscriptions reports whether m's resources can be followed
// through mcpx, by caps (its last known capabilities): it declared
// resources.subscribe, and its upstream is shared (a per-client
// upstream's updates would belong to one client session; not relayed).
func (m *member) offersSubscriptions(caps *mcp.ServerCapabilities) bool {
	if caps == nil || caps.Resources == nil || caps.Resources.Subscribe == nil || !*caps.Resources.Subscribe || m.pool != nil {
		return false
	}
	_, ok := m.u.(Subscriber)
	return ok
}

// anySubscriptions reports whether some upstream offers subscriptions:
// then resources.subscribe is declared. The caller holds g.mu.
func (g *Gateway) anySubscriptions() bool {
	for _, m := range g.members {
		if m.offersSubscriptions(m.caps) {
			return true
		}
	}
	return false
}

// followUpdates passes m's resource updates on, exposed, until Close.
// Called by Add with g.mu held.
func (g *Gateway) followUpdates(m *member) {
	s, ok := m.u.(Subscriber)
	if !ok {
		return
	}
	updated := s.Updated()
	g.wg.Add(1)
	go func() {
		defer g.wg.Done()
		for {
			select {
			case <-g.ctx.Done():
				return
			case uri := <-updated:
				g.publish(m, uri)
			}
		}
	}()
}

// Subscribe implements [server.Subscriber]. An exposed URI no upstream
// serves is not found; one of an upstream that does not offer
// subscriptions is invalid params (-32602: the method is served, for
// other upstreams' resources, but not for this URI), saying which
// upstream and why.
func (g *Gateway) Subscribe(ctx context.Context, uri string) error {
	if err := g.settle(ctx); err != nil {
		return err
	}
	m, up, ok := g.resolve(uri)
	if !ok {
		return &server.ResourceNotFoundError{URI: uri}
	}
	caps, err := g.up(m)
	if err != nil {
		return err
	}
	if caps.Resources == nil {
		return &server.ResourceNotFoundError{URI: uri}
	}
	if !m.offersSubscriptions(&caps) {
		if m.pool != nil {
			return server.InvalidParams("cannot subscribe to %s: upstream %q runs per client session, and mcpx does not relay its resource subscriptions", uri, m.name)
		}
		return server.InvalidParams("cannot subscribe to %s: upstream %q does not offer resource subscriptions (it did not declare resources.subscribe)", uri, m.name)
	}
	f := g.subs.lock(followKey{m, up})
	defer f.mu.Unlock()
	if f.n == 0 {
		if err := m.u.(Subscriber).Subscribe(ctx, up); err != nil {
			g.subs.forget(followKey{m, up}, f)
			return subscribeFailed(m, uri, err)
		}
	}
	f.n++
	return nil
}

// Unsubscribe implements [server.Subscriber]: the last client to leave
// an upstream URI unsubscribes it upstream.
func (g *Gateway) Unsubscribe(uri string) {
	m, up, ok := g.resolve(uri)
	if !ok {
		return
	}
	key := followKey{m, up}
	g.subs.mu.Lock()
	f := g.subs.m[key]
	g.subs.mu.Unlock()
	if f == nil {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.gone || f.n == 0 {
		return
	}
	if f.n--; f.n > 0 {
		return
	}
	g.subs.forget(key, f)
	ctx, cancel := context.WithTimeout(g.ctx, unsubscribeTimeout)
	defer cancel()
	if err := m.u.(Subscriber).Unsubscribe(ctx, up); err != nil && g.ctx.Err() == nil {
		g.log.Warn("gateway: unsubscribing a resource upstream failed", "upstream", m.name, "uri", up, "err", err)
	}
}

// lock returns key's entry, made if need be, locked.
func (s *subscriptions) lock(key followKey) *followed {
	for {
		s.mu.Lock()
		if s.m == nil {
			s.m = map[followKey]*followed{}
		}
		f := s.m[key]
		if f == nil {
			f = &followed{}
			s.m[key] = f
		}
		s.mu.Unlock()
		f.mu.Lock()
		if !f.gone {
			return f
		}
		f.mu.Unlock()
	}
}

// forget removes f, which no client follows; f.mu is held.
func (s *subscriptions) forget(key followKey, f *followed) {
	f.gone = true
	s.mu.Lock()
	if s.m[key] == f {
		delete(s.m, key)
	}
	s.mu.Unlock()
}

// subscribeFailed is the client's error for an upstream that would not
// follow uri: its not found is the client URI's, anything else as for
// any request to it.
func subscribeFailed(m *member, uri string, err error) error {
	var je *jsonrpc.Error
	if errors.As(err, &je) && (je.Code == jsonrpc.ResourceNotFound || je.Code == jsonrpc.InvalidParams) {
		return &server.ResourceNotFoundError{URI: uri}
	}
	return fail(m, mcp.MethodResourcesSubscribe, err)
}
