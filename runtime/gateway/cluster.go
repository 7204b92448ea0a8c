package gateway

import (
	"context"
	"errors"
	"strings"

	"github.com/mcpx-dev/mcpx/runtime/server"
)

// Replicas (issue 19). A call parked for a 2026-07-28 client's answer
// (bridge 2) lives in the process that made it: its goroutine waits for
// the upstream, the upstream's question for its answer. Its id names the
// replica ("<replica>.<random>", sealed in the requestState as before), so
// a retry that the load balancer sends to another replica is answered
// there with a [server.Elsewhere] naming the holder, which the edge relays
// the retry to over the cluster bus; the holder answers it as if it had
// come to it. A list change one replica hears is told to the others
// (edge Peers), each re-reading that list from its own upstreams first
// (Refresh).

// parkIDFor is a fresh parked call id, naming g's replica when it has one.
func (g *Gateway) parkIDFor() string {
	if g.Replica == "" {
		return parkID()
	}
	return g.Replica + "." + parkID()
}

// replicaOf is the replica a parked call id names, "" for none.
func replicaOf(id string) string {
	r, _, ok := strings.Cut(id, ".")
	if !ok {
		return ""
	}
	return r
}

// elsewhere is a *server.Elsewhere when parked ("id:round", resume) names
// a call parked on another replica; nil when it is this one's, or none.
func (g *Gateway) elsewhere(parked string) error {
	if parked == "" {
		return nil
	}
	id, _, ok, err := parkedCallOf(parked)
	if err != nil || !ok {
		return nil // call() says what is wrong with it
	}
	if r := replicaOf(id); r != "" && r != g.Replica {
		return &server.Elsewhere{Replica: r}
	}
	return nil
}

// Refresh reads the list a list_changed method names again from every
// upstream that is up, without passing the change on: it was heard on
// another replica, whose edge told this one's (server.Refresher).
func (g *Gateway) Refresh(ctx context.Context, method string) error {
	k := kindsOf(method)
	if k&(kTools|kPrompts|kResources) == 0 {
		return nil
	}
	g.mu.RLock()
	var ms []*member
	for _, m := range g.members {
		if m.caps != nil && !m.down {
			ms = append(ms, m)
		}
	}
	g.mu.RUnlock()
	var errs []error
	for _, m := range ms {
		if ctx.Err() != nil {
			break
		}
		if err := g.load(m, k); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

var _ server.Refresher = (*Gateway)(nil)
