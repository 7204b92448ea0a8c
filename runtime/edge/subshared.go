package edge

import (
	"context"
	"slices"
)

// Resource subscriptions of a legacy session served by several replicas
// (package streamhttp's shared sessions): one replica follows each URI
// upstream for the session. The transport keeps which one in the
// session's shared record; the edge follows, releases and reports what
// it is told.

// Follows reports whether s follows a resource (resources/subscribe).
func (s *Session) Follows() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.subs) > 0
}

// Following is the URIs s follows here, sorted.
func (s *Session) Following() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	uris := make([]string, 0, len(s.subs))
	for u := range s.subs {
		uris = append(uris, u)
	}
	slices.Sort(uris)
	return uris
}

// FollowsURI reports whether s follows uri here.
func (s *Session) FollowsURI(uri string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.subs[uri]
}

// FollowedElsewhere makes a resources/subscribe of s answer without
// following the URI here when f reports another replica follows it for
// the session already (a session subscribing twice to one URI, on two
// replicas, follows it once). f runs during the request.
func (s *Session) FollowedElsewhere(f func(uri string) bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.elsewhere = f
}

// Follow makes s follow uri here as a resources/subscribe does, without
// a request: a subscription taken over from a replica that is gone. Its
// Subscribe runs in ctx.
func (e *Edge) Follow(ctx context.Context, s *Session, uri string) error {
	return e.followURI(ctx, s, uri, false)
}

// Unfollow releases s's subscription to uri, if s has one: a
// resources/unsubscribe of the session answered by another replica, or a
// URI the session's record says another replica follows. It reports
// whether there was one.
func (e *Edge) Unfollow(s *Session, uri string) bool {
	s.subMu.Lock()
	defer s.subMu.Unlock()
	s.mu.Lock()
	had := s.subs[uri]
	delete(s.subs, uri)
	s.mu.Unlock()
	if ns := e.subscriber(); had && ns != nil {
		ns.Unsubscribe(uri)
	}
	return had
}
