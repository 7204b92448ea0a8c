package edge

import (
	"context"
	"errors"
	"fmt"
	"strings"

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
// ends, from its context's cause.
func endReason(ctx context.Context) string {
	var stopped *SourceStopped
	if errors.As(context.Cause(ctx), &stopped) {
		return stopped.Error()
	}
	return "the server is closing this subscription"
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
		if l.end == nil {
			continue // a legacy session's stream: it has no listen to end
		}
		if followsResourcesOf(l, name) {
			l.end(&SourceStopped{Name: name})
			continue
		}
		_, still := e.agree(l.asked)
		for method := range l.wanted {
			if !still[method] {
				l.end(&SourceStopped{Name: name})
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

// closeListener stops l hearing anything more: the broadcast skips it
// from now on, before mcpx sends the listen's last messages.
func closeListener(l *listener) {
	l.mu.Lock()
	l.closed = true
	l.mu.Unlock()
}
