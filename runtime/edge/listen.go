package edge

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/mcpx-dev/mcpx/generated/mcp"
	"github.com/mcpx-dev/mcpx/runtime/jsonrpc"
	"github.com/mcpx-dev/mcpx/runtime/server"
)

// How a subscriptions/listen stream ends decides what is sent for it. The
// client ends it (notifications/cancelled on stdio, closing its stream
// over HTTP): nothing more may be sent, and a client that closed its HTTP
// stream is not answered as if mcpx had ended it. mcpx ends it (shutting
// down, the connection going away, its event source stopped):
// notifications/cancelled for the listen id, then the listen result (see
// the listen handler).

// ErrClientGone is the cause a transport cancels a listen's context with
// when the client has gone: it closed its HTTP stream, or stopped taking
// writes. The listen then ends silently, as for the client's own
// notifications/cancelled.
var ErrClientGone = fmt.Errorf("the client closed its stream: %w", errCancelled)

// SourceStopped is the cause a listen is ended with when the event source
// it follows stopped, an upstream removed. Its text is the reason given
// in notifications/cancelled.
type SourceStopped struct{ Name string }

func (s *SourceStopped) Error() string {
	return fmt.Sprintf("the event source of this subscription stopped: %q was removed", s.Name)
}

// endReason is the reason notifications/cancelled gives for a listen mcpx
// ends, from the cause it is ended with.
func endReason(cause error) string {
	var stopped *SourceStopped
	if errors.As(cause, &stopped) {
		return stopped.Error()
	}
	return "the server is closing this subscription"
}

// listen answers subscriptions/listen: the acknowledgement first, tagged
// with the listen id and naming the list changes mcpx agrees to send (those
// the namespace tells of), then those notifications, tagged, until the
// stream ends.
//
// A listen is a registration, not a goroutine that waits: the listener
// holds what its end needs (stop), and whoever ends it (the transport,
// the client's notifications/cancelled, a removal) runs that end. Served
// by HandleHeld (c.done set) it returns once acknowledged, with a held
// Reply; served by Handle it waits for its end here, as any request does.
// An idle listen then costs the listener and the transport's stream, no
// stack and no context of its own (BENCHMARKS.md).
func (e *Edge) listen(c *call) (any, error) {
	if c.sink == nil {
		return nil, jsonrpc.Errorf(jsonrpc.InternalError, nil, "this transport cannot hold a subscription stream")
	}
	if err := c.listenTasks(); err != nil {
		return nil, err // tasks.go
	}
	p, _ := c.params.(*mcp.SubscriptionsListenRequestParams)
	if p == nil {
		p = &mcp.SubscriptionsListenRequestParams{}
	}
	taskIDs, err := c.askedTasks() // listentasks.go
	if err != nil {
		return nil, err
	}
	agreed, wanted := e.agree(p.Notifications)
	uris, release := e.agreeResources(c, p.Notifications.ResourceSubscriptions) // subscribe.go
	agreed.ResourceSubscriptions = uris
	ack := &mcp.SubscriptionsAcknowledgedNotificationParams{
		Meta:          mcp.Meta{mcp.MetaKeySubscriptionID: c.id},
		Notifications: agreed,
	}
	l := &listener{rev: c.rev, subID: c.id, wanted: wanted, uris: uriSet(uris), asked: p.Notifications, sink: c.sink,
		e: e, owner: c.sess, release: release, finish: c.done, span: c.span}
	if c.done == nil {
		l.result = make(chan Reply, 1)
	} else {
		// The client's notifications/cancelled ends it from now on.
		c.sess.retrack(string(c.id), l.stop)
	}
	n := &requestNotifier{e: e, rev: c.rev, sink: c.sink}
	if len(taskIDs) > 0 {
		// Only the tasks the client may read are followed (read once
		// without l.mu, so that nobody's task changes wait on reads of
		// ids that do not exist); read again once followed, under l.mu:
		// a change meanwhile waits and comes after the acknowledgement.
		readable, _ := e.agreeTasks(c, taskIDs)
		l.mu.Lock()
		unfollow := e.followTasks(l, readable)
		agreedTasks, recs := e.agreeTasks(c, readable)
		l.tasks = make(map[string]bool, len(agreedTasks))
		for _, id := range agreedTasks {
			l.tasks[id] = true
		}
		if len(wanted) > 0 || len(uris) > 0 {
			remove := e.listeners.add(l)
			l.remove = func() { remove(); unfollow() }
		} else {
			l.remove = unfollow
		}
		n.sink = withTasksAcked(c.sink, agreedTasks)
		n.Notify(mcp.MethodNotificationsSubscriptionsAcknowledged, ack)
		for _, rec := range recs {
			e.notifyTask(l, rec) // each one's state now
		}
		l.mu.Unlock()
	} else if len(wanted) > 0 || len(uris) > 0 {
		// Registered before the acknowledgement, so that no change after
		// it is missed, and held until it is given to the sink, so that
		// the acknowledgement comes first.
		l.mu.Lock()
		l.remove = e.listeners.add(l)
		n.Notify(mcp.MethodNotificationsSubscriptionsAcknowledged, ack)
		l.mu.Unlock()
	} else {
		n.Notify(mcp.MethodNotificationsSubscriptionsAcknowledged, ack)
	}
	if c.done != nil {
		return Reply{Rev: c.rev, held: l.stop}, nil
	}
	// Served by Handle: the request's context ends it (the client, a
	// shutdown), and this waits for its end.
	defer context.AfterFunc(c.ctx, func() { l.stop(context.Cause(c.ctx)) })()
	return <-l.result, nil
}

// stop ends the listen l, once, however it ends (see listen). A cause
// that is the client's (errCancelled: its notifications/cancelled, or a
// transport's ErrClientGone) sends nothing more. Any other is mcpx
// ending it (shutting down, its event source stopped). The subscriptions
// page asks for a successful result, the cancellation page for
// notifications/cancelled naming the listen id: the cancellation goes
// first, while the request is still in progress, then the result, which a
// client that acted on the cancellation ignores
// (docs/revisions.md#subscriptionslisten).
func (l *listener) stop(cause error) {
	l.mu.Lock() // waits for a notification being given to it
	if l.closed {
		l.mu.Unlock()
		return
	}
	l.closed = true // the broadcast skips it from now on
	l.mu.Unlock()
	if l.remove != nil {
		l.remove()
	}
	l.release()
	rep := Reply{Rev: l.rev}
	if !errors.Is(cause, errCancelled) {
		n := &requestNotifier{e: l.e, rev: l.rev, sink: l.sink}
		n.Notify(mcp.MethodNotificationsCancelled, &mcp.CancelledNotificationParams{RequestID: l.subID, Reason: endReason(cause)})
		raw, err := l.e.encodeResult(l.rev, &mcp.SubscriptionsListenResult{Meta: mcp.Meta{mcp.MetaKeySubscriptionID: l.subID}})
		if err != nil {
			rep = l.e.fail(l.subID, l.rev, err)
		} else {
			rep = Reply{Msg: jsonrpc.Response(l.subID, raw), Status: http.StatusOK, Rev: l.rev}
		}
	}
	if l.finish == nil {
		l.result <- rep // Handle's listen waits for it
		return
	}
	l.owner.untrack(string(l.subID))
	l.span.End(rep.Msg)
	l.finish(rep)
}

// watchRemovals ends the listens a namespace part's removal affects,
// until the returned function is called; without a server.Remover it
// does nothing.
func (e *Edge) watchRemovals() func() {
	r, ok := e.Server.NS.(server.Remover)
	if !ok {
		return func() {}
	}
	return r.OnRemove(e.sourceStopped)
}

// sourceStopped ends every listen whose agreement no longer holds now
// that name is gone: a kind of change it was promised that no part left
// can produce (the last upstream with prompts removed). Listens whose
// kinds other parts still produce go on, and hear the list changes the
// removal made.
func (e *Edge) sourceStopped(name string) {
	for _, l := range e.listeners.all() {
		if l.sess != nil {
			continue // a legacy session's stream: it has no listen to end
		}
		if followsResourcesOf(l, name) {
			go l.stop(&SourceStopped{Name: name})
			continue
		}
		_, still := e.agree(l.asked)
		for method := range l.wanted {
			if !still[method] {
				go l.stop(&SourceStopped{Name: name})
				break
			}
		}
	}
}

// followsResourcesOf reports whether the listen l follows a resource of
// the namespace name (mcpx://<name>/...): its updates stopped with it. A
// root namespace's URIs pass unchanged, so its listens cannot be told
// apart and go on. (l.uris is set when l is made, and only read after.)
func followsResourcesOf(l *listener, name string) bool {
	for u := range l.uris {
		if strings.HasPrefix(u, "mcpx://"+name+"/") {
			return true
		}
	}
	return false
}
