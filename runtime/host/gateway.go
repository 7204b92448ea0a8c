package host

import (
	"context"
	"log/slog"

	"github.com/mcpx-dev/mcpx/generated/mcp"
	"github.com/mcpx-dev/mcpx/runtime/config"
	"github.com/mcpx-dev/mcpx/runtime/gateway"
	"github.com/mcpx-dev/mcpx/runtime/upstream"
)

// Gateway builds the gateway a config file describes: one upstream client
// per server, each a namespace. Servers marked eager are started now (a
// failure is logged; the gateway retries it); lazy ones (the default) when
// a client first contacts the gateway (see gateway.Options.Lazy).
// The caller closes the gateway, which stops every upstream.
func Gateway(ctx context.Context, cfg *config.Config, info mcp.Implementation, log *slog.Logger) (*gateway.Gateway, error) {
	if log == nil {
		log = slog.Default()
	}
	g := gateway.New(log)
	for _, s := range cfg.Servers {
		u := upstream.New(upstream.Spec{
			Name: s.Name, Command: s.Command, Args: s.Args, Env: s.Env, Cwd: s.Cwd,
			URL: s.URL, Headers: s.Headers, Timeout: s.Timeout, MaxInFlight: s.MaxInFlight,
			Setup: s.Setup,
		}, info, log)
		prefix := s.Prefix
		if err := g.Add(u, gateway.Options{Prefix: &prefix, Include: s.Include, Exclude: s.Exclude, Root: s.Root, Lazy: !s.Eager}); err != nil {
			u.Close()
			g.Close()
			return nil, err
		}
		if s.Eager {
			if err := u.Start(ctx); err != nil {
				log.Warn("an eager upstream did not start; mcpx retries it", "upstream", s.Name, "err", err)
			}
		}
	}
	return g, nil
}
