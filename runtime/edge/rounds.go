package edge

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"

	"github.com/mcpx-dev/mcpx/generated/mcp"
	"github.com/mcpx-dev/mcpx/runtime/jsonrpc"
	"github.com/mcpx-dev/mcpx/runtime/requeststate"
	"github.com/mcpx-dev/mcpx/runtime/server"
)

// Bridge 3 (issue 12): a namespace answers a legacy client's tools/call,
// prompts/get or resources/read with input_required (a
// [*server.InputRequired]: a 2026-07-28 upstream's, through the gateway,
// or a namespace's own). A legacy client has no such result, so mcpx
// plays the 2026-07-28 client's part itself: it puts each inputRequests
// entry to the client as a server-to-client request (bridge 1's asker, on
// the call's stream, in the client's revision, with its capability and
// content checks), and retries the request through the namespace with the
// answers as inputResponses, keyed as asked, and the requestState the
// namespace gave, unchanged, round after round, until a complete result,
// which the client gets as usual. The client never sees inputRequests or
// requestState.
//
// Which bridge answers an input_required is decided in one place,
// Edge.inputRequired (mrtr.go): a client whose revision has
// InputRequiredResult gets the result (bridge 4), a legacy client gets
// the rounds (bridge 3, here).
//
// The questions of one round are asked one after another, in the order
// of their keys, not at once: a person answers them, and a client shows
// one dialog at a time; a session holds at most MaxPendingAsks questions,
// which a round of many asked at once would exceed; and a question that
// fails ends the call without the rest being asked. Before the first is
// sent, every question of the round is checked (declared capability,
// content the client's revision can carry), so that a round the client
// cannot complete asks it nothing.

// MaxInputRounds is how many input_required rounds mcpx relays to a
// legacy client for one request: the questions asked and the request
// retried. An answer that is input_required again after that many
// retries ends the call with -32603 saying so: a namespace that never
// stops asking must not hold a client forever.
const MaxInputRounds = 16

// inputRounds answers a legacy client's call whose namespace asked for
// input (ir), by rounds of questions and retries; see above.
func (e *Edge) inputRounds(c *call, method string, ir *server.InputRequired) (any, error) {
	ctx := e.handlerContext(c, method)
	a := &asker{e: e, c: c}
	for round := 1; round <= MaxInputRounds; round++ {
		answers, err := e.answerRound(ctx, a, ir.Result.InputRequests)
		if err != nil {
			return nil, err
		}
		params, err := withInput(c.params, answers, ir.Result.RequestState)
		if err != nil {
			return nil, err
		}
		r, err := e.Server.Handle(ctx, method, params)
		var next *server.InputRequired
		switch {
		case errors.As(err, &next) && next.Result != nil:
			ir = next
			continue
		case errors.As(err, new(*requeststate.Error)):
			// The state mcpx echoed did not open: mcpx's own failure (the
			// answers took longer than the state lives, or the tool moved
			// to another namespace meanwhile), not the client's params.
			return nil, jsonrpc.Errorf(jsonrpc.InternalError, nil, "%s: the request could not be resumed after round %d of questions: %v", method, round, err)
		case err == nil && r == nil:
			return nil, jsonrpc.Errorf(jsonrpc.InternalError, nil, "method %s: no result", jsonrpc.Quote(method))
		}
		return r, err
	}
	return nil, jsonrpc.Errorf(jsonrpc.InternalError, nil, "%s: the server still asked for input after %d rounds of questions; mcpx relays at most %d to a %s client", method, MaxInputRounds, MaxInputRounds, c.rev)
}

// answerRound puts a round's questions to the client, checked first, one
// after another in key order, and returns the answers keyed as asked. A
// question the client cannot take, or answers with an error, fails the
// round with that error.
func (e *Edge) answerRound(ctx context.Context, a *asker, reqs map[string]mcp.InputRequest) (map[string]mcp.InputResponse, error) {
	keys := make([]string, 0, len(reqs))
	for k := range reqs {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	asks := make(map[string]question, len(reqs))
	for _, k := range keys {
		q, err := questionOf(reqs[k])
		if err != nil {
			return nil, jsonrpc.Errorf(jsonrpc.InternalError, nil, "input request %s: %v", jsonrpc.Quote(k), err)
		}
		if err := a.check(q.method, q.params); err != nil {
			// The client gets the error; the operator learns why its
			// namespace's question went unasked (err names the client).
			e.log().Warn("a question of the namespace not put to the legacy client", "key", jsonrpc.Clip(k), "method", q.method, "why", err)
			return nil, unanswered(k, err)
		}
		asks[k] = q
	}
	answers := make(map[string]mcp.InputResponse, len(keys))
	for _, k := range keys {
		q := asks[k]
		res, err := a.Ask(ctx, q.method, q.params)
		if err != nil {
			return nil, unanswered(k, err)
		}
		v, ok := res.(mcp.InputResponseValue)
		if !ok {
			return nil, jsonrpc.Errorf(jsonrpc.InternalError, nil, "the client's answer to %s is a %T, which is no input response", q.method, res)
		}
		answers[k] = mcp.InputResponse{Value: v}
	}
	return answers, nil
}

// unanswered is the error a call fails with when its question key was
// not answered: bridge 1's error (or the client's own), its code and
// data kept, its message saying that the request needed that answer. A
// context's error passes as it is.
func unanswered(key string, err error) error {
	var je *jsonrpc.Error
	if !errors.As(err, &je) {
		return err
	}
	return &jsonrpc.Error{Code: je.Code, Data: je.Data, Message: fmt.Sprintf("the request needs the client's answer to input request %s, which it cannot get: %s", jsonrpc.Quote(key), je.Message)}
}

// question is one inputRequests entry as a server-to-client request:
// its method and hub params.
type question struct {
	method string
	params any
}

func questionOf(r mcp.InputRequest) (question, error) {
	switch q := r.Value.(type) {
	case *mcp.ElicitRequest:
		p := q.Params
		return question{mcp.MethodElicitationCreate, &p}, nil
	case *mcp.CreateMessageRequest:
		p := q.Params
		return question{mcp.MethodSamplingCreateMessage, &p}, nil
	case *mcp.ListRootsRequest:
		// A legacy roots/list takes the plain request params.
		p := &mcp.RequestParams{}
		if q.Params != nil {
			p.Meta = q.Params.Meta
		}
		return question{mcp.MethodRootsList, p}, nil
	}
	return question{}, fmt.Errorf("a %T is no question mcpx can put to a client", r.Value)
}

// check refuses, as Ask would, a question the client cannot take: a
// method its revision lacks, a capability it did not declare, content
// its revision cannot carry.
func (a *asker) check(method string, params any) error {
	_, params, who, err := a.fit(method, params)
	if err != nil {
		return err
	}
	_, err = a.downgrade(method, who, params)
	return err
}

// withInput is a copy of hub params p (a pointer to a struct with
// InputResponses and RequestState members) carrying a retry's answers
// and state. The client's own params are left as they are.
func withInput(p any, answers map[string]mcp.InputResponse, state string) (any, error) {
	v := reflect.ValueOf(p)
	if v.Kind() != reflect.Pointer || v.IsNil() || v.Elem().Kind() != reflect.Struct {
		return nil, fmt.Errorf("edge: %T cannot carry a retry's answers", p)
	}
	cp := reflect.New(v.Elem().Type())
	cp.Elem().Set(v.Elem())
	r, s := cp.Elem().FieldByName("InputResponses"), cp.Elem().FieldByName("RequestState")
	if !r.IsValid() || r.Type() != reflect.TypeOf(answers) || !s.IsValid() || s.Kind() != reflect.String {
		return nil, fmt.Errorf("edge: %T cannot carry a retry's answers", p)
	}
	r.Set(reflect.ValueOf(answers))
	s.SetString(state)
	return cp.Interface(), nil
}
