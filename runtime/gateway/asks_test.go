package gateway

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/mcpx-dev/mcpx/generated/mcp"
	"github.com/mcpx-dev/mcpx/runtime/server"
)

// asking is a fake that says how it asks its questions.
type asking struct {
	*fake
	byRequest bool
}

func (a asking) AsksByRequest() bool { return a.byRequest }

// TestOnlyRequestAskersAreParked: a call is made ready to park (its own
// goroutine, context and channels) only for an upstream that may ask by
// request, or cannot say; a modern upstream, which asks through
// input_required, is called directly (BenchmarkInputRound: 16 allocations
// fewer per 2026-07-28 call through the gateway).
func TestOnlyRequestAskersAreParked(t *testing.T) {
	for _, tc := range []struct {
		name string
		u    Upstream
		want bool
	}{
		{"legacy", asking{newFake("l"), true}, true},
		{"modern", asking{newFake("m"), false}, false},
		{"cannot say", newFake("x"), true},
	} {
		if got := asksByRequest(tc.u); got != tc.want {
			t.Errorf("%s: asksByRequest = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// inTasks is a fake that asks its client only within the tasks it makes
// (a modern upstream that declared the tasks extension); call stands for
// its Call.
type inTasks struct {
	*fake
	call func(ctx context.Context, method string, params any) (any, error)
}

func (inTasks) AsksByRequest() bool   { return true }
func (inTasks) AsksInTasksOnly() bool { return true }
func (u inTasks) Call(ctx context.Context, method string, params any) (any, error) {
	return u.call(ctx, method, params)
}

// resultAsker is a 2026-07-28 client's asker: questions go as
// input_required.
type resultAsker struct{}

func (resultAsker) Ask(context.Context, string, any) (any, error) {
	return nil, errors.New("not asked")
}
func (resultAsker) AsksByResult() bool       { return true }
func (resultAsker) MayAsk(string, any) error { return nil }

// TestTaskAskersParkedOnlyForTasks: a 2026-07-28 client's call to an
// upstream that asks only within its tasks is made in the request, not
// parked (its own goroutine, context and channels): the upstream's call
// sees the request's own asker and a TaskParker. When the upstream makes
// the call a task, the follow the parker runs is parked: it sees the
// parked call's asker, which is no ResultAsker, and no parker again, and
// its result answers the request.
func TestTaskAskersParkedOnlyForTasks(t *testing.T) {
	a := resultAsker{}
	var plainSaw, followSaw string
	u := inTasks{fake: newFake("x", "plain", "task")}
	u.call = func(ctx context.Context, method string, params any) (any, error) {
		p, ok := params.(*mcp.CallToolRequestParams)
		if !ok { // the lists
			return u.fake.Call(ctx, method, params)
		}
		asker := func(ctx context.Context) string {
			return fmt.Sprintf("request's asker %v, parker %v", server.AsksByResult(ctx) == server.ResultAsker(a), server.TaskParkerOf(ctx) != nil)
		}
		if p.Name == "plain" {
			plainSaw = asker(ctx)
			return u.fake.Call(ctx, method, params)
		}
		tp := server.TaskParkerOf(ctx)
		if tp == nil {
			return nil, errors.New("the call has no TaskParker")
		}
		return tp.ParkTask(ctx, func(fctx context.Context) (any, error) {
			followSaw = asker(fctx)
			return u.fake.Call(fctx, method, params)
		})
	}
	g, _ := gateway(t, u)
	ctx := server.WithRequest(context.Background(), server.Request{TakesInputRequired: true, Asker: a})
	for _, name := range []string{"x__plain", "x__task"} {
		res, err := g.CallTool(ctx, &mcp.CallToolRequestParams{Name: name})
		if err != nil || text(res) != "x:"+strings.TrimPrefix(name, "x__") {
			t.Fatalf("%s: %v, %v", name, res, err)
		}
	}
	if want := "request's asker true, parker true"; plainSaw != want {
		t.Errorf("a plain call saw %s, want %s (made in the request)", plainSaw, want)
	}
	if want := "request's asker false, parker false"; followSaw != want {
		t.Errorf("a task's follow saw %s, want %s (parked)", followSaw, want)
	}
}

// TestSucceededCallNoErrorTargets: what Forward asks of a call's error
// costs a call that succeeded nothing: the targets errors.As fills escape,
// and were allocated on every call before the error was looked at.
func TestSucceededCallNoErrorTargets(t *testing.T) {
	g, _ := gateway(t, newFake("x", "t"))
	ctx := context.Background()
	n := testing.AllocsPerRun(100, func() {
		if _, ok := g.inputRequired(ctx, nil, mcp.MethodToolsCall, nil, nil); ok {
			t.Fatal("input required without an error")
		}
		if g.missingCapability(ctx, nil, mcp.MethodToolsCall, nil) != nil {
			t.Fatal("a capability missing without an error")
		}
	})
	if n != 0 {
		t.Errorf("%v allocations for a call without an error, want 0", n)
	}
}

// TestRouteToolNoAllocation: finding a tool's upstream and its own name
// costs nothing (the name was returned in an any, a string allocated for
// every call).
func TestRouteToolNoAllocation(t *testing.T) {
	g, _ := gateway(t, newFake("x", "t"))
	cm := mcp.LookupClientMethod(mcp.MethodToolsCall)
	key := mcp.RouteKey{Space: "tool", Value: "x__t"}
	m, own, _, err := g.route(context.Background(), cm, key)
	if err != nil || m == nil || own != "t" {
		t.Fatalf("route: %v, %q, %v", m, own, err)
	}
	if n := testing.AllocsPerRun(100, func() { g.route(context.Background(), cm, key) }); n != 0 {
		t.Errorf("%v allocations, want 0", n)
	}
}
