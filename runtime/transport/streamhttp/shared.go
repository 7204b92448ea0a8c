package streamhttp

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/mcpx-dev/mcpx/runtime/cluster"
	"github.com/mcpx-dev/mcpx/runtime/edge"
	"github.com/mcpx-dev/mcpx/runtime/jsonrpc"
)

// Legacy sessions shared by replicas (Options.Shared). Each session has a
// record in the shared store, under a hash of its id (nothing there is
// usable as a credential): the hash of its owner and what the edge
// negotiated (edge.SessionState), kept for SessionIdle and refreshed by
// every request. Any replica serves a session's plain requests: one that
// does not hold it rebuilds the edge session from the record and keeps it
// in its own table, taking over what other replicas set (the log level)
// at each request. DELETE on any replica drops the record and tells every
// replica to end its copy. The session's streams (GET, a POST's SSE
// response) stay where their connection is: what a replica has to say to
// the session unasked (resources/updated for a subscription it follows)
// is published on the session's topic, and the replica holding its GET
// stream passes it on. List changes are not: each replica hears those
// itself (the edge's cluster hook).

// Shared is what replicas share for legacy sessions.
type Shared struct {
	Records cluster.Records
	Bus     cluster.Bus
}

// sessionRecord is a session's record in the shared store.
type sessionRecord struct {
	Owner string          `json:"owner"` // ownerHash of the principal
	State json.RawMessage `json:"state"` // edge.SessionState
	// Subs are the session's resource subscriptions: the replica (its
	// bus id) following each URI upstream (sharedsubs.go).
	Subs map[string]string `json:"subs,omitempty"`
}

const topicEnded = "sessions.ended"

// sessionKey is the session's key in the store, and its topic: a hash of
// its id.
func sessionKey(id string) string {
	sum := sha256.Sum256([]byte("mcpx-session:" + id))
	return "sess:" + hex.EncodeToString(sum[:])
}

func ownerHash(owner string) string {
	sum := sha256.Sum256([]byte("mcpx-owner:" + owner))
	return hex.EncodeToString(sum[:])
}

// errNoSession: the session does not exist (for this owner).
var errNoSession = errors.New("no such session")

// acquireSession is sessions.acquire, across replicas when the sessions
// are shared: nil and errNoSession when there is no such session for
// owner, or the store's error (cluster.ErrUnavailable) when it cannot be
// read.
func (h *Handler) acquireSession(ctx context.Context, sid, owner string) (*session, error) {
	if h.shared == nil {
		if ss := h.sessions.acquire(sid, owner); ss != nil {
			return ss, nil
		}
		return nil, errNoSession
	}
	key := sessionKey(sid)
	raw, err := h.shared.Records.Get(ctx, key, h.sessions.idle)
	if errors.Is(err, cluster.ErrNotFound) {
		// Ended or expired everywhere: a copy here is stale.
		h.sessions.drop(sid)
		return nil, errNoSession
	}
	if err != nil {
		return nil, err
	}
	var rec sessionRecord
	var st edge.SessionState
	if json.Unmarshal(raw, &rec) != nil || json.Unmarshal(rec.State, &st) != nil {
		return nil, errNoSession
	}
	if rec.Owner != ownerHash(owner) {
		return nil, errNoSession // another principal's: it does not exist
	}
	ss := h.sessions.acquire(sid, owner)
	if ss == nil {
		var ok bool
		if ss, ok = h.sessions.insert(sid, edge.RestoreSession(st), owner, true); !ok {
			return nil, errSessionsFull
		}
		h.forwardUnasked(ss) // new here: what it has to say unasked goes to its stream's replica
		h.shareSubscriptions(ss)
	} else {
		ss.es.Update(st)
	}
	h.sessions.mu.Lock()
	ss.saved = rec.State
	ss.holders = rec.Subs
	h.sessions.mu.Unlock()
	return ss, nil
}

var errSessionsFull = errors.New("too many sessions are open")

// releaseSession is sessions.release, writing the session's state back
// to the shared store when the request changed it (logging/setLevel).
// The record's other parts (its subscriptions) are others' to change
// too: the state is swapped in, not put over them.
func (h *Handler) releaseSession(ss *session) {
	if h.shared != nil {
		st, _ := json.Marshal(ss.es.State())
		h.sessions.mu.Lock()
		changed := !bytes.Equal(st, ss.saved)
		if changed {
			ss.saved = st
		}
		h.sessions.mu.Unlock()
		if changed {
			_, err := h.updateRecord(context.Background(), ss.id, func(rec *sessionRecord) bool {
				if bytes.Equal(rec.State, st) {
					return false
				}
				rec.State = st
				return true
			})
			if err != nil && !errors.Is(err, cluster.ErrNotFound) {
				h.log.Warn("a session's state could not be shared with the other replicas", "err", err)
			}
		}
		h.keepFollowing(ss) // a subscription taken here lives on with the session
		h.checkAfterRequest(ss)
	}
	h.sessions.release(ss)
}

func (h *Handler) putRecord(ctx context.Context, id, owner string, st json.RawMessage) error {
	raw, _ := json.Marshal(sessionRecord{Owner: ownerHash(owner), State: st})
	return h.shared.Records.Put(ctx, sessionKey(id), raw, h.sessions.idle)
}

// shareSession records the session initialize just made, id, for the
// other replicas; a store that cannot be written ends it here again.
func (h *Handler) shareSession(ctx context.Context, id, owner string, es *edge.Session) error {
	if h.shared == nil {
		return nil
	}
	st, _ := json.Marshal(es.State())
	if err := h.putRecord(ctx, id, owner, st); err != nil {
		h.sessions.remove(id, owner)
		return err
	}
	h.sessions.mu.Lock()
	ss := h.sessions.m[id]
	if ss != nil {
		ss.saved = st
	}
	h.sessions.mu.Unlock()
	if ss != nil {
		h.forwardUnasked(ss)
		h.shareSubscriptions(ss)
	}
	return nil
}

// endSession is DELETE: the session ends here and, shared, everywhere.
// It reports whether owner had such a session.
func (h *Handler) endSession(ctx context.Context, sid, owner string) (bool, error) {
	if h.shared == nil {
		return h.sessions.remove(sid, owner), nil
	}
	key := sessionKey(sid)
	raw, err := h.shared.Records.Get(ctx, key, h.sessions.idle)
	if errors.Is(err, cluster.ErrNotFound) {
		h.sessions.drop(sid)
		return false, nil
	}
	if err != nil {
		return false, err
	}
	var rec sessionRecord
	if json.Unmarshal(raw, &rec) != nil || rec.Owner != ownerHash(owner) {
		return false, nil
	}
	if _, err := h.shared.Records.Delete(ctx, key); err != nil {
		return false, err
	}
	h.sessions.drop(sid)
	if err := h.shared.Bus.Publish(ctx, topicEnded, []byte(key)); err != nil {
		// The record is gone: every other copy ends at its next request.
		h.log.Warn("the other replicas were not told a session ended", "err", err)
	}
	return true, nil
}

// watchShared ends this replica's copy of a session another replica
// ended, until ctx ends.
func (h *Handler) watchShared(ctx context.Context, ended <-chan cluster.Event, stop func()) {
	defer stop()
	for {
		select {
		case <-ctx.Done():
			return
		case ev := <-ended:
			h.sessions.dropKey(string(ev.Data))
		}
	}
}

// unasked is a notification for a session, published on its topic.
type unasked struct {
	key string
	msg []byte
}

// forwardUnasked publishes, on the session's topic, what this replica
// has to say to ss unasked (the updates of the resources it subscribed
// here), for the replica that holds its GET stream; until ss ends. List
// changes are not forwarded: every replica hears those.
func (h *Handler) forwardUnasked(ss *session) {
	h.sessions.mu.Lock()
	already := ss.fwd
	ss.fwd = true
	h.sessions.mu.Unlock()
	if already {
		return
	}
	key := sessionKey(ss.id)
	detach := h.e.AttachRelay(ss.es, func(m *jsonrpc.Message) {
		if strings.HasSuffix(m.Method, "/list_changed") {
			return
		}
		b, err := jsonrpc.Encode(m)
		if err != nil {
			return
		}
		select {
		case h.unasked <- unasked{key, b}:
		default: // the bus is behind: dropped, as a slow stream's would be
		}
	})
	context.AfterFunc(ss.ctx, detach)
}

// publishUnasked sends the queued notifications, until ctx ends.
func (h *Handler) publishUnasked(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case u := <-h.unasked:
			if err := h.shared.Bus.Publish(ctx, u.key, u.msg); err != nil {
				h.log.Warn("a notification for a session's stream on another replica was lost", "err", err)
			}
		}
	}
}

// followShared passes what other replicas publish for ss to sink (its GET
// stream here) until the returned function is called.
func (h *Handler) followShared(ss *session, sink edge.Sink) func() {
	if h.shared == nil {
		return func() {}
	}
	key := sessionKey(ss.id)
	events, stop := h.shared.Bus.Subscribe(key)
	done := make(chan struct{})
	// A held stream keeps the session alive, here as in one process: its
	// record's time to live is given again while it is held.
	refresh := time.NewTicker(h.streamCheckEvery())
	h.sessions.mu.Lock()
	ss.streams++ // its subscriptions are checked here (sharedsubs.go)
	h.sessions.mu.Unlock()
	go func() {
		defer refresh.Stop()
		for {
			select {
			case <-done:
				return
			case <-refresh.C:
				// The refresh's read also checks the session's
				// subscriptions (one whose replica is gone is taken over
				// here), in a goroutine of its own; while a check or a
				// subscribe runs, the record is only refreshed.
				if h.checkSoon(ss, true) {
					continue
				}
				ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
				if _, err := h.shared.Records.Get(ctx, key, h.sessions.idle); errors.Is(err, cluster.ErrNotFound) {
					h.sessions.drop(ss.id) // ended elsewhere meanwhile
				}
				cancel()
			case ev := <-events:
				if ev.From == h.shared.Bus.ID() {
					continue // this replica's own: given to the stream already
				}
				msgs, errs, _ := jsonrpc.Decode(ev.Data, false)
				if len(msgs) == 1 && errs[0] == nil && msgs[0] != nil {
					sink(msgs[0])
				}
			}
		}
	}()
	return func() {
		stop()
		close(done)
		h.sessions.mu.Lock()
		ss.streams--
		h.sessions.mu.Unlock()
	}
}

// sessionRefused answers a request whose session could not be had: 404
// when there is none, 503 with Retry-After when the shared store or the
// table cannot take it now.
func sessionRefused(w http.ResponseWriter, id json.RawMessage, sid string, err error) {
	switch {
	case errors.Is(err, errNoSession):
		fail(w, http.StatusNotFound, id, "session %s does not exist or has ended; initialize a new one", jsonrpc.Quote(sid))
	case errors.Is(err, errSessionsFull):
		unavailable(w, id, "too many sessions are open; try again later")
	default:
		unavailable(w, id, "the session store is unavailable (%v); try again later", err)
	}
}
