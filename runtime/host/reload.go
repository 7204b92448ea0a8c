package host

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sync"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/mcpx-dev/mcpx/generated/mcp"
	"github.com/mcpx-dev/mcpx/runtime/config"
	"github.com/mcpx-dev/mcpx/runtime/gateway"
	"github.com/mcpx-dev/mcpx/runtime/observe"
	"github.com/mcpx-dev/mcpx/runtime/upstream"
)

// Reloader applies a changed config file to a running gateway: servers
// added start, servers removed stop (gateway.Remove: their calls in
// flight fail as they close, their listens end), servers changed restart,
// and the rest (unchanged upstreams, client sessions, held streams,
// parked questions) carry on. Clients hear list_changed where their
// revision allows, as for any upstream's change. A file that does not
// check is logged with the message `mcpx config check` gives, and the
// running config stays.
//
// What the gateway as a whole was started with (mcpx.stateKey, auth,
// access, discovery) stays until a restart; a reload that changes it says
// so in the log.
type Reloader struct {
	Path string
	G    *gateway.Gateway
	Info mcp.Implementation
	Log  *slog.Logger
	// Observer is told of the calls to the upstreams a reload adds.
	Observer observe.Observer
	// Named, when set, is told the namespaces of every config applied,
	// before their servers start (the metrics' labels follow a reload).
	Named func(namespaces []string)

	mu  sync.Mutex
	cur *config.Config
	ups []Upstream // the config's servers as they run now
}

// NewReloader returns a Reloader of the gateway GatewayWith started from
// cfg, read from path, with the upstreams it returned.
func NewReloader(path string, g *gateway.Gateway, cfg *config.Config, ups []Upstream, info mcp.Implementation, log *slog.Logger) *Reloader {
	if log == nil {
		log = slog.Default()
	}
	return &Reloader{Path: path, G: g, Info: info, Log: log, cur: cfg, ups: slices.Clone(ups)}
}

// Upstreams are the config's servers as they run now, for readiness and
// Namespaces returns the namespaces of the config applied now, sorted:
// its servers' and its contributed tools'.
func (r *Reloader) Namespaces() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return sortedNames(byNamespace(r.cur))
}

// metrics.
func (r *Reloader) Upstreams() []Upstream {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.ups)
}

// ErrUnknownNamespace: Restart of a namespace the config does not name.
var ErrUnknownNamespace = errors.New("no such namespace in the config")

// current is the config and the upstreams as they run now.
func (r *Reloader) current() (*config.Config, []Upstream) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.cur, slices.Clone(r.ups)
}

// Restart stops the namespace's source and starts it again from the
// running config (an OpenAPI document is read again).
func (r *Reloader) Restart(ctx context.Context, ns string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	src, ok := byNamespace(r.cur)[ns]
	if !ok {
		return fmt.Errorf("%w: %q", ErrUnknownNamespace, ns)
	}
	if err := r.G.Remove(ns); err != nil {
		return err
	}
	r.ups = slices.DeleteFunc(r.ups, func(u Upstream) bool { return u.Name == ns })
	u, err := src.add(ctx, r.G, r.Info, r.Log, r.Observer)
	if err != nil {
		r.Log.Error("a restarted server could not be added again", "namespace", ns, "err", err)
		return err
	}
	if u != nil {
		r.ups = append(r.ups, Upstream{Name: ns, Eager: src.server.Eager, Client: u})
	}
	r.Log.Info("restarted", "namespace", ns)
	return nil
}

// Change is what a reload did, by namespace.
type Change struct {
	Added, Removed, Restarted []string
}

// Reload reads the file again and applies what changed. An error means
// the file was refused and nothing changed, or (errors.Join) the servers
// that could not be added.
func (r *Reloader) Reload(ctx context.Context) (Change, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	next, err := config.Load(r.Path)
	if err != nil {
		r.Log.Error("the config file was not reloaded; the running config stays", "file", r.Path, "problems", err.Error())
		return Change{}, err
	}
	var ch Change
	var errs []error
	old, cur := byNamespace(r.cur), byNamespace(next)
	for _, ns := range sortedNames(old) {
		o := old[ns]
		n, kept := cur[ns]
		switch {
		case !kept:
			ch.Removed = append(ch.Removed, ns)
		case reflect.DeepEqual(o, n) && !o.rereads():
			continue
		default:
			ch.Restarted = append(ch.Restarted, ns)
		}
		if err := r.G.Remove(ns); err != nil {
			errs = append(errs, err)
		}
		r.ups = slices.DeleteFunc(r.ups, func(u Upstream) bool { return u.Name == ns })
	}
	for _, ns := range sortedNames(cur) {
		if _, had := old[ns]; !had {
			ch.Added = append(ch.Added, ns)
		}
	}
	if r.Named != nil {
		r.Named(sortedNames(cur))
	}
	for _, ns := range append(append([]string(nil), ch.Restarted...), ch.Added...) {
		src := cur[ns]
		u, err := src.add(ctx, r.G, r.Info, r.Log, r.Observer)
		if err != nil {
			r.Log.Error("a server of the reloaded config could not be added", "namespace", ns, "err", err)
			errs = append(errs, fmt.Errorf("%s: %w", ns, err))
			continue
		}
		if u != nil {
			r.ups = append(r.ups, Upstream{Name: ns, Eager: src.server.Eager, Client: u})
		}
	}
	r.warnFixed(next)
	r.cur = next
	r.Log.Info("config reloaded", "file", r.Path, "added", ch.Added, "removed", ch.Removed, "restarted", ch.Restarted)
	return ch, errors.Join(errs...)
}

// warnFixed says which settings of the gateway as a whole changed and
// wait for a restart.
func (r *Reloader) warnFixed(next *config.Config) {
	for name, same := range map[string]bool{
		"mcpx.stateKey":    r.cur.StateKey == next.StateKey,
		"mcpx.auth":        reflect.DeepEqual(r.cur.Auth, next.Auth),
		"mcpx.access":      reflect.DeepEqual(r.cur.Access, next.Access),
		"mcpx.discovery":   r.cur.Discovery == next.Discovery && wantsDiscovery(r.cur) == wantsDiscovery(next),
		"mcpx.parkTimeout": r.cur.ParkTimeout == next.ParkTimeout,
		"mcpx.maxParked":   r.cur.MaxParked == next.MaxParked,
	} {
		if !same {
			r.Log.Warn("a setting changed in the config file takes effect when mcpx restarts", "setting", name)
		}
	}
}

// source is one namespace of a config: a server, an OpenAPI document or a
// command set.
type source struct {
	server  *config.Server
	openapi *config.OpenAPISource
	command *config.CommandSet
}

// rereads: an OpenAPI document is read again on every reload, since it
// may have changed behind an unchanged config.
func (s source) rereads() bool { return s.openapi != nil }

// add adds the source to g; for a server, it returns its client.
func (s source) add(ctx context.Context, g *gateway.Gateway, info mcp.Implementation, log *slog.Logger, obs observe.Observer) (*upstream.Client, error) {
	switch {
	case s.server != nil:
		return addServer(ctx, g, *s.server, info, log, obs)
	case s.openapi != nil:
		return nil, addOpenAPI(ctx, g, *s.openapi, log)
	default:
		return nil, addCommands(g, *s.command)
	}
}

func byNamespace(c *config.Config) map[string]source {
	m := map[string]source{}
	for i := range c.Servers {
		m[c.Servers[i].Name] = source{server: &c.Servers[i]}
	}
	for i := range c.OpenAPI {
		m[c.OpenAPI[i].Namespace] = source{openapi: &c.OpenAPI[i]}
	}
	for i := range c.Commands {
		m[c.Commands[i].Namespace] = source{command: &c.Commands[i]}
	}
	return m
}

func sortedNames(m map[string]source) []string {
	names := make([]string, 0, len(m))
	for k := range m {
		names = append(names, k)
	}
	slices.Sort(names)
	return names
}

// watchDebounce gathers the events of one save (editors write, rename and
// chmod in a burst) into one reload.
const watchDebounce = 200 * time.Millisecond

// Watch reloads when the file changes, until ctx is done. It watches the
// file's directory, so a file replaced by rename (as editors save) is
// seen too.
func (r *Reloader) Watch(ctx context.Context) error {
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return err
	}
	defer w.Close()
	abs, err := filepath.Abs(r.Path)
	if err != nil {
		return err
	}
	if err := w.Add(filepath.Dir(abs)); err != nil {
		return fmt.Errorf("watching %s: %w", filepath.Dir(abs), err)
	}
	var timer *time.Timer
	fire := make(chan struct{}, 1)
	for {
		select {
		case <-ctx.Done():
			if timer != nil {
				timer.Stop()
			}
			return nil
		case ev := <-w.Events:
			if filepath.Clean(ev.Name) != abs || ev.Op == fsnotify.Chmod {
				continue
			}
			if timer == nil {
				timer = time.AfterFunc(watchDebounce, func() {
					select {
					case fire <- struct{}{}:
					default:
					}
				})
			} else {
				timer.Reset(watchDebounce)
			}
		case err := <-w.Errors:
			r.Log.Warn("watching the config file", "file", r.Path, "err", err)
		case <-fire:
			if _, err := os.Stat(abs); err != nil {
				continue // removed, or between a rename's two halves
			}
			r.Reload(ctx)
		}
	}
}
