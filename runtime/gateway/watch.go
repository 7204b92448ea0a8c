package gateway

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/mcpx-dev/mcpx/generated/mcp"
)

// What a load fetches.
type kinds uint8

const (
	kCaps kinds = 1 << iota
	kTools
	kPrompts
	kResources // resources and templates
	kAll       = kCaps | kTools | kPrompts | kResources
)

// The events an Upstream's Changes delivers.
const (
	EventDown = "down"
	EventUp   = "up"
)

func kindsOf(event string) kinds {
	switch event {
	case mcp.MethodNotificationsToolsListChanged:
		return kTools
	case mcp.MethodNotificationsPromptsListChanged:
		return kPrompts
	case mcp.MethodNotificationsResourcesListChanged:
		return kResources
	case EventUp:
		return kAll
	}
	return 0
}

// MaxPages bounds how many pages of one list the gateway reads from an
// upstream: a server whose cursors never end is broken, not large.
const MaxPages = 1000

func (g *Gateway) loadTimeout() time.Duration {
	if g.LoadTimeout > 0 {
		return g.LoadTimeout
	}
	return 30 * time.Second
}

func (g *Gateway) retryBounds() (time.Duration, time.Duration) {
	lo, hi := g.RetryMin, g.RetryMax
	if lo <= 0 {
		lo = time.Second
	}
	if hi <= 0 {
		hi = time.Minute
	}
	return lo, max(lo, hi)
}

// watch loads m, then follows its Changes until Close: list_changed
// reloads that list, "up" loads it all again, and so does "down", at once:
// an upstream that lost its connection fails that load saying why (a
// process that exited, with its status), and that cause, not the bare
// event, is the reason m is down; while m is down it is reloaded with
// backoff.
//
// A lazy member's first load waits for wake to close (nil: it does not
// wait).
func (g *Gateway) watch(m *member, wake <-chan struct{}) {
	defer g.wg.Done()
	defer close(m.watched)
	if wake != nil {
		select {
		case <-wake:
		case <-m.ctx.Done():
			return
		}
	}
	lo, hi := g.retryBounds()
	backoff := lo
	retry := time.NewTimer(time.Hour)
	retry.Stop()
	defer retry.Stop()

	after := func(err error) {
		if err == nil {
			backoff = lo
			retry.Stop()
			return
		}
		retry.Reset(backoff)
		backoff = min(2*backoff, hi)
	}
	after(g.load(m, kAll))
	close(m.ready)
	g.unready.Add(-1)

	changes := m.u.Changes()
	for {
		var want kinds
		var evs []string
		select {
		case <-m.ctx.Done(): // Close, or m removed
			return
		case <-retry.C:
			want = kAll
		case ev, ok := <-changes:
			if !ok {
				return
			}
			// Take every event already waiting, so a burst is one reload.
			evs = []string{ev}
		drain:
			for {
				select {
				case ev, ok := <-changes:
					if !ok {
						break drain
					}
					evs = append(evs, ev)
				default:
					break drain
				}
			}
			for _, ev := range evs {
				switch ev {
				case EventDown, EventUp:
					want = kAll
				default:
					want |= kindsOf(ev)
				}
			}
		}
		if want != 0 {
			g.mu.RLock()
			if m.down || m.caps == nil {
				want = kAll
			}
			g.mu.RUnlock()
			err := g.load(m, want)
			after(err)
			if err == nil {
				g.forward(evs)
			}
		}
	}
}

// load fetches what want names from m and installs it; on failure m is
// down.
func (g *Gateway) load(m *member, want kinds) error {
	// The lists are fetched once for every client (the view, and the
	// edge's list cache per namespace version, are shared), so they are
	// asked with mcpx's own context, never a client's: a 2026-07-28
	// upstream is told the client capabilities mcpx itself has, none
	// (server.RelayedCapabilities is nil here), and cannot tailor a list
	// to one client's capabilities that every other client then gets.
	ctx, cancel := context.WithTimeout(m.ctx, g.loadTimeout())
	defer cancel()

	g.mu.RLock()
	var caps mcp.ServerCapabilities
	if m.caps != nil {
		caps = *m.caps
	}
	g.mu.RUnlock()
	if want&kCaps != 0 {
		c, err := m.u.Capabilities(ctx)
		if err != nil {
			return g.markDown(m, within(m.name, "capabilities", err))
		}
		caps = c
	}

	var (
		tools     []mcp.Tool
		prompts   []mcp.Prompt
		resources []mcp.Resource
		templates []mcp.ResourceTemplate
		hints     [hintLists]ownHint // what the lists said of their caching
		err       error
	)
	if want&kTools != 0 && caps.Tools != nil {
		tools, err = collect(ctx, m.name, "tools/list", func(ctx context.Context, c string) ([]mcp.Tool, string, error) {
			r, err := mcp.ListTools(ctx, m.u, &mcp.PaginatedRequestParams{Cursor: c})
			if err != nil || r == nil {
				return nil, "", orNil(err, "tools/list")
			}
			hints[hintTools].add(r.TTLMs, r.CacheScope)
			return r.Tools, r.NextCursor, nil
		})
		if err != nil {
			return g.markDown(m, err)
		}
		tools = m.filter(tools)
	}
	if want&kPrompts != 0 && caps.Prompts != nil {
		prompts, err = collect(ctx, m.name, "prompts/list", func(ctx context.Context, c string) ([]mcp.Prompt, string, error) {
			r, err := mcp.ListPrompts(ctx, m.u, &mcp.PaginatedRequestParams{Cursor: c})
			if err != nil || r == nil {
				return nil, "", orNil(err, "prompts/list")
			}
			hints[hintPrompts].add(r.TTLMs, r.CacheScope)
			return r.Prompts, r.NextCursor, nil
		})
		if err != nil {
			return g.markDown(m, err)
		}
	}
	if want&kResources != 0 && caps.Resources != nil {
		resources, err = collect(ctx, m.name, "resources/list", func(ctx context.Context, c string) ([]mcp.Resource, string, error) {
			r, err := mcp.ListResources(ctx, m.u, &mcp.PaginatedRequestParams{Cursor: c})
			if err != nil || r == nil {
				return nil, "", orNil(err, "resources/list")
			}
			hints[hintResources].add(r.TTLMs, r.CacheScope)
			return r.Resources, r.NextCursor, nil
		})
		if err != nil {
			return g.markDown(m, err)
		}
		templates, err = collect(ctx, m.name, "resources/templates/list", func(ctx context.Context, c string) ([]mcp.ResourceTemplate, string, error) {
			r, err := mcp.ListResourceTemplates(ctx, m.u, &mcp.PaginatedRequestParams{Cursor: c})
			if err != nil || r == nil {
				return nil, "", orNil(err, "resources/templates/list")
			}
			hints[hintTemplates].add(r.TTLMs, r.CacheScope)
			return r.ResourceTemplates, r.NextCursor, nil
		})
		if err != nil {
			return g.markDown(m, err)
		}
	}

	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed || m.ctx.Err() != nil {
		return nil // closed, or m removed: nothing to install
	}
	wasDown := m.down
	m.down, m.downWhy = false, ""
	m.caps = &caps
	if want&kTools != 0 {
		m.tools = tools
		m.hints[hintTools] = hints[hintTools]
	}
	if want&kPrompts != 0 {
		m.prompts = prompts
		m.hints[hintPrompts] = hints[hintPrompts]
	}
	if want&kResources != 0 {
		m.resources, m.templates = resources, templates
		m.hints[hintResources], m.hints[hintTemplates] = hints[hintResources], hints[hintTemplates]
	}
	g.rebuild()
	if wasDown {
		g.log.Info("gateway: upstream is up again", "upstream", m.name)
	}
	return nil
}

func orNil(err error, method string) error {
	if err != nil {
		return err
	}
	return errors.New("the upstream answered no result")
}

// named reports whether err's text already names the upstream called name
// as its subject (`upstream "x": ...`, `upstream "x" is unavailable ...`),
// as the upstream client's errors do.
func named(name string, err error) bool {
	rest, ok := strings.CutPrefix(err.Error(), fmt.Sprintf("upstream %q", name))
	return ok && (strings.HasPrefix(rest, ":") || strings.HasPrefix(rest, " "))
}

// within puts step (a method, "capabilities") before err unless err
// already names the upstream, and so what it was doing: said once.
func within(name, step string, err error) error {
	if named(name, err) {
		return err
	}
	return fmt.Errorf("%s: %w", step, err)
}

// markDown takes m out of the lists and returns the reason, naming m.
func (g *Gateway) markDown(m *member, why error) error {
	err := fmt.Errorf("upstream %q is down: %w", m.name, why)
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed || m.ctx.Err() != nil {
		return err
	}
	wasDown := m.down
	m.down, m.downWhy = true, why.Error()
	if !wasDown {
		g.log.Warn("gateway: upstream is down; its tools, prompts and resources are withdrawn", "upstream", m.name, "err", why)
		g.rebuild()
	}
	return err
}

// collect follows an upstream list's pagination to its end.
func collect[T any](ctx context.Context, name, method string, list func(context.Context, string) ([]T, string, error)) ([]T, error) {
	var all []T
	seen := map[string]bool{}
	cursor := ""
	for range MaxPages {
		items, next, err := list(ctx, cursor)
		if err != nil {
			return nil, within(name, method, err)
		}
		all = append(all, items...)
		if next == "" {
			return all, nil
		}
		if seen[next] {
			return nil, fmt.Errorf("%s: the upstream returned cursor %q twice", method, next)
		}
		seen[next] = true
		cursor = next
	}
	return nil, fmt.Errorf("%s: more than %d pages", method, MaxPages)
}

// filter applies Include and Exclude to the upstream's tools.
func (m *member) filter(tools []mcp.Tool) []mcp.Tool {
	if m.include == nil && m.exclude == nil {
		return tools
	}
	var out []mcp.Tool
	for _, t := range tools {
		if (m.include == nil || m.include[t.Name]) && !m.exclude[t.Name] {
			out = append(out, t)
		}
	}
	return out
}

// forward passes an upstream's list_changed notifications on once its lists
// are reloaded, whether or not mcpx's merged list differs: the upstream
// said it changed (a description, a schema), and the clients decide.
func (g *Gateway) forward(evs []string) {
	for _, ev := range evs {
		if kindsOf(ev)&(kTools|kPrompts|kResources) != 0 {
			g.signal(ev)
		}
	}
}
