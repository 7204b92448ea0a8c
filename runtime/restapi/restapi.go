// Package restapi is mcpx's small JSON API for people and scripts, under
// /v1 on the same listener as /mcp (behind the same Origin and Host checks
// and the same auth): the servers and their state, the tools, calling a
// tool, reading a task, restarting a server. The API is described by an
// OpenAPI document ([Document], served at /v1/openapi.json), and the same
// OpenAPI machinery that makes tools of any API (package openapi) makes
// tools of this one ([Tools]: mcpx_listServers, ...), so the API and its
// tools cannot drift apart.
package restapi

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"

	"github.com/mcpx-dev/mcpx/generated/mcp"
	"github.com/mcpx-dev/mcpx/runtime/catalog"
	"github.com/mcpx-dev/mcpx/runtime/openapi"
	"github.com/mcpx-dev/mcpx/runtime/server"
)

// Document is the API's OpenAPI 3.1 description.
//
//go:embed openapi.json
var Document []byte

// Server is one namespace as the API reports it.
type Server struct {
	Namespace string `json:"namespace"`
	// Kind is how mcpx reaches it: stdio, http, sse (a server), or
	// openapi, command (tools mcpx makes).
	Kind string `json:"kind"`
	// Revision is the protocol revision it speaks, "" before it answered.
	Revision string `json:"revision,omitempty"`
	// State is idle, starting, up, backing_off or down.
	State     string `json:"state"`
	Tools     int    `json:"tools"`
	LastError string `json:"lastError,omitempty"`
	Restarts  uint64 `json:"restarts"`
}

// Backend is what the API reads and does.
type Backend interface {
	Servers(ctx context.Context) ([]Server, error)
	// Tools are what the request's principal may call.
	Tools(ctx context.Context) ([]mcp.Tool, error)
	CallTool(ctx context.Context, p *mcp.CallToolRequestParams) (*mcp.CallToolResult, error)
	// Task is the task with this id as tasks/get answers it, for the
	// request's principal; ErrNotFound for none.
	Task(ctx context.Context, id string) (json.RawMessage, error)
	Restart(ctx context.Context, namespace string) error
}

// ErrNotFound is a Backend's "no such thing": 404.
var ErrNotFound = errors.New("not found")

// maxBody bounds a request body of the API.
const maxBody = 4 << 20

// Handler serves the API under /v1/.
func Handler(b Backend) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /v1/openapi.json", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write(Document)
	})
	mux.HandleFunc("GET /v1/servers", func(w http.ResponseWriter, r *http.Request) {
		s, err := b.Servers(r.Context())
		reply(w, map[string]any{"servers": s}, err)
	})
	mux.HandleFunc("POST /v1/servers/{namespace}/restart", func(w http.ResponseWriter, r *http.Request) {
		err := b.Restart(r.Context(), r.PathValue("namespace"))
		reply(w, map[string]any{"restarted": r.PathValue("namespace")}, err)
	})
	mux.HandleFunc("GET /v1/tools", func(w http.ResponseWriter, r *http.Request) {
		t, err := b.Tools(r.Context())
		if t == nil {
			t = []mcp.Tool{}
		}
		reply(w, map[string]any{"tools": t}, err)
	})
	mux.HandleFunc("POST /v1/tools/{name}/call", func(w http.ResponseWriter, r *http.Request) {
		var in struct {
			Arguments json.RawMessage `json:"arguments"`
		}
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBody))
		if err == nil && len(body) > 0 {
			err = json.Unmarshal(body, &in)
		}
		if err != nil {
			problem(w, http.StatusBadRequest, "the body must be a JSON object {\"arguments\": {...}}: "+err.Error())
			return
		}
		res, err := b.CallTool(r.Context(), &mcp.CallToolRequestParams{Name: r.PathValue("name"), Arguments: in.Arguments})
		reply(w, res, err)
	})
	mux.HandleFunc("GET /v1/tasks/{id}", func(w http.ResponseWriter, r *http.Request) {
		t, err := b.Task(r.Context(), r.PathValue("id"))
		reply(w, t, err)
	})
	mux.HandleFunc("/v1/", func(w http.ResponseWriter, r *http.Request) {
		problem(w, http.StatusNotFound, fmt.Sprintf("no %s %s in the API; see /v1/openapi.json", r.Method, r.URL.Path))
	})
	return mux
}

// reply writes v as JSON, or err as a problem with the status it calls for.
func reply(w http.ResponseWriter, v any, err error) {
	var ip *server.InvalidParamsError
	switch {
	case errors.Is(err, ErrNotFound), errors.Is(err, server.ErrUnknownTool):
		problem(w, http.StatusNotFound, err.Error())
	case errors.As(err, &ip):
		problem(w, http.StatusBadRequest, err.Error())
	case err != nil:
		problem(w, http.StatusBadGateway, err.Error())
	default:
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(v)
	}
}

// problem writes an RFC 9457 problem document.
func problem(w http.ResponseWriter, status int, detail string) {
	w.Header().Set("Content-Type", "application/problem+json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(map[string]any{"title": http.StatusText(status), "status": status, "detail": detail})
}

// Tools are the API's operations as tools (mcpx_<operation>), made by
// package openapi from [Document]; a call is the API request, made in
// this process to h (the request's context, and so its principal, goes
// with it).
func Tools(ctx context.Context, h http.Handler, log *slog.Logger) (*catalog.Catalog, error) {
	return openapi.Load(ctx, openapi.Source{
		Document:  "mcpx's /v1 API",
		Data:      Document,
		BaseURL:   "http://mcpx.internal",
		Transport: inProcess{h},
	}, log)
}

// inProcess is a RoundTripper that serves each request with a handler.
type inProcess struct{ h http.Handler }

func (p inProcess) RoundTrip(r *http.Request) (*http.Response, error) {
	rec := httptest.NewRecorder()
	p.h.ServeHTTP(rec, r)
	return rec.Result(), nil
}
