package streamhttp

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"sync"
	"time"

	"github.com/mcpx-dev/mcpx/runtime/edge"
)

// session is one legacy client's Mcp-Session-Id and what the edge
// remembers for it.
type session struct {
	id     string
	owner  string // the principal that created it (auth.Owner); "" without auth
	es     *edge.Session
	ctx    context.Context // ended by DELETE and idle expiry
	cancel context.CancelFunc

	// Guarded by sessions.mu.
	last   time.Time // when a request last used it
	active int       // requests and GET streams using it now
	saved  []byte    // its state as last read from or written to the shared store (shared.go)
	fwd    bool      // its unasked notifications are forwarded to the bus (shared.go)
	keep   bool      // it follows resources: kept while its shared record lives (shared.go)
	// holders are its record's subscriptions as last read: the replica
	// following each URI (sharedsubs.go).
	holders map[string]string
	checked time.Time // when its subscriptions were last checked here
	streams int       // its GET streams here, each checking them (shared.go)

	// recMu is held by one change of its subscriptions here at a time: a
	// resources/subscribe or unsubscribe and its record, or a check.
	recMu sync.Mutex
}

// sessions holds the legacy sessions, at most max of them; one unused for
// idle is dropped, and when the table is full a new one evicts the one
// idle the longest.
type sessions struct {
	max  int
	idle time.Duration

	mu     sync.Mutex
	m      map[string]*session
	closed bool
}

func newSessions(max int, idle time.Duration) *sessions {
	return &sessions{max: max, idle: idle, m: map[string]*session{}}
}

func (s *sessions) expired(ss *session, now time.Time) bool {
	return ss.active == 0 && now.Sub(ss.last) >= s.idle
}

// sweep drops expired sessions; s.mu is held.
func (s *sessions) sweep(now time.Time) {
	for id, ss := range s.m {
		if s.expired(ss, now) {
			delete(s.m, id)
			ss.cancel()
		}
	}
}

// acquire returns the live session with this id, marked in use until
// release, or nil. A session belongs to the principal that created it:
// to another owner it does not exist.
func (s *sessions) acquire(id, owner string) *session {
	s.mu.Lock()
	defer s.mu.Unlock()
	ss := s.m[id]
	if ss == nil || ss.owner != owner {
		return nil
	}
	now := time.Now()
	if s.expired(ss, now) {
		delete(s.m, id)
		ss.cancel()
		return nil
	}
	ss.active++
	ss.last = now
	return ss
}

func (s *sessions) release(ss *session) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ss.active--
	ss.last = time.Now()
}

// hasRoom reports whether another session may be added now: the table
// has room, or holds a session that add may evict.
func (s *sessions) hasRoom() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.m) >= s.max {
		s.sweep(time.Now())
	}
	return !s.closed && (len(s.m) < s.max || s.oldestIdle() != nil)
}

// oldestIdle is the session unused the longest of those with no request
// in progress and no stream held, or nil; s.mu is held.
func (s *sessions) oldestIdle() *session {
	var old *session
	for _, ss := range s.m {
		if ss.active == 0 && (old == nil || ss.last.Before(old.last)) {
			old = ss
		}
	}
	return old
}

// add keeps es under a new id. When the table is full, the session idle
// the longest (no request in progress, no stream held) is ended to make
// room, so that one client opening sessions cannot lock others out until
// they expire; ok is false when every session is in use.
func (s *sessions) add(es *edge.Session, owner string) (id string, ok bool) {
	id = newSessionID()
	ss, ok := s.insert(id, es, owner, false)
	if !ok {
		return "", false
	}
	return ss.id, true
}

// insert keeps es under id, as add does; in use, it is marked so until
// release (a session another replica made, taken in by a request: shared.go).
func (s *sessions) insert(id string, es *edge.Session, owner string, inUse bool) (*session, bool) {
	ctx, cancel := context.WithCancel(context.Background())
	s.mu.Lock()
	defer s.mu.Unlock()
	now := time.Now()
	if old := s.m[id]; old != nil && inUse && old.owner == owner && !s.closed {
		cancel() // two requests took it in at once: the first one's
		old.active++
		old.last = now
		return old, true
	}
	if len(s.m) >= s.max {
		s.sweep(now)
	}
	if !s.closed && len(s.m) >= s.max {
		if old := s.oldestIdle(); old != nil {
			delete(s.m, old.id)
			old.cancel()
		}
	}
	if s.closed || len(s.m) >= s.max {
		cancel()
		return nil, false
	}
	ss := &session{id: id, owner: owner, es: es, ctx: ctx, cancel: cancel, last: now}
	if inUse {
		ss.active = 1
	}
	s.m[id] = ss
	context.AfterFunc(ctx, es.End) // DELETE, expiry, eviction: the client session ends
	return ss, true
}

// remove ends the session with this id if owner owns it: its requests
// and streams are cancelled. It reports whether there was one.
func (s *sessions) remove(id, owner string) bool {
	s.mu.Lock()
	ss := s.m[id]
	if ss == nil || ss.owner != owner {
		s.mu.Unlock()
		return false
	}
	delete(s.m, id)
	s.mu.Unlock()
	ss.cancel()
	return true
}

// close forgets every session and refuses new ones. Requests still running
// on them are left to finish: a graceful shutdown waits for them.
func (s *sessions) close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	clear(s.m)
}

func (s *sessions) len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.m)
}

// newSessionID returns 32 hex digits from crypto/rand: visible ASCII, as
// the session-management section requires, and unguessable.
func newSessionID() string {
	var b [16]byte
	rand.Read(b[:]) // never fails (crypto/rand, Go 1.24+)
	return hex.EncodeToString(b[:])
}

// drop ends the session with this id, whoever owns it: it ended or
// expired on another replica (shared.go).
func (s *sessions) drop(id string) {
	s.mu.Lock()
	ss := s.m[id]
	delete(s.m, id)
	s.mu.Unlock()
	if ss != nil {
		ss.cancel()
	}
}

// dropKey drops the session whose shared key is key (shared.go).
func (s *sessions) dropKey(key string) {
	s.mu.Lock()
	var found *session
	for id, ss := range s.m {
		if sessionKey(id) == key {
			found = ss
			delete(s.m, id)
			break
		}
	}
	s.mu.Unlock()
	if found != nil {
		found.cancel()
	}
}
