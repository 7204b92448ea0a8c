package streamhttp

// Stats is what the endpoint holds at one moment, for metrics.
type Stats struct {
	Sessions int // legacy sessions
	Streams  int // SSE streams open: GET, subscriptions/listen and POST responses streamed
	InFlight int // requests in progress (admitted, not yet answered)
}

// Stats reports what h holds now. It reads the semaphores' lengths and
// takes the sessions' lock only to count them: a scrape's cost, never a
// request's.
func (h *Handler) Stats() Stats {
	h.sessions.mu.Lock()
	n := len(h.sessions.m)
	h.sessions.mu.Unlock()
	return Stats{Sessions: n, Streams: len(h.streams), InFlight: len(h.inFlight)}
}
