package host

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"strings"

	"github.com/mcpx-dev/mcpx/generated/mcp"
	"github.com/mcpx-dev/mcpx/runtime/command"
	"github.com/mcpx-dev/mcpx/runtime/config"
	"github.com/mcpx-dev/mcpx/runtime/discovery"
	"github.com/mcpx-dev/mcpx/runtime/gateway"
	"github.com/mcpx-dev/mcpx/runtime/observe"
	"github.com/mcpx-dev/mcpx/runtime/openapi"
	"github.com/mcpx-dev/mcpx/runtime/requeststate"
	"github.com/mcpx-dev/mcpx/runtime/upstream"
)

// Gateway builds the gateway a config file describes: one upstream client
// per server, each a namespace (and, for a "session": "per-client"
// server, one more per client session: gateway.PerClient). Servers marked eager are started now (a
// failure is logged; the gateway retries it); lazy ones (the default) when
// a client first contacts the gateway (see gateway.Options.Lazy).
// The requestState of the rounds it relays is sealed with the config's
// mcpx.stateKey, else $MCPX_STATE_KEY, else a key of the process's own; a
// bad $MCPX_STATE_KEY is an error saying why (the config's is checked when
// it is read). The caller closes the gateway, which stops every upstream.
func Gateway(ctx context.Context, cfg *config.Config, info mcp.Implementation, log *slog.Logger) (*gateway.Gateway, error) {
	g, _, err := GatewayWith(ctx, cfg, info, log, GatewayOptions{})
	return g, err
}

// GatewayOptions are what [GatewayWith] adds to [Gateway].
type GatewayOptions struct {
	// Observer is told of every call to an upstream (metrics, traces).
	Observer observe.Observer
}

// Upstream is one server of the config, as [GatewayWith] built it.
type Upstream struct {
	Name   string
	Eager  bool
	Client *upstream.Client // the shared one (a per-client server's lists come from it)
}

// GatewayWith is [Gateway], observed as opt says; it also returns the
// upstreams, in the config's order, for readiness and metrics.
func GatewayWith(ctx context.Context, cfg *config.Config, info mcp.Implementation, log *slog.Logger, opt GatewayOptions) (*gateway.Gateway, []Upstream, error) {
	if log == nil {
		log = slog.Default()
	}
	states, src, err := requeststate.Load(cfg.StateKey, lookupEnv)
	if err != nil {
		return nil, nil, fmt.Errorf("the requestState key: %w", err)
	}
	if src == requeststate.FromRandom {
		log.Debug("requestState is sealed under a key of this process's own: rounds do not survive a restart or span replicas (set mcpx.stateKey or " + requeststate.EnvKey + " to share one)")
	}
	g := gateway.New(log)
	g.States = states
	g.ParkTimeout, g.MaxParked = cfg.ParkTimeout, cfg.MaxParked
	if wantsDiscovery(cfg) {
		if err := g.AddFixed(discovery.Catalog(g)); err != nil {
			return nil, nil, err
		}
	}
	var ups []Upstream
	for _, s := range cfg.Servers {
		u, err := addServer(ctx, g, s, info, log, opt.Observer)
		if err != nil {
			g.Close()
			return nil, nil, err
		}
		ups = append(ups, Upstream{Name: s.Name, Eager: s.Eager, Client: u})
	}
	if err := addContributed(ctx, g, cfg, log); err != nil {
		g.Close()
		return nil, nil, err
	}
	return g, ups, nil
}

// addServer adds the upstream server s describes, started now when it is
// eager (a failure is logged; the gateway retries it), its calls told to
// obs (nil: none).
func addServer(ctx context.Context, g *gateway.Gateway, s config.Server, info mcp.Implementation, log *slog.Logger, obs observe.Observer) (*upstream.Client, error) {
	spec := upstream.Spec{
		Name: s.Name, Command: s.Command, Args: s.Args, Env: s.Env, Cwd: s.Cwd,
		URL: s.URL, SSE: s.Transport == "sse", Headers: s.Headers, Timeout: s.Timeout, MaxInFlight: s.MaxInFlight,
		Setup: s.Setup, Observer: obs,
	}
	if o := s.OAuth; o != nil {
		spec.Transport = upstream.CredentialsTransport(upstream.ClientCredentials{
			TokenURL: o.TokenURL, ClientID: o.ClientID, ClientSecret: o.ClientSecret, Scopes: o.Scopes, Resource: o.Resource,
		}, nil)
	}
	u := upstream.New(spec, info, log)
	prefix := s.Prefix
	opt := gateway.Options{Prefix: &prefix, Include: s.Include, Exclude: s.Exclude, Root: s.Root, Lazy: !s.Eager, Hidden: s.Lazy,
		Cache: gateway.Cache{TTLMs: s.CacheTTLMs, Scope: mcp.CacheScope(s.CacheScope), Credentialed: credentialed(s.Headers)}}
	if s.PerClient {
		// Each client session's own upstream is the same server, started
		// on its first request (upstream.New connects on first use).
		opt.PerClient = &gateway.PerClient{
			New: func() gateway.Upstream { return upstream.New(spec, info, log) },
			Max: s.PerClientMax, Idle: s.PerClientIdle,
		}
	}
	if err := g.Add(u, opt); err != nil {
		u.Close()
		return nil, err
	}
	if s.Eager {
		if err := u.Start(ctx); err != nil {
			log.Warn("an eager upstream did not start; mcpx retries it", "upstream", s.Name, "err", err)
		}
	}
	return u, nil
}

// addContributed adds the tools mcpx makes itself, each source a
// namespace as a server is (gateway.Local): the operations of the
// config's OpenAPI documents, then its command tools. A document that
// cannot be read stops the gateway, saying which and why.
func addContributed(ctx context.Context, g *gateway.Gateway, cfg *config.Config, log *slog.Logger) error {
	for _, s := range cfg.OpenAPI {
		if err := addOpenAPI(ctx, g, s, log); err != nil {
			return err
		}
	}
	for _, set := range cfg.Commands {
		if err := addCommands(g, set); err != nil {
			return err
		}
	}
	return nil
}

// addOpenAPI reads the document of s and adds its operations.
func addOpenAPI(ctx context.Context, g *gateway.Gateway, s config.OpenAPISource, log *slog.Logger) error {
	cat, err := openapi.Load(ctx, openapi.Source{
		Document: s.Document, BaseURL: s.BaseURL, Headers: s.Headers,
		Timeout: s.Timeout, MaxResponse: s.MaxResponse,
	}, log.With("namespace", s.Namespace))
	if err != nil {
		return err
	}
	opt := contributedOptions(s.Namespace)
	opt.Hidden = s.Lazy
	return g.Add(gateway.Local(s.Namespace, cat), opt)
}

// addCommands adds the command tools of set.
func addCommands(g *gateway.Gateway, set config.CommandSet) error {
	tools := make([]command.Tool, len(set.Tools))
	for i, t := range set.Tools {
		tools[i] = command.Tool{Name: t.Name, Description: t.Description, Command: t.Command, Args: t.Args,
			InputSchema: t.InputSchema, Timeout: t.Timeout, Cwd: t.Cwd, Env: t.Env, MaxOutput: t.MaxOutput}
	}
	cat, err := command.Catalog(tools)
	if err != nil {
		return fmt.Errorf("mcpx.commands.%s: %w", set.Namespace, err)
	}
	return g.Add(gateway.Local(set.Namespace, cat), contributedOptions(set.Namespace))
}

// wantsDiscovery: mcpx_search, mcpx_describe and mcpx_call are offered
// when a server is lazy (else its tools could not be found), or asked for.
func wantsDiscovery(cfg *config.Config) bool {
	if cfg.Discovery {
		return true
	}
	for _, s := range cfg.Servers {
		if s.Lazy {
			return true
		}
	}
	for _, s := range cfg.OpenAPI {
		if s.Lazy {
			return true
		}
	}
	return false
}

// credentialed reports whether headers carry credentials that may be a
// user's: an Authorization header. Until mcpx has per-user credentials
// of its own to tell (the auth issue), every such server is taken to be
// reached as a user, so its answers are not hinted public (gateway.Cache).
func credentialed(headers map[string]string) bool {
	for k := range headers {
		if strings.EqualFold(k, "Authorization") {
			return true
		}
	}
	return false
}

func contributedOptions(ns string) gateway.Options {
	prefix := ns + "__"
	return gateway.Options{Prefix: &prefix}
}

// lookupEnv reads the environment; a test swaps it.
var lookupEnv = os.LookupEnv
