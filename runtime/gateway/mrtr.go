package gateway

import (
	"context"
	"errors"
	"github.com/mcpx-dev/mcpx/runtime/auth"
	"reflect"

	"github.com/mcpx-dev/mcpx/generated/mcp"
	"github.com/mcpx-dev/mcpx/runtime/edge"
	"github.com/mcpx-dev/mcpx/runtime/requeststate"
	"github.com/mcpx-dev/mcpx/runtime/server"
)

// Bridge 4 (issue 12): a 2026-07-28 upstream's input_required result is
// passed to a 2026-07-28 client, and its retry back to the same upstream.
// The client never sees the upstream's own requestState: it travels inside
// mcpx's (package requeststate), sealed and bound to the method, the
// client's params and the namespace, and is put back on the retry. The
// inputRequests and the client's inputResponses pass as they are, keys
// unchanged: the upstream asked, so it decides what is missing (and asks
// again), what is extra (and ignores it, as the MRTR page says a server
// SHOULD) and what is wrong. Responses that are not InputResponses at all
// never get here: the edge refuses them (-32602) while decoding the params.

// sealer is the gateway's requestState sealer: States, or a random key of
// the process's own when none was set.
func (g *Gateway) sealer() *requeststate.Sealer {
	g.statesOnce.Do(func() {
		if g.States == nil {
			g.States = requeststate.Random()
		}
	})
	return g.States
}

// requestState is the RequestState member of hub params p (a pointer to
// a struct), or an invalid value when its type has none.
func requestState(p any) reflect.Value {
	v := reflect.ValueOf(p)
	if v.Kind() != reflect.Pointer || v.IsNil() || v.Elem().Kind() != reflect.Struct {
		return reflect.Value{}
	}
	f := v.Elem().FieldByName("RequestState")
	if !f.IsValid() || f.Kind() != reflect.String {
		return reflect.Value{}
	}
	return f
}

// resume prepares up, the params for m (a shallow copy of the client's
// params, which are client), for a client's retry: the requestState the
// client echoes is mcpx's, opened for this request and this namespace
// (-32602 with the reason when it does not open), and the upstream gets
// its own requestState back in its place, or none when it had given none.
// A state naming a call parked in mcpx (bridge 2) is returned as parked
// ("id:round", park.go) instead: the upstream gets no retry, the parked
// call gets the answer. The state is opened here only, once per request.
func (g *Gateway) resume(ctx context.Context, method string, client any, m *member, up any) (_ any, parked string, _ error) {
	cs := requestState(client)
	if !cs.IsValid() || cs.String() == "" {
		return up, "", nil
	}
	b, err := requeststate.BindParams(method, client, m.name)
	if err != nil {
		return nil, "", server.InvalidParams("%v", err)
	}
	b.Owner = auth.Owner(ctx)
	p, err := g.sealer().Open(cs.String(), b)
	if err != nil {
		return nil, "", err
	}
	if p.Parked != "" {
		return up, p.Parked, nil
	}
	us := requestState(up)
	if us.Type() != cs.Type() || up == client {
		return nil, "", errors.New("gateway: the upstream's params are not a copy of the client's")
	}
	us.SetString(p.Upstream)
	return up, "", nil
}

// inputRequired turns an upstream's input_required answer (err, from m
// for method with the client's params client) into a
// [*server.InputRequired]: the upstream's questions, and mcpx's sealed
// requestState carrying the upstream's. mcpx mints a state only when the
// upstream gave one: with none, the retry needs nothing of mcpx's (it is
// routed by the params, as the first request was), and the client sends
// none back (the MRTR page: a client MUST NOT include a requestState it
// was not given). Any other error is returned as it is (ok false).
func (g *Gateway) inputRequired(ctx context.Context, m *member, method string, client any, err error) (_ error, ok bool) {
	if err == nil { // before errors.As's target, which escapes
		return nil, false
	}
	var ure *edge.UnrelayedResultError
	if !errors.As(err, &ure) || ure.Input == nil {
		return err, false
	}
	in := ure.Input
	if len(in.InputRequests) == 0 && in.RequestState == "" {
		return fail(m, method, errors.New("the upstream answered input_required with neither inputRequests nor requestState (the MRTR page requires one)")), true
	}
	out := &mcp.InputRequiredResult{Meta: in.Meta, InputRequests: in.InputRequests, ResultType: "input_required"}
	if in.RequestState != "" {
		b, berr := requeststate.BindParams(method, client, m.name)
		if berr != nil {
			return fail(m, method, berr), true
		}
		b.Owner = auth.Owner(ctx)
		out.RequestState, berr = g.sealer().Seal(b, requeststate.Payload{Upstream: in.RequestState}, 0)
		if berr != nil {
			return fail(m, method, berr), true
		}
	}
	return &server.InputRequired{Result: out, Err: fail(m, method, err)}, true
}
