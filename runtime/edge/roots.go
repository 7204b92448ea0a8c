package edge

import (
	"encoding/json"
	"sync/atomic"

	"github.com/mcpx-dev/mcpx/runtime/server"
)

// sessionSeq numbers legacy sessions: the ids of server.WithClientSession.
var sessionSeq atomic.Uint64

// token is the session's number, its server.ClientSession id, made on first use.
func (s *Session) token() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.num == 0 {
		s.num = sessionSeq.Add(1)
	}
	return s.num
}

// rootsChanged handles a legacy client's notifications/roots/list_changed:
// passed to the namespace (server.RootsWatcher) when the client declared
// roots.listChanged at initialize; otherwise it has no business sending
// it, and it is ignored.
func (e *Edge) rootsChanged(sess *Session) {
	sess.mu.Lock()
	rev, roots := sess.rev, sess.caps.Roots
	sess.mu.Unlock()
	if rev == "" || IsModern(rev) {
		return
	}
	var r struct {
		ListChanged bool `json:"listChanged"`
	}
	if json.Unmarshal(roots, &r) != nil || !r.ListChanged {
		e.log().Debug("notifications/roots/list_changed from a client that did not declare roots.listChanged; ignored")
		return
	}
	if w, ok := e.Server.NS.(server.RootsWatcher); ok {
		w.RootsChanged(sess.token())
	}
}
