package gateway

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/mcpx-dev/mcpx/runtime/server"
)

// PerClient makes an upstream "session: per-client": each client session
// (see [server.ClientSession]: a legacy client's initialized session) gets
// an upstream of its own, made by New at the session's first request
// routed to it and closed when the session ends, after Idle with no
// request, or when the gateway closes. For a stdio server that is a
// process per client session, for an HTTP one a Streamable HTTP session
// per client session: what one client's calls leave in the upstream's
// session stays apart from another's, and a question the upstream asks is
// placed with the one client whose calls run there.
//
// The lists (tools, prompts, resources) and capabilities still come from
// the member's shared upstream, loaded once: they are the same for every
// client, and tools/list stays as cheap as for a shared server. A request
// with no client session (a 2026-07-28 client, which has none by its
// revision: each request stands alone, and a parked call's rounds must
// reach the one upstream call) goes to the shared upstream.
type PerClient struct {
	// New makes one client session's upstream: the same server as the
	// shared one (upstream.New with the same Spec).
	New func() Upstream
	// Max bounds the client sessions with an upstream of their own at
	// once; past it, a new session's request fails (-32603) saying so; the
	// error names the upstream, so the gateway passes it as it is (0:
	// DefaultPerClientMax).
	Max int
	// Idle closes a client session's upstream after this long with no
	// request (0: DefaultPerClientIdle); the session's next request makes
	// a new one, without what the old one kept.
	Idle time.Duration
}

// DefaultPerClientMax and DefaultPerClientIdle are PerClient's defaults.
const (
	DefaultPerClientMax  = 64
	DefaultPerClientIdle = 10 * time.Minute
)

// pool is a member's per-client upstreams, by client session.
type pool struct {
	name string
	pc   PerClient
	log  interface {
		Info(string, ...any)
		Warn(string, ...any)
	}

	mu      sync.Mutex
	m       map[any]*owned
	closed  bool
	closing sync.WaitGroup // upstreams being closed (ended, idle)
}

// owned is one client session's upstream.
type owned struct {
	u      Upstream
	active int       // requests using it now; guarded by pool.mu
	last   time.Time // when the last one ended
	timer  *time.Timer
	stop   chan struct{} // closed when dropped: ends the session watcher
}

func newPool(name string, pc PerClient, g *Gateway) *pool {
	if pc.Max <= 0 {
		pc.Max = DefaultPerClientMax
	}
	if pc.Idle <= 0 {
		pc.Idle = DefaultPerClientIdle
	}
	return &pool{name: name, pc: pc, log: g.log, m: map[any]*owned{}}
}

// upstream is the upstream m's request in ctx goes to, and a release to
// call when the request is done with it.
func (g *Gateway) upstream(ctx context.Context, m *member) (Upstream, func(), error) {
	if m.pool == nil {
		return m.u, func() {}, nil
	}
	id, done, ok := server.ClientSession(ctx)
	if !ok {
		return m.u, func() {}, nil
	}
	return m.pool.get(id, done)
}

func (p *pool) get(id any, done <-chan struct{}) (Upstream, func(), error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return nil, nil, errors.New("gateway: closed")
	}
	o := p.m[id]
	if o == nil {
		select {
		case <-done: // a request racing its session's end: no upstream to leak
			return nil, nil, fmt.Errorf("upstream %q: the client session has ended", p.name)
		default:
		}
		if len(p.m) >= p.pc.Max {
			p.log.Warn("gateway: a per-client server's limit is reached; a client session's request was refused", "upstream", p.name, "max", p.pc.Max)
			return nil, nil, fmt.Errorf("upstream %q: its per-client limit of %d client sessions, each with an upstream session of its own, is reached; try again when one ends", p.name, p.pc.Max)
		}
		o = &owned{u: p.pc.New(), stop: make(chan struct{})}
		p.m[id] = o
		go p.watch(id, o, done)
	}
	if o.timer != nil {
		o.timer.Stop()
		o.timer = nil
	}
	o.active++
	return o.u, func() { p.release(id, o) }, nil
}

// watch drops a session's upstream when the session ends.
func (p *pool) watch(id any, o *owned, done <-chan struct{}) {
	select {
	case <-done:
		p.drop(id, o, "the client session ended")
	case <-o.stop:
	}
}

func (p *pool) release(id any, o *owned) {
	p.mu.Lock()
	defer p.mu.Unlock()
	o.active--
	o.last = time.Now()
	if o.active > 0 || p.m[id] != o {
		return
	}
	o.timer = time.AfterFunc(p.pc.Idle, func() {
		p.mu.Lock()
		idle := p.m[id] == o && o.active == 0 && time.Since(o.last) >= p.pc.Idle
		p.mu.Unlock()
		if idle {
			p.drop(id, o, "idle for "+p.pc.Idle.String())
		}
	})
}

// drop closes o, if it is still id's upstream. A request still using it
// (the session ended under it) fails as a closed upstream does.
func (p *pool) drop(id any, o *owned, why string) {
	p.mu.Lock()
	if p.closed || p.m[id] != o {
		p.mu.Unlock()
		return
	}
	delete(p.m, id)
	if o.timer != nil {
		o.timer.Stop()
	}
	close(o.stop)
	p.closing.Add(1)
	p.mu.Unlock()
	p.log.Info("gateway: a client session's own upstream is closed", "upstream", p.name, "why", why)
	go func() {
		defer p.closing.Done()
		if err := o.u.Close(); err != nil {
			p.log.Warn("gateway: closing a client session's own upstream", "upstream", p.name, "err", err)
		}
	}()
}

// close closes every client session's upstream, in parallel, and waits
// for those being closed already.
func (p *pool) close() error {
	p.mu.Lock()
	p.closed = true
	all := make([]*owned, 0, len(p.m))
	for _, o := range p.m {
		all = append(all, o)
		if o.timer != nil {
			o.timer.Stop()
		}
		close(o.stop)
	}
	clear(p.m)
	p.mu.Unlock()
	errs := make(chan error, len(all))
	for _, o := range all {
		go func() { errs <- o.u.Close() }()
	}
	var out []error
	for range all {
		if err := <-errs; err != nil {
			out = append(out, err)
		}
	}
	p.closing.Wait()
	if err := errors.Join(out...); err != nil {
		return fmt.Errorf("per-client upstreams: %w", err)
	}
	return nil
}

// size is how many client sessions have an upstream of their own (tests).
func (p *pool) size() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.m)
}
