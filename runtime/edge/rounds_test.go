package edge_test

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/mcpx-dev/mcpx/generated/mcp"
	"github.com/mcpx-dev/mcpx/runtime/edge"
	"github.com/mcpx-dev/mcpx/runtime/server"
)

// roundsNS is a namespace of its own (no gateway) that asks through
// input_required: its tool "name" answers [*server.InputRequired] with
// one elicitation under key "who" and requestState "own", until the
// request carries both back; it records the params of every request.
type roundsNS struct {
	fakeNS
	mu   sync.Mutex
	seen []mcp.CallToolRequestParams
}

func (n *roundsNS) CallTool(_ context.Context, p *mcp.CallToolRequestParams) (*mcp.CallToolResult, error) {
	n.mu.Lock()
	n.seen = append(n.seen, *p)
	n.mu.Unlock()
	if r, ok := p.InputResponses["who"].Value.(*mcp.ElicitResult); ok && p.RequestState == "own" {
		return &mcp.CallToolResult{Content: []mcp.ContentBlock{{Value: &mcp.TextContent{Text: "hi " + string(r.Content)}}}}, nil
	}
	return nil, &server.InputRequired{
		Result: &mcp.InputRequiredResult{RequestState: "own", InputRequests: map[string]mcp.InputRequest{
			"who": {Value: &mcp.ElicitRequest{Params: mcp.ElicitRequestParams{Value: &mcp.ElicitRequestFormParams{Message: "Who?", RequestedSchema: askSchema}}}},
		}},
		Err: errors.New("input required"),
	}
}

// TestInputRoundsOwnNamespace: bridge 3 is the edge's, not the gateway's:
// a namespace's own InputRequired is asked of a legacy client through the
// call's sink and the request retried with the answer under the key asked
// and the namespace's requestState; the client's own params are not
// changed by the retry.
func TestInputRoundsOwnNamespace(t *testing.T) {
	a := newAsking(t, "2025-11-25", allCaps, 0)
	ns := &roundsNS{}
	a.e = &edge.Edge{Server: &server.Server{NS: ns, Info: mcp.Implementation{Name: "mcpx-test", Version: "1"}}}
	done := a.call(context.Background(), 5, "name", true)
	q := a.question()
	if q.Method != mcp.MethodElicitationCreate || !strings.Contains(string(q.Params), `"message":"Who?"`) {
		t.Fatalf("the client was asked %s %s", q.Method, q.Params)
	}
	a.answer(q.ID, `{"action":"accept","content":{"name":"Ada"}}`)
	r := wait(t, done)
	if r.Msg == nil || r.Msg.Error != nil || !strings.Contains(string(r.Msg.Result), `hi {\"name\":\"Ada\"}`) {
		t.Fatalf("the call answered %+v", r.Msg)
	}
	if strings.Contains(string(r.Msg.Result), "own") {
		t.Errorf("the client's result carries the namespace's state: %s", r.Msg.Result)
	}
	ns.mu.Lock()
	defer ns.mu.Unlock()
	if len(ns.seen) != 2 || ns.seen[0].RequestState != "" || len(ns.seen[0].InputResponses) != 0 || ns.seen[1].RequestState != "own" {
		b, _ := json.Marshal(ns.seen)
		t.Errorf("the namespace saw %s, want the call, then the retry with its state", b)
	}
}

// TestInputRoundRefusalLogged: a round the legacy client cannot take (it
// declared no elicitation) fails the call, and mcpx's own log says which
// question went unasked and why, naming the client.
func TestInputRoundRefusalLogged(t *testing.T) {
	a := newAsking(t, "2025-11-25", `{}`, 0)
	var logs strings.Builder
	var mu sync.Mutex
	a.e = &edge.Edge{Server: &server.Server{NS: &roundsNS{}, Info: mcp.Implementation{Name: "mcpx-test", Version: "1"}},
		Log: slog.New(slog.NewTextHandler(lockedWriter{&mu, &logs}, nil))}
	r := wait(t, a.call(context.Background(), 5, "name", true))
	if r.Msg == nil || r.Msg.Error == nil {
		t.Fatalf("the call answered %+v, want an error", r.Msg)
	}
	mu.Lock()
	defer mu.Unlock()
	for _, want := range []string{"not put to the legacy client", "key=who", "method=elicitation/create", "asked-client"} {
		if !strings.Contains(logs.String(), want) {
			t.Errorf("mcpx's log lacks %q:\n%s", want, logs.String())
		}
	}
}

// lockedWriter serializes writes to w.
type lockedWriter struct {
	mu *sync.Mutex
	w  *strings.Builder
}

func (l lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
