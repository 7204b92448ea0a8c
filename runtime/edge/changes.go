package edge

import (
	"context"
	"encoding/json"
	"sync"

	"github.com/mcpx-dev/mcpx/generated/mcp"
	"github.com/mcpx-dev/mcpx/runtime/server"
	"github.com/mcpx-dev/mcpx/runtime/tracing"
)

// List changes reach two kinds of listener: a legacy session with a stream
// the server may speak on unasked (stdio, the Streamable HTTP GET stream),
// and a 2026-07-28 subscriptions/listen stream whose filter names the
// change, each notification tagged with the listen id.

// listChanges maps the filter members to the notifications they ask for.
var listChanges = []struct {
	method string
	asked  func(*mcp.SubscriptionFilter) *bool
	has    func(*mcp.ServerCapabilities) bool
}{
	{mcp.MethodNotificationsToolsListChanged, func(f *mcp.SubscriptionFilter) *bool { return f.ToolsListChanged }, func(c *mcp.ServerCapabilities) bool { return c.Tools != nil }},
	{mcp.MethodNotificationsPromptsListChanged, func(f *mcp.SubscriptionFilter) *bool { return f.PromptsListChanged }, func(c *mcp.ServerCapabilities) bool { return c.Prompts != nil }},
	{mcp.MethodNotificationsResourcesListChanged, func(f *mcp.SubscriptionFilter) *bool { return f.ResourcesListChanged }, func(c *mcp.ServerCapabilities) bool { return c.Resources != nil }},
}

// listener is one place list changes go.
type listener struct {
	sess   *Session        // legacy: its revision at the time of sending
	rev    mcp.Revision    // modern listen: the listen request's revision
	subID  json.RawMessage // modern listen: the tag
	wanted map[string]bool // modern listen: the agreed filter; nil = everything
	uris   map[string]bool // modern listen: the agreed resourceSubscriptions (subscribe.go)
	tasks  map[string]bool // modern listen: the agreed task ids (listentasks.go); set under mu
	sink   Sink
	// relay: legacy, the sink forwards to the session's stream on another
	// replica (AttachRelay); never given a request (sessionStreams).
	relay  bool
	asked  mcp.SubscriptionFilter // modern listen: what it asked for (listen.go)
	closed bool                   // guarded by mu: ending; nothing more is given it
	// A modern listen's end (listen.go: stop): what it lets go, and where
	// its final reply goes (finish, HandleHeld's; result, Handle's).
	e       *Edge
	owner   *Session // tracks the listen's id
	remove  func()   // from the listeners; nil when never added
	release func()   // its resource subscriptions
	finish  func(Reply)
	result  chan Reply
	span    *tracing.Span
	// mu is held while the listener is given a notification, and by a
	// listen from before its registration until its acknowledgement is
	// given to the sink: a change broadcast meanwhile waits, so it is
	// neither lost nor ahead of the acknowledgement.
	mu sync.Mutex
}

type listeners struct {
	mu  sync.Mutex
	set map[*listener]bool
}

func (l *listeners) add(x *listener) func() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.set == nil {
		l.set = map[*listener]bool{}
	}
	l.set[x] = true
	return func() {
		l.mu.Lock()
		delete(l.set, x)
		l.mu.Unlock()
	}
}

func (l *listeners) all() []*listener {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]*listener, 0, len(l.set))
	for x := range l.set {
		out = append(out, x)
	}
	return out
}

// changes reports whether the namespace tells of list changes.
func (e *Edge) changes() bool {
	_, ok := e.Server.NS.(server.Changer)
	return ok
}

// capabilities are the server's, with listChanged declared for every list
// when the namespace tells of changes (the edge then delivers them).
func (e *Edge) capabilities() mcp.ServerCapabilities {
	caps := e.Server.Capabilities()
	if caps.Tools != nil {
		caps = taskCapabilities(caps) // tasks.go: mcpx holds tasks for every tool call
	}
	if !e.changes() {
		return caps
	}
	if caps.Tools != nil {
		t := *caps.Tools
		t.ListChanged = mcp.Ptr(true)
		caps.Tools = &t
	}
	if caps.Prompts != nil {
		p := *caps.Prompts
		p.ListChanged = mcp.Ptr(true)
		caps.Prompts = &p
	}
	if caps.Resources != nil {
		r := *caps.Resources
		r.ListChanged = mcp.Ptr(true)
		caps.Resources = &r
	}
	return caps
}

// Attach makes sink the legacy session's unasked stream: stdio's output,
// the Streamable HTTP GET stream. It returns the detach function.
func (e *Edge) Attach(sess *Session, sink Sink) func() {
	return e.listeners.add(&listener{sess: sess, sink: sink})
}

// AttachRelay makes sink a legacy session's way to its stream on another
// replica (the transport publishes what it is given there). It hears
// what the session's streams hear, and is the session's stream only when
// this replica holds none, and only for notifications: the answer to a
// request sent through it could land on any replica, not here, where the
// question waits.
func (e *Edge) AttachRelay(sess *Session, sink Sink) func() {
	return e.listeners.add(&listener{sess: sess, sink: sink, relay: true})
}

// sessionStreams are sess's unasked streams to give one message (a
// request when request): this replica's own first, then its relay to
// another replica's (AttachRelay) unless the message is a request.
func (e *Edge) sessionStreams(sess *Session, request bool) []*listener {
	var own, relayed []*listener
	for _, l := range e.listeners.all() {
		switch {
		case l.sess != sess:
		case !l.relay:
			own = append(own, l)
		case !request:
			relayed = append(relayed, l)
		}
	}
	return append(own, relayed...)
}

// WatchChanges fans the namespace's list changes out to every listener
// until ctx ends, a [server.Subscriber]'s resource updates to the
// clients that follow them, and ends the listens a removal of a namespace
// part affects (listen.go). Without a changing or removing namespace it
// returns at once (updates are still fanned out until ctx ends).
func (e *Edge) WatchChanges(ctx context.Context) {
	go e.watchPeers(ctx) // other replicas' list changes (cluster.go)
	if s := e.subscriber(); s != nil {
		go e.watchUpdates(ctx, s) // resource updates (subscribe.go)
	}
	c, ok := e.Server.NS.(server.Changer)
	_, removes := e.Server.NS.(server.Remover)
	if !ok && !removes {
		return
	}
	defer e.watchRemovals()()
	if !ok {
		<-ctx.Done()
		return
	}
	changes := c.Changes()
	if f, ok := e.Server.NS.(changeFollower); ok {
		changes = f.FollowChanges(ctx) // every change, whatever other edges follow
	}
	for {
		select {
		case <-ctx.Done():
			return
		case method, ok := <-changes:
			if !ok {
				return
			}
			e.broadcast(method)
			e.publishChange(method) // to the other replicas (cluster.go)
		}
	}
}

// changeFollower is a namespace several consumers can follow, each
// hearing every change (the gateway: gateway.FollowChanges); a plain
// [server.Changer]'s one channel is shared by whoever reads it.
type changeFollower interface {
	FollowChanges(ctx context.Context) <-chan string
}

func (e *Edge) broadcast(method string) {
	for _, l := range e.listeners.all() {
		rev := l.rev
		if l.sess != nil {
			if rev = l.sess.Revision(); rev == "" {
				continue // not initialized: nothing was declared to it
			}
		}
		if l.wanted != nil && !l.wanted[method] {
			continue // a filter that does not name it: never sent
		}
		p := &mcp.NotificationParams{}
		if l.subID != nil {
			p.Meta = mcp.Meta{mcp.MetaKeySubscriptionID: l.subID}
		}
		n := &requestNotifier{e: e, rev: rev, sink: l.sink}
		l.mu.Lock()
		if !l.closed {
			n.Notify(method, p)
		}
		l.mu.Unlock()
	}
}

// agree is the part of a listen filter mcpx honours: the list changes the
// namespace tells of, for lists it has.
func (e *Edge) agree(asked mcp.SubscriptionFilter) (mcp.SubscriptionFilter, map[string]bool) {
	var agreed mcp.SubscriptionFilter
	wanted := map[string]bool{}
	if !e.changes() {
		return agreed, wanted
	}
	caps := e.Server.Capabilities()
	yes := mcp.Ptr(true)
	agreed.ToolsListChanged = nil
	for _, lc := range listChanges {
		if a := lc.asked(&asked); a != nil && *a && lc.has(&caps) {
			wanted[lc.method] = true
		}
	}
	if wanted[mcp.MethodNotificationsToolsListChanged] {
		agreed.ToolsListChanged = yes
	}
	if wanted[mcp.MethodNotificationsPromptsListChanged] {
		agreed.PromptsListChanged = yes
	}
	if wanted[mcp.MethodNotificationsResourcesListChanged] {
		agreed.ResourcesListChanged = yes
	}
	return agreed, wanted
}
