package gateway

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/mcpx-dev/mcpx/runtime/server"
)

var _ server.Remover = (*Gateway)(nil)

// removers are the functions OnRemove registered, by registration.
type removers struct {
	mu  sync.Mutex
	n   uint64
	fns map[uint64]func(string)
}

func (g *Gateway) removers() *removers { return &g.removing }

// OnRemove implements [server.Remover]: f is called with an upstream's
// name once Remove has taken it out of every list.
func (g *Gateway) OnRemove(f func(name string)) func() {
	r := g.removers()
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.fns == nil {
		r.fns = map[uint64]func(string){}
	}
	r.n++
	id := r.n
	r.fns[id] = f
	return func() {
		r.mu.Lock()
		delete(r.fns, id)
		r.mu.Unlock()
	}
}

// Remove takes the upstream called name out of the gateway while it
// serves (a config reload drops it): its tools, prompts and resources
// leave the lists at once (clients are told with list_changed), its
// watcher stops, the OnRemove functions are called (the edge ends the
// subscriptions/listen streams that followed it), and then the upstream
// is closed, within CloseTimeout. Calls still running on it fail as
// the upstream closes. Remove fails for a name not added, or after
// Close. The name may be added again once Remove returns.
func (g *Gateway) Remove(name string) error {
	g.mu.Lock()
	if g.closed {
		g.mu.Unlock()
		return fmt.Errorf("gateway: upstream %q removed after Close", name)
	}
	m := g.byName[name]
	if m == nil {
		g.mu.Unlock()
		return fmt.Errorf("gateway: no upstream %q to remove", name)
	}
	g.members = slices.DeleteFunc(g.members, func(x *member) bool { return x == m })
	delete(g.byName, name)
	if g.root == m {
		g.root = nil
	}
	if m.wake != nil { // lazy, never woken: it never will be
		m.wake = nil
		g.sleeping.Add(-1)
	}
	m.stop()
	g.rebuild()
	g.mu.Unlock()

	<-m.watched // stopped by m.stop; a load in progress is cancelled with it
	if m.pending() {
		// Its first load never ended: requests waiting for it stop waiting.
		close(m.ready)
		g.unready.Add(-1)
	}

	r := g.removers()
	r.mu.Lock()
	fns := make([]func(string), 0, len(r.fns))
	for _, f := range r.fns {
		fns = append(fns, f)
	}
	r.mu.Unlock()
	for _, f := range fns {
		f(name)
	}

	done := make(chan error, 1)
	go func() {
		err := m.u.Close()
		if m.pool != nil {
			err = errors.Join(err, m.pool.close())
		}
		done <- err
	}()
	select {
	case err := <-done:
		if err != nil {
			return fmt.Errorf("upstream %q: %w", name, err)
		}
	case <-time.After(CloseTimeout):
		g.log.Warn("gateway: a removed upstream is still closing at the deadline; left to finish", "upstream", name, "deadline", CloseTimeout)
		return fmt.Errorf("upstream %q still closing after %v", name, CloseTimeout)
	}
	g.log.Info("gateway: upstream removed", "upstream", name)
	return nil
}
