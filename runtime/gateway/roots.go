package gateway

// RootsChanged is server.RootsWatcher: a legacy client's
// notifications/roots/list_changed goes to every upstream that can take
// it (upstream.Client), each deciding whether that client's calls used it
// and whether its revision has the notification (see upstream/roots.go
// for why only those).
func (g *Gateway) RootsChanged(client uint64) {
	g.mu.RLock()
	var us []Upstream
	for _, m := range g.members {
		us = append(us, m.u)
	}
	g.mu.RUnlock()
	for _, u := range us {
		if w, ok := u.(interface{ RootsChanged(uint64) }); ok {
			w.RootsChanged(client)
		}
	}
}
