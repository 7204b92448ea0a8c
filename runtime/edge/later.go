package edge

// Later is server.LaterNotifier for the client of one call: what a
// notification about a question (notifications/elicitation/complete)
// goes on once the call that asked may have ended. A 2026-07-28 client
// has no session and no stream to be told anything unasked: nil.
func (a *asker) Later() func(method string, params any) bool {
	c, e := a.c, a.e
	if IsModern(c.rev) || c.sess == nil {
		return nil
	}
	return func(method string, params any) bool {
		// The session's unasked stream first: it outlives the call. Else
		// the call's own stream, while the call runs.
		if e.notifySession(c.sess, method, params) {
			return true
		}
		if c.ctx.Err() == nil && c.sink != nil {
			return (&requestNotifier{e: e, rev: c.rev, sink: c.sink}).Notify(method, params)
		}
		return false
	}
}

// notifySession sends a notification on sess's unasked stream (Attach), in
// its revision, reporting whether it has one and the revision has the
// notification.
func (e *Edge) notifySession(sess *Session, method string, params any) bool {
	rev := sess.Revision()
	if rev == "" {
		return false
	}
	for _, l := range e.sessionStreams(sess, false) {
		n := &requestNotifier{e: e, rev: rev, sink: l.sink}
		l.mu.Lock()
		ok := n.Notify(method, params)
		l.mu.Unlock()
		return ok
	}
	return false
}
