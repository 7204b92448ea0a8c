package edge

// Resource subscriptions of a legacy session served by several replicas
// (package streamhttp's shared sessions): the replica that took a
// subscription follows the resource upstream, and another replica that
// receives the session's resources/unsubscribe has it released there.

// Follows reports whether s follows a resource (resources/subscribe).
func (s *Session) Follows() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.subs) > 0
}

// Unfollow releases s's subscription to uri, if s has one: a
// resources/unsubscribe of the session answered by another replica. It
// reports whether there was one.
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
