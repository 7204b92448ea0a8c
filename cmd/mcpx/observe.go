package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"

	"github.com/mcpx-dev/mcpx/runtime/admin"
	"github.com/mcpx-dev/mcpx/runtime/config"
	"github.com/mcpx-dev/mcpx/runtime/gateway"
	"github.com/mcpx-dev/mcpx/runtime/host"
	"github.com/mcpx-dev/mcpx/runtime/metrics"
)

// newLogger is mcpx's own log on w (standard error), as --log-format and
// --log-level say: text or json; debug, info, warn or error.
func newLogger(w io.Writer, format, level string) (*slog.Logger, error) {
	var lv slog.Level
	switch strings.ToLower(level) {
	case "debug":
		lv = slog.LevelDebug
	case "info", "":
		lv = slog.LevelInfo
	case "warn", "warning":
		lv = slog.LevelWarn
	case "error":
		lv = slog.LevelError
	default:
		return nil, fmt.Errorf("--log-level %q: want debug, info, warn or error", level)
	}
	opt := &slog.HandlerOptions{Level: lv}
	switch strings.ToLower(format) {
	case "text", "":
		return slog.New(slog.NewTextHandler(w, opt)), nil
	case "json":
		return slog.New(slog.NewJSONHandler(w, opt)), nil
	}
	return nil, fmt.Errorf("--log-format %q: want text or json", format)
}

// adminListener is `mcpx serve --admin`: the metrics, started before the
// gateway so that /readyz answers (503, starting) while eager upstreams
// start.
type adminListener struct {
	srv *admin.Server
	m   *metrics.Metrics
}

// startAdmin listens at addr; cfg (nil without --config) names the
// namespaces the metrics' labels may take.
func startAdmin(ctx context.Context, addr string, cfg *config.Config, log *slog.Logger) (*adminListener, error) {
	var names []string
	if cfg != nil {
		for _, s := range cfg.Servers {
			names = append(names, s.Name)
		}
	}
	m := metrics.New(names)
	a := &adminListener{srv: admin.New(m.Handler()), m: m}
	bound, errc, err := admin.Serve(ctx, addr, a.srv)
	if err != nil {
		return nil, err
	}
	go func() {
		if err := <-errc; err != nil {
			log.Error("the admin listener stopped", "err", err)
		}
	}()
	log.Info("admin listener: /metrics, /healthz, /readyz, /debug/pprof/", "url", "http://"+bound)
	return a, nil
}

// built is told what the config built: readiness and the upstream
// metrics read the upstreams from now on.
func (a *adminListener) built(g *gateway.Gateway, ups func() []host.Upstream) {
	host.Watch(a.srv, a.m, g, ups)
}

// builtin is told a built-in namespace is served: ready at once.
func (a *adminListener) builtin() {
	a.srv.SetReady(func() admin.Readiness { return admin.Readiness{Ready: true} })
}
