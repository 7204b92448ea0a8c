package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"reflect"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpx-dev/mcpx/generated/mcp"
	"github.com/mcpx-dev/mcpx/runtime/requeststate"
	"github.com/mcpx-dev/mcpx/runtime/server"
)

// Options are how one upstream is exposed, from the config.
type Options struct {
	// Prefix goes before the upstream's tool and prompt names: nil means
	// "<name>__", "" none.
	Prefix *string
	// Include, if not empty, keeps only the upstream tools with these
	// names; Exclude then drops the tools with these names. Both are exact
	// upstream tool names (no patterns); a filtered tool is unknown to
	// clients, for listing and calling alike. Prompts are not filtered.
	Include, Exclude []string
	// Root makes the upstream transparent: its tool and prompt names and
	// its URIs pass through unchanged (a Prefix is an error), and a URI that
	// is not mcpx:// is read from it. At most one upstream is the root.
	Root bool
	// Lazy defers the upstream's first load, and so its start, from Add to
	// a client's first contact with the gateway (see Gateway).
	Lazy bool
	// PerClient, if set, gives each client session an upstream of its own
	// (config "session": "per-client"; see [PerClient]); nil shares u.
	PerClient *PerClient
	// Hidden keeps the upstream's tools out of tools/list (config
	// "expose": "lazy"): they are still named and called as the others,
	// and found through [Gateway.AllTools] (mcpx_search).
	Hidden bool
	// Cache hints the upstream's lists and reads for caching where it
	// gives no hints of its own (config "cache"; see [Cache]).
	Cache Cache
}

// Gateway is a [server.Namespace] made of upstream MCP servers, and a
// [server.Versioned] one. Build it with [New], [Gateway.AddFixed] and
// [Gateway.Add]; it is safe for concurrent use, Add included.
//
// Naming. An upstream's tools and prompts are exposed as
// [ExposedName](prefix, name): the prefixed name when it matches
// ^[a-zA-Z0-9_-]{1,64}$, else a readable head and a hash of it (see
// [Shorten]). The root upstream's names pass through unchanged. Its
// resources are exposed as mcpx://<namespace>/<upstream URI>, its
// templates as mcpx://<namespace>/<upstream template>, and so are the URIs
// of resource links and embedded resources in tool results and prompt
// messages and of resources/read contents; completion references are
// mapped back.
//
// Collisions. Names are handed out in a fixed order of precedence: mcpx's
// own (fixed) tools, then the upstreams in the order they were added, each
// upstream's names in sorted order. When a name is already taken, the later
// one is renamed with [disambiguate] (its name, shortened with a hash of the
// upstream and its original name) and a warning names both; only if that
// name is taken too is it dropped, with a warning naming all three. (A name
// an upstream lists twice is the same tool: the second is dropped, with a
// warning.) Nothing is ever shadowed, and the map back from exposed
// name to upstream and original name is exact. Since an upstream that is
// down contributes nothing, a renamed tool gets its plain name while the
// one it collided with is down.
//
// Order. tools/list is the fixed tools in their written order, then every
// contributed tool sorted by exposed name; prompts/list is sorted likewise.
// Resources and templates are listed per upstream in the order added, each
// in the upstream's own order.
//
// Lists are cached per upstream, loaded when it is added (a lazy one: when
// woken, below) and reloaded when
// its Changes reports the matching list_changed, "up", or after it was down
// (retrying with backoff).
//
// First loads. A client is not kept waiting for every upstream: requests
// and Capabilities wait for an upstream's first load for at most FirstWait
// after it was added ([DefaultFirstWait], 2 s), and then answer from the
// upstreams loaded so far. One that is hung or slow (a server still being
// downloaded) joins later: its lists appear with list_changed, which the
// edge declares for every list.
//
// Lazy upstreams ([Options].Lazy) are not loaded, and so not started, when
// added: a client's first contact with the gateway (Capabilities, which
// initialize, server/discover and subscriptions/listen ask for, or any
// request) starts every lazy upstream, and waits for them as above,
// FirstWait from then. A gateway no client uses starts nothing. They do not
// wait for a call routed to them: a client can only call what was listed,
// and it reads the capabilities (which lists there are, completions,
// logging) once, at initialize, so those must be the upstreams' own by
// then. [Gateway.Ready] starts them too.
//
// Until every first load has ended, Capabilities declares tools, prompts
// and resources whatever the loaded upstreams have, so that a client asks
// for, and listens to, the lists a late upstream may fill (they answer
// empty until then).
//
// [Gateway.Version] changes whenever a cached list does. An upstream that
// is down, by its own report or because loading failed, contributes no
// tools, prompts or resources, and requests for its names fail with an
// error naming it.
type Gateway struct {
	// LoadTimeout bounds one load of an upstream's capabilities and lists;
	// 0 means 30s. RetryMin and RetryMax bound the backoff between loads of
	// an upstream that is down; 0 means 1s and 1m. FirstWait bounds how
	// long requests wait for an upstream's first load, from when it was
	// added; 0 means DefaultFirstWait. Set them before Add.
	LoadTimeout, RetryMin, RetryMax, FirstWait time.Duration
	// States seals and opens the requestState of the rounds the gateway
	// relays (mrtr.go); nil means a random key of the process's own. Set
	// it before serving.
	States     *requeststate.Sealer
	statesOnce sync.Once

	// Calls parked while a 2026-07-28 client answers a legacy upstream's
	// question (park.go): ParkTimeout bounds how long one waits for the
	// client's retry (0: DefaultParkTimeout); MaxParked how many may be
	// parked at once (0: DefaultMaxParked); Parked holds their records
	// (nil: in memory). Set them before serving.
	ParkTimeout time.Duration
	MaxParked   int
	Parked      ParkedCalls
	// Replica is this process's id among replicas sharing States' key:
	// a parked call's state names it, and its retry on another replica
	// is relayed here (cluster.go). "" for one process alone.
	Replica  string
	parkOnce sync.Once
	live     sync.Map // parked call id -> *parkedCall

	log    *slog.Logger
	ctx    context.Context // cancelled by Close: stops the watchers
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu         sync.RWMutex
	closed     bool
	members    []*member
	byName     map[string]*member
	root       *member
	fixed      server.Namespace
	fixedTools []mcp.Tool
	fixedCaps  mcp.ServerCapabilities
	view       view
	warned     map[string]bool // collision warnings already logged

	unready       atomic.Int32 // members whose first load has not ended: Ready's fast path
	sleeping      atomic.Int32 // lazy members not woken yet
	version       atomic.Uint64
	changes       chan string   // see Changes
	feeds         changeFeeds   // see FollowChanges (changes.go)
	subs          subscriptions // resource subscriptions (subscriptions.go)
	removing      removers      // see OnRemove (remove.go)
	lastResources [][2]any
}

var (
	_ server.Namespace = (*Gateway)(nil)
	_ server.Versioned = (*Gateway)(nil)
	_ server.Changer   = (*Gateway)(nil)
)

// member is one upstream.
type member struct {
	u                Upstream
	name             string
	prefix           string
	root             bool
	include, exclude map[string]bool
	ready            chan struct{} // closed after the first load, failed or not
	lazy             bool
	hidden           bool          // tools left out of tools/list (Options.Hidden)
	wake             chan struct{} // closed to start a lazy member's first load; nil once closed, or if not lazy (guarded by Gateway.mu)
	since            atomic.Int64  // UnixNano of Add, or of waking a lazy member: requests wait for ready until FirstWait after
	pool             *pool         // per-client upstreams; nil when shared
	cache            Cache         // its caching hints' fallbacks (cache.go)
	ctx              context.Context
	stop             context.CancelFunc // ends ctx: the watcher stops (Close, Remove)
	watched          chan struct{}      // closed when the watcher has returned

	// Guarded by Gateway.mu. Lists hold the upstream's own values (tools
	// already filtered); down keeps them, for naming the upstream in
	// errors, but lists and calls skip them.
	caps      *mcp.ServerCapabilities // last known; nil before the first successful load
	down      bool
	downWhy   string
	tools     []mcp.Tool
	prompts   []mcp.Prompt
	resources []mcp.Resource
	templates []mcp.ResourceTemplate
	hints     [hintLists]ownHint // what its last lists said of their caching (cache.go)
}

// target is where an exposed name goes: m nil is mcpx's own namespace.
type target struct {
	m    *member
	name string // the upstream's own name
}

// view is the merged lists, rebuilt whenever an upstream's lists change.
type view struct {
	tools       []mcp.Tool // what tools/list answers
	all         []mcp.Tool // every tool but the fixed ones, hidden ones too, by name
	hidden      bool       // some tools are hidden
	toolIdx     map[string]target
	prompts     []mcp.Prompt
	promptIdx   map[string]target
	downTools   map[string]*member // names of tools of upstreams that are down
	downPrompts map[string]*member
}

// New returns a gateway with no upstreams, logging to log (nil: the
// default logger).
func New(log *slog.Logger) *Gateway {
	if log == nil {
		log = slog.Default()
	}
	ctx, cancel := context.WithCancel(context.Background())
	g := &Gateway{log: log, ctx: ctx, cancel: cancel, byName: map[string]*member{}, warned: map[string]bool{}, changes: make(chan string, ChangesQueue)}
	g.rebuild()
	return g
}

// AddFixed adds mcpx's own tools, from ns, ahead of every upstream's: they
// come first in tools/list in ns's order (after those of an earlier
// AddFixed) and win every name collision. Only ns's tools are used (its
// tool list is read once, here); calls to them go to ns. Called after Add,
// it hands out the names again, fixed ones first.
func (g *Gateway) AddFixed(ns server.Namespace) error {
	tools, err := ns.ListTools(context.Background())
	if err != nil && !errors.Is(err, server.ErrUnsupported) {
		return fmt.Errorf("gateway: mcpx's own tools: %w", err)
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	set, _ := g.fixed.(*fixedSet)
	if set == nil {
		set = &fixedSet{byName: map[string]server.Namespace{}}
	}
	for _, t := range tools {
		if set.byName[t.Name] != nil {
			return fmt.Errorf("gateway: mcpx's own tool %q is added twice", t.Name)
		}
		set.byName[t.Name] = ns
	}
	g.fixed, g.fixedTools = set, append(slices.Clone(g.fixedTools), tools...)
	g.fixedCaps.Tools = &mcp.ServerCapabilitiesTools{}
	g.rebuild()
	return nil
}

// fixedSet is mcpx's own tools, from every AddFixed: a call goes to the
// namespace its tool came from.
type fixedSet struct {
	server.Namespace // nil: only tools/call is ever routed here
	byName           map[string]server.Namespace
}

func (f *fixedSet) CallTool(ctx context.Context, p *mcp.CallToolRequestParams) (*mcp.CallToolResult, error) {
	ns := f.byName[p.Name]
	if ns == nil {
		return nil, fmt.Errorf("%w: %q", server.ErrUnknownTool, p.Name)
	}
	return ns.CallTool(ctx, p)
}

// Add adds an upstream under its Name. Add only checks the options and
// starts watching u: it loads u's capabilities and lists in the
// background, and lists and Capabilities wait for that first load. From
// then on the gateway owns u: [Gateway.Close] closes it. Add fails, and
// leaves u to the caller, on an empty, malformed or duplicate name, a
// second root, or after Close.
func (g *Gateway) Add(u Upstream, opt Options) error {
	name := u.Name()
	if !validNamespace(name) {
		return fmt.Errorf("gateway: upstream name %q: want letters, digits, '.', '_', '~' or '-'", name)
	}
	m := &member{u: u, name: name, root: opt.Root, ready: make(chan struct{}), lazy: opt.Lazy, hidden: opt.Hidden, cache: opt.Cache}
	if opt.Lazy {
		m.wake = make(chan struct{})
	}
	m.since.Store(time.Now().UnixNano())
	switch {
	case opt.Root && opt.Prefix != nil && *opt.Prefix != "":
		return fmt.Errorf("gateway: upstream %q: a root upstream keeps its names and takes no prefix", name)
	case opt.Root:
	case opt.Prefix == nil:
		m.prefix = name + "__"
	default:
		m.prefix = *opt.Prefix
	}
	m.include, m.exclude = set(opt.Include), set(opt.Exclude)
	if pc := opt.PerClient; pc != nil {
		if pc.New == nil {
			return fmt.Errorf("gateway: upstream %q: per-client without a way to make its upstreams", name)
		}
		m.pool = newPool(name, *pc, g)
	}

	g.mu.Lock()
	defer g.mu.Unlock()
	switch {
	case g.closed:
		return fmt.Errorf("gateway: upstream %q added after Close", name)
	case g.byName[name] != nil:
		return fmt.Errorf("gateway: upstream %q added twice", name)
	case opt.Root && g.root != nil:
		return fmt.Errorf("gateway: upstreams %q and %q are both root; at most one may be", g.root.name, name)
	}
	m.ctx, m.stop = context.WithCancel(g.ctx)
	m.watched = make(chan struct{})
	g.members = append(g.members, m)
	g.unready.Add(1)
	if m.lazy {
		g.sleeping.Add(1)
	}
	g.byName[name] = m
	if opt.Root {
		g.root = m
	}
	g.wg.Add(1)
	go g.watch(m, m.wake)
	g.followUpdates(m) // subscriptions.go
	return nil
}

func validNamespace(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !nameByte(c) && c != '.' && c != '~' {
			return false
		}
	}
	return true
}

func set(names []string) map[string]bool {
	if len(names) == 0 {
		return nil
	}
	s := make(map[string]bool, len(names))
	for _, n := range names {
		s[n] = true
	}
	return s
}

// CloseTimeout bounds [Gateway.Close]: the upstreams are closed all at
// once, and Close returns after at most this long, naming those that had
// not finished closing (a container runtime's stop window is commonly
// 10 s; an upstream process gets 1 s after its input closes, then 2 s
// after SIGTERM, before SIGKILL).
const CloseTimeout = 5 * time.Second

// Close stops watching the upstreams, waits for the watchers to end, and
// closes every upstream, in parallel, within CloseTimeout in all (see
// [Gateway.CloseWithin]).
func (g *Gateway) Close() error { return g.CloseWithin(CloseTimeout) }

// CloseWithin is Close with an overall deadline of d (0: CloseTimeout).
// An upstream whose Close has not returned by then is named in the error
// and left to finish in the background.
func (g *Gateway) CloseWithin(d time.Duration) error {
	if d <= 0 {
		d = CloseTimeout
	}
	g.mu.Lock()
	if g.closed {
		g.mu.Unlock()
		return nil
	}
	g.closed = true
	members := slices.Clone(g.members)
	g.mu.Unlock()
	deadline, stop := context.WithTimeout(context.Background(), d)
	defer stop()
	g.cancel()
	watchers := make(chan struct{})
	go func() { g.wg.Wait(); close(watchers) }()
	var errs []error
	select {
	case <-watchers: // they stop on cancel; then nothing loads an upstream being closed
	case <-deadline.Done():
		errs = append(errs, fmt.Errorf("gateway: watchers still running after %v", d))
	}
	type result struct {
		name string
		err  error
	}
	results := make(chan result, len(members))
	for _, m := range members {
		go func() {
			err := m.u.Close()
			if m.pool != nil {
				err = errors.Join(err, m.pool.close())
			}
			results <- result{m.name, err}
		}()
	}
	done := make(map[string]bool, len(members))
	for range members {
		select {
		case r := <-results:
			done[r.name] = true
			if r.err != nil {
				errs = append(errs, fmt.Errorf("upstream %q: %w", r.name, r.err))
			}
			continue
		case <-deadline.Done():
		}
		var late []string
		for _, m := range members {
			if !done[m.name] {
				late = append(late, m.name)
			}
		}
		g.log.Warn("gateway: upstreams still closing at the deadline; left to finish", "upstreams", late, "deadline", d)
		errs = append(errs, fmt.Errorf("upstreams %q still closing after %v", late, d))
		break
	}
	return errors.Join(errs...)
}

// Version implements [server.Versioned]: it changes whenever a list the
// gateway answers may have changed.
func (g *Gateway) Version() uint64 { return g.version.Load() }

// DefaultFirstWait is how long requests wait, at most, for an upstream's
// first load after it was added, when Gateway.FirstWait is 0: long enough
// for a local server to start and list, short enough for a client's
// initialize (the MCP Inspector gives up after 15 s).
const DefaultFirstWait = 2 * time.Second

func (g *Gateway) firstWait() time.Duration {
	if g.FirstWait > 0 {
		return g.FirstWait
	}
	return DefaultFirstWait
}

// Ready starts the lazy upstreams and waits until every upstream added so
// far has been loaded once (successfully or not), or ctx is done. Requests
// do not wait for this (see settle); tests and callers that want every
// upstream do.
func (g *Gateway) Ready(ctx context.Context) error {
	return g.wait(ctx, false)
}

// settle is what a request, and Capabilities, wait for: it starts the lazy
// upstreams, then waits for each upstream's first load, but for no longer
// than FirstWait after the upstream was added or woken.
func (g *Gateway) settle(ctx context.Context) error {
	return g.wait(ctx, true)
}

func (g *Gateway) wait(ctx context.Context, bounded bool) error {
	if g.unready.Load() == 0 {
		return nil // every call asks: the common answer without a lock
	}
	if g.sleeping.Load() > 0 {
		g.wakeAll()
	}
	g.mu.RLock()
	members := slices.Clone(g.members)
	g.mu.RUnlock()
	for _, m := range members {
		var deadline <-chan time.Time
		if bounded {
			left := time.Until(time.Unix(0, m.since.Load()).Add(g.firstWait()))
			if left <= 0 {
				continue
			}
			t := time.NewTimer(left)
			defer t.Stop()
			deadline = t.C
		}
		select {
		case <-m.ready:
		case <-deadline:
		case <-ctx.Done():
			return ctx.Err()
		case <-g.ctx.Done():
			return errors.New("gateway: closed")
		}
	}
	return nil
}

// wakeAll starts the first load of every lazy member not started yet.
func (g *Gateway) wakeAll() {
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, m := range g.members {
		if m.wake != nil {
			m.since.Store(time.Now().UnixNano())
			close(m.wake)
			m.wake = nil
			g.sleeping.Add(-1)
		}
	}
}

// pending reports whether m's first load has not ended (or, lazy, begun).
func (m *member) pending() bool {
	select {
	case <-m.ready:
		return false
	default:
		return true
	}
}

// Capabilities is the union of what mcpx's own tools and the upstreams
// declared (as last known: an upstream that went down keeps its features
// declared). It waits for the first load of each upstream, for at most
// FirstWait after the upstream was added; while a first load is still
// pending, tools, prompts and resources are declared, since that upstream
// may bring them. listChanged is left false here: the edge declares it
// for every list, because the gateway is a server.Changer and the edge
// delivers its Changes. resources.subscribe is declared when an upstream
// offers it (subscriptions.go).
func (g *Gateway) Capabilities() mcp.ServerCapabilities {
	_ = g.settle(context.Background())
	g.mu.RLock()
	defer g.mu.RUnlock()
	var caps mcp.ServerCapabilities
	no := func() *bool { return mcp.Ptr(false) }
	if g.fixedCaps.Tools != nil && len(g.fixedTools) > 0 {
		caps.Tools = &mcp.ServerCapabilitiesTools{ListChanged: no()}
	}
	for _, m := range g.members {
		c := m.caps
		if c == nil && m.pending() {
			c = &mcp.ServerCapabilities{Tools: &mcp.ServerCapabilitiesTools{}, Prompts: &mcp.ServerCapabilitiesPrompts{}, Resources: &mcp.ServerCapabilitiesResources{}}
		}
		if c == nil {
			continue
		}
		if c.Tools != nil {
			caps.Tools = &mcp.ServerCapabilitiesTools{ListChanged: no()}
		}
		if c.Resources != nil {
			caps.Resources = &mcp.ServerCapabilitiesResources{ListChanged: no()}
		}
		if c.Prompts != nil {
			caps.Prompts = &mcp.ServerCapabilitiesPrompts{ListChanged: no()}
		}
		if c.Completions != nil {
			caps.Completions = json.RawMessage(`{}`)
		}
		if c.Logging != nil {
			caps.Logging = json.RawMessage(`{}`)
		}
	}
	if caps.Resources != nil && g.anySubscriptions() {
		caps.Resources.Subscribe = mcp.Ptr(true)
	}
	return caps
}

// has reports whether any upstream declared the feature f selects, or may
// (its first load has not ended: Capabilities declares every list for it).
// The caller holds g.mu.
func (g *Gateway) has(f func(*mcp.ServerCapabilities) bool) bool {
	for _, m := range g.members {
		if m.caps != nil && f(m.caps) || m.caps == nil && m.pending() {
			return true
		}
	}
	return false
}

func hasTools(c *mcp.ServerCapabilities) bool     { return c.Tools != nil }
func hasResources(c *mcp.ServerCapabilities) bool { return c.Resources != nil }
func hasPrompts(c *mcp.ServerCapabilities) bool   { return c.Prompts != nil }

// rebuild hands out the exposed names again and merges the lists, then
// bumps the version. The caller holds g.mu for writing.
func (g *Gateway) rebuild() {
	v := view{
		toolIdx: map[string]target{}, promptIdx: map[string]target{},
		downTools: map[string]*member{}, downPrompts: map[string]*member{},
	}
	taken := map[string]holder{}
	for _, t := range g.fixedTools {
		v.toolIdx[t.Name] = target{name: t.Name}
		taken[t.Name] = holder{kind: "tool", original: t.Name}
	}
	var tools []mcp.Tool
	var prompts []mcp.Prompt
	for _, m := range g.members {
		if m.down {
			continue
		}
		for _, t := range sortedBy(m.tools, func(t mcp.Tool) string { return t.Name }) {
			if name, ok := g.place(taken, m, "tool", t.Name); ok {
				v.toolIdx[name] = target{m, t.Name}
				t.Name = name
				v.all = append(v.all, t)
				if m.hidden {
					v.hidden = true
				} else {
					tools = append(tools, t)
				}
			}
		}
	}
	clear(taken)
	for _, m := range g.members {
		if m.down {
			continue
		}
		for _, p := range sortedBy(m.prompts, func(p mcp.Prompt) string { return p.Name }) {
			if name, ok := g.place(taken, m, "prompt", p.Name); ok {
				v.promptIdx[name] = target{m, p.Name}
				p.Name = name
				prompts = append(prompts, p)
			}
		}
	}
	for _, m := range g.members {
		if !m.down {
			continue
		}
		for _, t := range m.tools {
			if n := m.expose(t.Name); !inIdx(v.toolIdx, n) && v.downTools[n] == nil {
				v.downTools[n] = m
			}
		}
		for _, p := range m.prompts {
			if n := m.expose(p.Name); !inIdx(v.promptIdx, n) && v.downPrompts[n] == nil {
				v.downPrompts[n] = m
			}
		}
	}
	slices.SortFunc(tools, func(a, b mcp.Tool) int { return strings.Compare(a.Name, b.Name) })
	slices.SortFunc(v.all, func(a, b mcp.Tool) int { return strings.Compare(a.Name, b.Name) })
	slices.SortFunc(prompts, func(a, b mcp.Prompt) int { return strings.Compare(a.Name, b.Name) })
	v.tools = append(slices.Clone(g.fixedTools), tools...)
	v.prompts = prompts
	old := g.view
	g.view = v
	g.version.Add(1)
	// Tell clients only of the lists that did change: a listen filter that
	// asked for tools alone must not hear of a prompt change.
	if !reflect.DeepEqual(old.tools, v.tools) {
		g.signal(mcp.MethodNotificationsToolsListChanged)
	}
	if !reflect.DeepEqual(old.prompts, v.prompts) {
		g.signal(mcp.MethodNotificationsPromptsListChanged)
	}
	if res := g.resourceState(); !reflect.DeepEqual(g.lastResources, res) {
		g.lastResources = res
		g.signal(mcp.MethodNotificationsResourcesListChanged)
	}
}

// resourceState is what resources/list and resources/templates/list
// answer, per upstream, for telling when it changed.
func (g *Gateway) resourceState() [][2]any {
	var out [][2]any
	for _, m := range g.members {
		if !m.down {
			out = append(out, [2]any{m.resources, m.templates})
		}
	}
	return out
}

// Changes implements [server.Changer]: the list_changed notifications for
// the merged lists, sent when an upstream's change (or its going down or
// up) changes what mcpx lists. It is one follower's channel, for one
// consumer; every other follows with [Gateway.FollowChanges] (changes.go).
func (g *Gateway) Changes() <-chan string { return g.changes }

func sortedBy[T any](items []T, key func(T) string) []T {
	out := slices.Clone(items)
	slices.SortStableFunc(out, func(a, b T) int { return strings.Compare(key(a), key(b)) })
	return out
}

// downFor returns the upstream that is down and would own name: the one
// whose last known tools or prompts (idx) had it, or else the one with the
// longest non-empty prefix of it. The caller holds g.mu.
func (g *Gateway) downFor(idx map[string]*member, name string) *member {
	if m := idx[name]; m != nil {
		return m
	}
	var best *member
	for _, m := range g.members {
		if m.down && m.prefix != "" && strings.HasPrefix(name, m.prefix) && (best == nil || len(m.prefix) > len(best.prefix)) {
			best = m
		}
	}
	return best
}

func inIdx(idx map[string]target, name string) bool { _, ok := idx[name]; return ok }

func quote(s string) string { return fmt.Sprintf("%q", s) }

// expose is the name m's tool or prompt called name would have, were there
// no collisions.
func (m *member) expose(name string) string {
	if m.root {
		return name
	}
	return ExposedName(m.prefix, name)
}

// place hands out the exposed name for m's tool or prompt original, and
// records it in taken; see Gateway for the policy.
func (g *Gateway) place(taken map[string]holder, m *member, kind, original string) (string, bool) {
	me := holder{m, kind, original}
	name := m.expose(original)
	prev, clash := taken[name]
	if clash && prev == me {
		g.warnOnce("upstream listed a name twice: dropped the second", "upstream", m.name, "kind", kind, "name", original)
		return "", false
	}
	if !clash {
		taken[name] = me
		return name, true
	}
	alt := disambiguate(name, m.name, original)
	if prev2, clash2 := taken[alt]; clash2 {
		g.warnOnce("exposed name collision: dropped", "name", name, "kept", prev.String(), "also", prev2.String(), "dropped", me.String())
		return "", false
	}
	taken[alt] = me
	g.warnOnce("exposed name collision: renamed the later one", "name", name, "kept", prev.String(), "renamed", me.String(), "as", alt)
	return alt, true
}

// holder is what holds an exposed name while rebuild places them: an
// upstream's tool or prompt, or (m nil) one of mcpx's own tools. Its text
// is made only for a warning, not for every name placed.
type holder struct {
	m        *member
	kind     string
	original string
}

func (h holder) String() string {
	if h.m == nil {
		return "mcpx's own tool " + quote(h.original)
	}
	return fmt.Sprintf("upstream %q %s %q", h.m.name, h.kind, h.original)
}

// warnOnce logs a collision the first time it is found; the caller holds
// g.mu.
func (g *Gateway) warnOnce(msg string, args ...any) {
	key := fmt.Sprint(append([]any{msg}, args...)...)
	if g.warned[key] {
		return
	}
	g.warned[key] = true
	g.log.Warn("gateway: "+msg, args...)
}
