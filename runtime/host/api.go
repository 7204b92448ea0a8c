package host

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	"github.com/mcpx-dev/mcpx/generated/mcp"
	"github.com/mcpx-dev/mcpx/runtime/auth"
	"github.com/mcpx-dev/mcpx/runtime/gateway"
	"github.com/mcpx-dev/mcpx/runtime/restapi"
	"github.com/mcpx-dev/mcpx/runtime/server"
	"github.com/mcpx-dev/mcpx/runtime/tasks"
	"github.com/mcpx-dev/mcpx/runtime/transport/streamhttp"
)

// apiBackend is the /v1 API over a gateway served from a config file:
// tools and calls go through the server (the principal's access rules
// apply), the servers are the Reloader's.
type apiBackend struct {
	srv   *server.Server
	g     *gateway.Gateway
	r     *Reloader
	tasks *tasks.Runner // nil: the edge's own, which the API cannot read
}

func (a *apiBackend) Servers(ctx context.Context) ([]restapi.Server, error) {
	counts := a.g.ToolCounts()
	cfg, ups := a.r.current()
	byName := map[string]Upstream{}
	for _, u := range ups {
		byName[u.Name] = u
	}
	var out []restapi.Server
	sources := byNamespace(cfg)
	for _, ns := range sortedNames(sources) {
		s := restapi.Server{Namespace: ns, Tools: counts[ns], State: "up"}
		src := sources[ns]
		switch {
		case src.openapi != nil:
			s.Kind = "openapi"
		case src.command != nil:
			s.Kind = "command"
		default:
			u, ok := byName[ns]
			if !ok {
				continue
			}
			st := u.Client.Status()
			s.Kind, s.Revision, s.State, s.LastError, s.Restarts = u.Client.Kind(), u.Client.Revision(), st.State, st.Reason, st.Restarts
		}
		out = append(out, s)
	}
	return out, nil
}

func (a *apiBackend) Tools(ctx context.Context) ([]mcp.Tool, error) {
	all, err := a.g.AllTools(ctx)
	if err != nil {
		return nil, err
	}
	acc := a.srv.AccessOf(ctx)
	var out []mcp.Tool
	for _, t := range all {
		if acc == nil || acc.Tool(t.Name) {
			out = append(out, t)
		}
	}
	return out, nil
}

func (a *apiBackend) CallTool(ctx context.Context, p *mcp.CallToolRequestParams) (*mcp.CallToolResult, error) {
	return a.srv.CallTool(ctx, p)
}

// Task is a task of the caller (auth.Owner), as the store holds it; a
// task started on a legacy session belongs to that session and is not
// read here.
func (a *apiBackend) Task(ctx context.Context, id string) (json.RawMessage, error) {
	if a.tasks == nil {
		return nil, fmt.Errorf("%w: task %q", restapi.ErrNotFound, id)
	}
	rec, err := a.tasks.Get(ctx, id, auth.Owner(ctx))
	if errors.Is(err, tasks.ErrNotFound) {
		return nil, fmt.Errorf("%w: task %q", restapi.ErrNotFound, id)
	}
	if err != nil {
		return nil, err
	}
	out := map[string]any{
		"taskId": rec.ID, "status": rec.Status, "createdAt": rec.CreatedAt, "lastUpdatedAt": rec.LastUpdatedAt,
		"ttlMs": rec.TTL.Milliseconds(), "pollIntervalMs": rec.PollInterval.Milliseconds(),
	}
	if rec.StatusMessage != "" {
		out["statusMessage"] = rec.StatusMessage
	}
	if rec.Result != nil {
		out["result"] = rec.Result
	}
	if rec.Error != nil {
		out["error"] = rec.Error
	}
	if len(rec.InputRequests) > 0 {
		out["inputRequests"] = rec.InputRequests
	}
	return json.Marshal(out)
}

func (a *apiBackend) Restart(ctx context.Context, ns string) error {
	err := a.r.Restart(ctx, ns)
	if errors.Is(err, ErrUnknownNamespace) {
		return fmt.Errorf("%w: %v", restapi.ErrNotFound, err)
	}
	return err
}

// serveAPI mounts the /v1 API of a gateway served from a config, behind
// the endpoint's Origin and Host checks and the same auth; with
// c.APITools its operations are also tools of the gateway.
func (c Config) serveAPI(ctx context.Context, srv *server.Server, h *streamhttp.Handler) ([]streamhttp.Mount, error) {
	g, ok := c.NS.(*gateway.Gateway)
	if !ok || c.Reloader == nil {
		return nil, nil
	}
	api := restapi.Handler(&apiBackend{srv: srv, g: g, r: c.Reloader, tasks: c.Tasks.Runner})
	if c.APITools {
		// In process, to the API as it is before the guard and auth: the
		// tool's own request has passed them already, its principal in ctx.
		cat, err := restapi.Tools(ctx, api, c.log())
		if err != nil {
			return nil, err
		}
		if err := g.AddFixed(cat); err != nil {
			return nil, err
		}
	}
	var served http.Handler = api
	if c.Auth != nil {
		served = c.Auth.Middleware(api)
	}
	return []streamhttp.Mount{{Pattern: "/v1/", Handler: h.Guard(served)}}, nil
}
