package gateway

import (
	"context"
	"slices"
	"sync"
)

// The merged lists' changes go to every follower: each edge on the
// gateway (and each relay that passes them to other replicas) follows
// them all, on a channel of its own. A follower never holds the others
// up: the gateway does not wait for one that is behind. A list change
// only says "list again", so a follower that is behind loses repeats:
// the change already waiting for it stands for the new one. Only when
// ChangesQueue different changes wait (there are three kinds of list) is
// one dropped, and logged.

// ChangesQueue bounds the changes waiting for one follower.
const ChangesQueue = 16

type changeFeeds struct {
	mu  sync.Mutex
	set map[chan string]bool
}

// FollowChanges gives every list_changed method the merged lists report
// from now on, on a channel of the caller's own that is closed when ctx
// ends. A follower that is behind loses only repeats of what still waits
// for it (see above).
func (g *Gateway) FollowChanges(ctx context.Context) <-chan string {
	ch := make(chan string, ChangesQueue)
	f := &g.feeds
	f.mu.Lock()
	if f.set == nil {
		f.set = map[chan string]bool{}
	}
	f.set[ch] = true
	f.mu.Unlock()
	context.AfterFunc(ctx, func() {
		f.mu.Lock()
		delete(f.set, ch)
		close(ch) // under f.mu: no signal sends on it after this
		f.mu.Unlock()
	})
	return ch
}

// signal gives method to every follower, Changes' one too, waiting for
// none.
func (g *Gateway) signal(method string) {
	f := &g.feeds
	f.mu.Lock()
	defer f.mu.Unlock()
	if !offer(g.changes, method) {
		g.log.Warn("gateway: a list change was dropped: too many different changes waiting", "method", method, "queue", ChangesQueue)
	}
	for ch := range f.set {
		if !offer(ch, method) {
			g.log.Warn("gateway: a list change was dropped for a follower: too many different changes waiting", "method", method, "queue", ChangesQueue)
		}
	}
}

// offer queues method on ch without waiting. A full queue is taken out
// and put back with each change once, in order, and method joins it
// unless it is already there. It reports false when method could not be
// queued (ChangesQueue different changes wait). The caller holds
// feeds.mu: no other sender, so putting back cannot block (the follower
// only takes).
func offer(ch chan string, method string) bool {
	select {
	case ch <- method:
		return true
	default:
	}
	var waiting []string
take:
	for len(waiting) < cap(ch) {
		select {
		case m := <-ch:
			if !slices.Contains(waiting, m) {
				waiting = append(waiting, m)
			}
		default:
			break take
		}
	}
	for _, m := range waiting {
		ch <- m
	}
	if slices.Contains(waiting, method) {
		return true
	}
	select {
	case ch <- method:
		return true
	default:
		return false
	}
}
