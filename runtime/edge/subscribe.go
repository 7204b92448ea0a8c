package edge

import (
	"context"
	"slices"

	"github.com/mcpx-dev/mcpx/generated/mcp"
	"github.com/mcpx-dev/mcpx/runtime/jsonrpc"
	"github.com/mcpx-dev/mcpx/runtime/server"
)

// Resource subscriptions. A client follows a resource the way its era
// has: a legacy session with resources/subscribe (its updates, untagged,
// on the session's stream: stdio, the Streamable HTTP GET stream), a
// 2026-07-28 client with a subscriptions/listen whose filter names it in
// resourceSubscriptions (tagged with the listen id, like its list
// changes). Each client that starts following a URI is one
// [server.Subscriber] Subscribe, and leaving (unsubscribe, the listen's
// end, the session's end) is one Unsubscribe: the namespace counts them.

// subscribable reports whether resources.subscribe is declared.
func (e *Edge) subscribable() bool {
	caps := e.Server.Capabilities()
	return caps.Resources != nil && caps.Resources.Subscribe != nil && *caps.Resources.Subscribe
}

// subscriber is the namespace as a Subscriber, or nil: a namespace that
// declares resources.subscribe without being one (the conformance
// fixture, whose resources never change) has its subscriptions accepted
// and kept, with never an update to send.
func (e *Edge) subscriber() server.Subscriber {
	s, _ := e.Server.NS.(server.Subscriber)
	return s
}

func notSubscribable(method string) error {
	return jsonrpc.Errorf(jsonrpc.MethodNotFound, nil, "method %s is not served: mcpx does not declare resources.subscribe (no upstream offers resource subscriptions)", jsonrpc.Quote(method))
}

// subscribe answers a legacy resources/subscribe. A session follows a URI
// once, however often it subscribes.
func (e *Edge) subscribe(c *call) (any, error) {
	p := c.params.(*mcp.SubscribeRequestParams)
	if !e.subscribable() {
		return nil, notSubscribable(mcp.MethodResourcesSubscribe)
	}
	if c.sess.Revision() == "" {
		// A request outside any session (the headerless HTTP default)
		// has no stream an update could come on, nor an end.
		return nil, jsonrpc.Errorf(jsonrpc.InvalidRequest, nil, "resources/subscribe needs a session: initialize first, then subscribe in it (its updates come on the session's stream)")
	}
	return &mcp.Result{}, e.followURI(e.subscribeContext(c), c.sess, p.URI, true)
}

// followURI makes s follow uri, once however often it is asked; with
// elsewhere, not when another replica follows it for s already.
func (e *Edge) followURI(ctx context.Context, s *Session, uri string, elsewhere bool) error {
	s.subMu.Lock() // one subscribe or unsubscribe of the session at a time
	defer s.subMu.Unlock()
	s.mu.Lock()
	had, ended, other := s.subs[uri], s.ended, s.elsewhere
	s.mu.Unlock()
	if had || ended || elsewhere && other != nil && other(uri) {
		return nil
	}
	ns := e.subscriber()
	if ns != nil {
		if err := ns.Subscribe(ctx, uri); err != nil {
			return err
		}
	}
	s.mu.Lock()
	if s.ended { // the session ended meanwhile: nothing will release it
		s.mu.Unlock()
		if ns != nil {
			ns.Unsubscribe(uri)
		}
		return nil
	}
	if s.subs == nil {
		s.subs = map[string]bool{}
		if ns != nil {
			go e.releaseAtEnd(s, ns)
		}
	}
	s.subs[uri] = true
	s.mu.Unlock()
	return nil
}

// unsubscribe answers a legacy resources/unsubscribe; a URI the session
// does not follow is no error (the state asked for holds).
func (e *Edge) unsubscribe(c *call) (any, error) {
	p := c.params.(*mcp.UnsubscribeRequestParams)
	if !e.subscribable() {
		return nil, notSubscribable(mcp.MethodResourcesUnsubscribe)
	}
	s := c.sess
	s.subMu.Lock()
	defer s.subMu.Unlock()
	s.mu.Lock()
	had := s.subs[p.URI]
	delete(s.subs, p.URI)
	s.mu.Unlock()
	if ns := e.subscriber(); had && ns != nil {
		ns.Unsubscribe(p.URI)
	}
	return &mcp.Result{}, nil
}

// releaseAtEnd lets go of what a session still follows when it ends.
func (e *Edge) releaseAtEnd(s *Session, ns server.Subscriber) {
	<-s.doneChan()
	s.subMu.Lock()
	defer s.subMu.Unlock()
	s.mu.Lock()
	uris := make([]string, 0, len(s.subs))
	for u := range s.subs {
		uris = append(uris, u)
	}
	clear(s.subs)
	s.mu.Unlock()
	for _, u := range uris {
		ns.Unsubscribe(u)
	}
}

// subscribeContext is the context a Subscribe runs in: the request's,
// with its notifier, so that what the source says meanwhile (a log
// message) reaches the client that asked.
func (e *Edge) subscribeContext(c *call) context.Context {
	n := e.notifier(c)
	return server.WithNotifier(c.ctx, &n)
}

// agreeResources is the part of a listen's resourceSubscriptions mcpx
// honours: each URI the namespace agreed to follow (once, however often
// it is named). release ends them, when the listen ends.
func (e *Edge) agreeResources(c *call, asked []string) (agreed []string, release func()) {
	release = func() {}
	if len(asked) == 0 || !e.subscribable() {
		return nil, release
	}
	ns := e.subscriber()
	ctx := e.subscribeContext(c)
	for _, u := range asked {
		if slices.Contains(agreed, u) {
			continue
		}
		if ns != nil {
			if err := ns.Subscribe(ctx, u); err != nil {
				// Left out of the acknowledgement, which names what is
				// honoured; the reason goes to mcpx's log.
				e.log().Info("a listen's resource subscription is not honoured", "uri", u, "err", err)
				continue
			}
		}
		agreed = append(agreed, u)
	}
	if ns == nil || len(agreed) == 0 {
		return agreed, release
	}
	return agreed, func() {
		for _, u := range agreed {
			ns.Unsubscribe(u)
		}
	}
}

// watchUpdates fans the namespace's resource updates out until ctx ends.
func (e *Edge) watchUpdates(ctx context.Context, s server.Subscriber) {
	updates := s.Updates(ctx)
	for {
		select {
		case <-ctx.Done():
			return
		case uri, ok := <-updates:
			if !ok {
				return
			}
			e.updated(uri)
		}
	}
}

// updated sends notifications/resources/updated for uri to every client
// that follows it: legacy sessions that subscribed, untagged; listens
// whose filter named it, tagged with the listen id.
func (e *Edge) updated(uri string) {
	for _, l := range e.listeners.all() {
		rev := l.rev
		if l.sess != nil {
			if rev = l.sess.Revision(); rev == "" {
				continue
			}
			l.sess.mu.Lock()
			follows := l.sess.subs[uri]
			l.sess.mu.Unlock()
			if !follows {
				continue
			}
		} else if !l.uris[uri] {
			continue
		}
		p := &mcp.ResourceUpdatedNotificationParams{URI: uri}
		if l.subID != nil {
			p.Meta = mcp.Meta{mcp.MetaKeySubscriptionID: l.subID}
		}
		n := &requestNotifier{e: e, rev: rev, sink: l.sink}
		l.mu.Lock()
		if !l.closed {
			n.Notify(mcp.MethodNotificationsResourcesUpdated, p)
		}
		l.mu.Unlock()
	}
}

// uriSet is a listen's agreed resourceSubscriptions as a set, nil for none.
func uriSet(uris []string) map[string]bool {
	if len(uris) == 0 {
		return nil
	}
	s := make(map[string]bool, len(uris))
	for _, u := range uris {
		s[u] = true
	}
	return s
}
