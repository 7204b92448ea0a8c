package gateway

// ParkedNow counts the calls parked now: a legacy upstream's question put to
// a 2026-07-28 client as input_required, the call waiting for the retry
// that brings the answer (park.go). It walks the live calls, taking each
// one's lock briefly: a scrape's cost, not a request's.
func (g *Gateway) ParkedNow() int {
	n := 0
	g.live.Range(func(_, v any) bool {
		pc := v.(*parkedCall)
		pc.mu.Lock()
		if pc.cur == nil {
			n++
		}
		pc.mu.Unlock()
		return true
	})
	return n
}
