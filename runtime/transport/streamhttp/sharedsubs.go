package streamhttp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/mcpx-dev/mcpx/generated/mcp"
	"github.com/mcpx-dev/mcpx/runtime/cluster"
	"github.com/mcpx-dev/mcpx/runtime/jsonrpc"
)

// Resource subscriptions (resources/subscribe) of a shared session. Its
// record is the truth: which URIs it follows, and which replica (by bus
// id) follows each upstream (sessionRecord.Subs). Its updates reach the
// session's stream from there over the bus (forwardUnasked).
//
//   - subscribe: a URI a live replica follows for the session already is
//     answered and not followed again; else this replica follows it and
//     records itself, by a compare-and-set of the record (Records.Swap).
//     Two subscribes at once on two replicas both follow it; the one
//     whose swap finds the other recorded, and alive, lets go at once.
//   - unsubscribe: the URI leaves the record, then the bus is told
//     (topicUnsubscribe), and the holder lets go at once; one that missed
//     the message (the bus down) finds it gone from the record at its
//     next check.
//   - check: each copy of the session that follows something
//     (keepFollowing), the one holding its GET stream (followShared),
//     and one serving a request of it at most once a period, read the
//     record every third of the idle time, one read per period per copy
//     (a copy whose stream checks it is not checked otherwise): a URI followed here that the
//     record gives to no one, or to another replica, is let go; one whose
//     replica does not answer on the bus (stopped, killed, cut off for
//     longer than the bus's acknowledgement timeout) is taken over: this
//     replica follows it and records itself, the same swap deciding
//     between two that try at once.
//
// A replica is alive if it answers a request on the bus (requestAlive):
// no record of its own to keep fresh, and a replica gone is known at once
// (no subscriber to its channel) rather than after a heartbeat's time to
// live. What each replica learns is kept for a period, so a check asks
// each other replica once a period at most, whatever the number of
// sessions. A replica taken for gone that was not (slow to acknowledge)
// finds the record gives its URIs to another and lets go: a short-lived
// double, resolved by the record.

const (
	topicUnsubscribe = "sessions.unsubscribe"
	requestAlive     = "sessions.alive"
)

// unsubscription is a resources/unsubscribe for the replicas.
type unsubscription struct {
	Key string `json:"key"` // sessionKey
	URI string `json:"uri"`
}

// checkEvery is how often a session's subscriptions are checked.
func (h *Handler) checkEvery() time.Duration { return max(h.sessions.idle/3, 50*time.Millisecond) }

// streamCheckEvery is how often a GET stream refreshes its session's
// record, checking its subscriptions with the same read.
func (h *Handler) streamCheckEvery() time.Duration { return max(h.sessions.idle/3, time.Second) }

// checkedByStream reports whether a GET stream here checks ss's
// subscriptions as often as checkEvery: then no other check of this copy
// reads the record (one read per period per copy).
func (h *Handler) checkedByStream(ss *session) bool {
	h.sessions.mu.Lock()
	defer h.sessions.mu.Unlock()
	return ss.streams > 0 && h.streamCheckEvery() <= h.checkEvery()
}

// errContended: the record changed under every try.
var errContended = errors.New("the session's record kept changing under this replica's writes")

// updateRecord changes the record of session sid by change (false: no
// change to write), swapped in over what it read so that another
// replica's change meanwhile is not lost (read again and changed again).
// It returns the record as it stands; cluster.ErrNotFound when it is gone.
func (h *Handler) updateRecord(ctx context.Context, sid string, change func(*sessionRecord) bool) (*sessionRecord, error) {
	key := sessionKey(sid)
	for range 16 {
		raw, err := h.shared.Records.Peek(ctx, key)
		if err != nil {
			return nil, err
		}
		var rec sessionRecord
		if err := json.Unmarshal(raw, &rec); err != nil {
			return nil, fmt.Errorf("the session's record: %v", err)
		}
		if !change(&rec) {
			return &rec, nil
		}
		next, _ := json.Marshal(&rec)
		if ok, err := h.shared.Records.Swap(ctx, key, raw, next); err != nil {
			return nil, err
		} else if ok {
			return &rec, nil
		}
	}
	return nil, errContended
}

// shareSubscriptions makes ss's resources/subscribe of a URI another
// live replica follows for it answer without following it here.
func (h *Handler) shareSubscriptions(ss *session) {
	ss.es.FollowedElsewhere(func(uri string) bool {
		h.sessions.mu.Lock()
		holder := ss.holders[uri]
		h.sessions.mu.Unlock()
		return holder != "" && holder != h.shared.Bus.ID() && h.live.alive(h, holder)
	})
}

// subscriptionShared is, for a resources/subscribe or unsubscribe of ss
// (m), the change of its record once the edge answered it, to call then:
// the record is changed by one request or check of ss at a time here.
func (h *Handler) subscriptionShared(ss *session, m *jsonrpc.Message) func() {
	if h.shared == nil || !m.IsRequest() || m.Method != mcp.MethodResourcesSubscribe && m.Method != mcp.MethodResourcesUnsubscribe {
		return func() {}
	}
	var p struct {
		URI string `json:"uri"`
	}
	if json.Unmarshal(m.Params, &p) != nil || p.URI == "" {
		return func() {} // answered with its error
	}
	ss.recMu.Lock()
	return func() {
		defer ss.recMu.Unlock()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if m.Method == mcp.MethodResourcesSubscribe {
			if ss.es.FollowsURI(p.URI) { // not when another follows it
				h.recordFollow(ctx, ss, p.URI, "")
			}
			return
		}
		h.unsubscribeShared(ctx, ss, p.URI)
	}
}

// recordFollow records this replica as following uri for ss, which it
// does now: over no one, over a replica gone, or, taking over (from not
// ""), over from only. A live replica recorded instead (it won a race)
// keeps the URI, and this one lets go.
func (h *Handler) recordFollow(ctx context.Context, ss *session, uri, from string) {
	me := h.shared.Bus.ID()
	lost := false
	rec, err := h.updateRecord(ctx, ss.id, func(rec *sessionRecord) bool {
		cur := rec.Subs[uri]
		switch {
		case cur == me:
			lost = false
			return false
		case from != "" && cur != from, // unsubscribed, or taken over by another, meanwhile
			from == "" && cur != "" && h.live.alive(h, cur):
			lost = true
			return false
		}
		lost = false
		if rec.Subs == nil {
			rec.Subs = map[string]string{}
		}
		rec.Subs[uri] = me
		return true
	})
	if errors.Is(err, cluster.ErrNotFound) {
		h.sessions.drop(ss.id) // the session ended meanwhile
		return
	}
	if err != nil {
		// Followed here and not recorded: the client hears its updates,
		// and another subscribe of it elsewhere may follow it again.
		h.log.Warn("a resource subscription could not be recorded in the session's record", "err", err)
		return
	}
	h.sessions.mu.Lock()
	ss.holders = rec.Subs
	h.sessions.mu.Unlock()
	if lost {
		h.e.Unfollow(ss.es, uri)
	}
}

// unsubscribeShared drops uri from ss's record, then tells the other
// replicas, so that the one following it lets go at once.
func (h *Handler) unsubscribeShared(ctx context.Context, ss *session, uri string) {
	rec, err := h.updateRecord(ctx, ss.id, func(rec *sessionRecord) bool {
		if _, ok := rec.Subs[uri]; !ok {
			return false
		}
		delete(rec.Subs, uri)
		return true
	})
	switch {
	case errors.Is(err, cluster.ErrNotFound):
		h.sessions.drop(ss.id)
		return
	case err != nil:
		h.log.Warn("a resources/unsubscribe could not be written to the session's record: the replica following the resource is told on the bus only", "err", err)
	default:
		h.sessions.mu.Lock()
		ss.holders = rec.Subs
		h.sessions.mu.Unlock()
	}
	data, _ := json.Marshal(unsubscription{Key: sessionKey(ss.id), URI: uri})
	if err := h.shared.Bus.Publish(ctx, topicUnsubscribe, data); err != nil {
		h.log.Warn("a resources/unsubscribe was not told to the other replicas: the one following the resource lets go at its next check of the session's record", "err", err)
	}
}

// watchUnsubscribes releases the subscriptions other replicas were asked
// to end, until ctx ends.
func (h *Handler) watchUnsubscribes(ctx context.Context, events <-chan cluster.Event, stop func()) {
	defer stop()
	for {
		select {
		case <-ctx.Done():
			return
		case ev := <-events:
			var u unsubscription
			if ev.From == h.shared.Bus.ID() || json.Unmarshal(ev.Data, &u) != nil {
				continue // this replica's own: the edge released it
			}
			h.sessions.mu.Lock()
			var found *session
			for id, ss := range h.sessions.m {
				if sessionKey(id) == u.Key {
					found = ss
					break
				}
			}
			h.sessions.mu.Unlock()
			if found != nil {
				h.e.Unfollow(found.es, u.URI)
			}
		}
	}
}

// keepFollowing keeps ss, which follows resources, in this replica's
// table while its record lives, checking it every third of the idle time
// (checkSubscriptions); it lets go (the idle timeout applies again) once
// ss follows nothing.
func (h *Handler) keepFollowing(ss *session) {
	if h.shared == nil || !ss.es.Follows() {
		return
	}
	h.sessions.mu.Lock()
	if ss.keep || h.sessions.m[ss.id] != ss {
		h.sessions.mu.Unlock()
		return
	}
	ss.keep = true
	ss.active++ // as a held stream: neither expired nor evicted
	h.sessions.mu.Unlock()
	go func() {
		t := time.NewTicker(h.checkEvery())
		defer t.Stop()
		for {
			select {
			case <-ss.ctx.Done():
				return
			case <-h.hold.Done(): // the handler closed
				return
			case <-t.C:
			}
			// Not when its stream's refresh checks them, nor while a
			// request or another check changes them.
			if !h.checkedByStream(ss) && ss.recMu.TryLock() {
				h.checkSubscriptions(ss, false)
				ss.recMu.Unlock()
			}
			if !ss.es.Follows() {
				h.sessions.mu.Lock()
				ss.keep = false
				ss.active--
				ss.last = time.Now()
				h.sessions.mu.Unlock()
				return
			}
		}
	}()
}

// checkSoon checks ss's subscriptions in a goroutine of its own, unless
// a request or check of them runs here now; it reports whether it did.
// refresh: the record's read gives it its time to live again (a held
// stream's). One goroutine per session at most: it holds ss.recMu.
func (h *Handler) checkSoon(ss *session, refresh bool) bool {
	if !ss.recMu.TryLock() {
		return false
	}
	go func() {
		defer ss.recMu.Unlock()
		h.checkSubscriptions(ss, refresh)
	}()
	return true
}

// checkAfterRequest checks, after a request, the subscriptions of ss
// that other replicas follow, at most once a period: a session with
// neither a stream nor a subscription here has its subscriptions taken
// over by the replica serving its next request.
func (h *Handler) checkAfterRequest(ss *session) {
	me := h.shared.Bus.ID()
	h.sessions.mu.Lock()
	others := false
	for _, r := range ss.holders {
		others = others || r != me
	}
	due := others && time.Since(ss.checked) >= h.checkEvery()
	h.sessions.mu.Unlock()
	if due && !h.checkedByStream(ss) {
		h.checkSoon(ss, false)
	}
}

// checkSubscriptions reads ss's record, with ss.recMu held, and makes
// what is followed here agree with it: a URI followed here that it gives
// to no one (unsubscribed) or to another replica is let go; one it gives
// to this replica and not followed here is followed again; one whose
// replica is gone is taken over. A record gone ends ss here.
func (h *Handler) checkSubscriptions(ss *session, refresh bool) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	key := sessionKey(ss.id)
	h.sessions.mu.Lock()
	ss.checked = time.Now()
	h.sessions.mu.Unlock()
	var raw []byte
	var err error
	if refresh {
		raw, err = h.shared.Records.Get(ctx, key, h.sessions.idle)
	} else {
		raw, err = h.shared.Records.Peek(ctx, key)
	}
	if errors.Is(err, cluster.ErrNotFound) {
		h.sessions.drop(ss.id) // ended or expired everywhere: its subscriptions go
		return
	}
	var rec sessionRecord
	if err != nil || json.Unmarshal(raw, &rec) != nil {
		return // tried again next period
	}
	h.sessions.mu.Lock()
	ss.holders = rec.Subs
	h.sessions.mu.Unlock()
	me := h.shared.Bus.ID()
	for _, u := range ss.es.Following() {
		if rec.Subs[u] != me {
			h.e.Unfollow(ss.es, u)
		}
	}
	for u, r := range rec.Subs {
		switch {
		case r == me && ss.es.FollowsURI(u):
			continue
		case r != me && h.live.alive(h, r):
			continue
		}
		if err := h.e.Follow(ctx, ss.es, u); err != nil {
			h.log.Warn("a resource subscription of a session could not be taken over from a replica that is gone", "replica", r, "err", err)
			continue
		}
		if r != me {
			h.log.Info("took over a session's resource subscription from a replica that is gone", "replica", r)
			h.recordFollow(ctx, ss, u, r)
		}
	}
	h.keepFollowing(ss) // what it took over lives on with the session
}

// liveness is what this replica learned of the others' being on the bus,
// each answer kept for a period.
type liveness struct {
	mu   sync.Mutex
	seen map[string]livenessAnswer
}

type livenessAnswer struct {
	alive bool
	at    time.Time
}

// alive reports whether replica answers on the bus. A bus this replica
// cannot use now says nothing: the replica is taken to be alive (its
// subscriptions are left to it).
func (l *liveness) alive(h *Handler, replica string) bool {
	if replica == h.shared.Bus.ID() {
		return true
	}
	every := h.checkEvery()
	l.mu.Lock()
	a, ok := l.seen[replica]
	l.mu.Unlock()
	if ok && time.Since(a.at) < every {
		return a.alive
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	_, err := h.shared.Bus.Request(ctx, replica, requestAlive, nil)
	cancel()
	alive := !errors.Is(err, cluster.ErrGone)
	now := time.Now()
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.seen == nil {
		l.seen = map[string]livenessAnswer{}
	}
	for r, a := range l.seen { // one entry per replica heard of lately
		if now.Sub(a.at) >= every {
			delete(l.seen, r)
		}
	}
	l.seen[replica] = livenessAnswer{alive, now}
	return alive
}
