package catalog

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/mcpx-dev/mcpx/runtime/auth"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/mcpx-dev/mcpx/generated/mcp"
	"github.com/mcpx-dev/mcpx/runtime/requeststate"
	"github.com/mcpx-dev/mcpx/runtime/server"
)

// Asking the client from a built-in namespace's handler: sampling,
// elicitation, roots. A handler calls [Asker.Ask] with its questions under
// keys of its own and gets the answers under the same keys, whatever the
// client's era:
//
//   - A client that takes an InputRequiredResult on the request (2026-07-28,
//     on tools/call, prompts/get and resources/read; the edge says so,
//     server.TakesInputRequired) is asked through MRTR rounds. Ask fails
//     with a [*server.InputRequired] holding the questions not answered
//     yet and a sealed requestState; the handler returns that error as it
//     is, and the edge answers the client with the InputRequiredResult. The
//     client's retry runs the handler again from the start (replay): each
//     Ask then finds its answers, in the retry's inputResponses or in the
//     state, and returns them; the first Ask still missing one starts the
//     next round. So a handler that asks twice in sequence takes two
//     rounds, and must ask the same questions under the same keys each
//     time it runs (keys are unique within a request, as the MRTR page
//     says).
//   - Any other client is asked by server-to-client requests, one per
//     question, through [LegacyAsk].
//
// # What the state records
//
// The answers already accepted, in the sealed payload (Payload.Upstream,
// which for a built-in namespace is its own state: a JSON object of the
// raw answers by key), bound to the method, the params (without _meta,
// inputResponses and requestState) and the namespace, with the sealer's
// expiry. The client echoes the state and sends only the answers of the
// last round; the rest come from the state. A state that does not open
// (altered, expired, sealed for another request or namespace, under
// another key) is -32602 with requeststate's reason, and nothing runs
// past the Ask.
//
// # Missing, extra, invalid
//
// As the MRTR page asks: an answer missing is asked again in a new round;
// an answer under a key the handler does not ask is ignored; an answer of
// the wrong kind for its question (a sampling result to an elicitation,
// an elicitation action outside accept, decline and cancel) is -32602
// naming the key. Answers that are not InputResponses at all never get
// here: the edge refuses them while decoding the params. Answers sent
// without a state are taken too, since the handler decides what it asks:
// a client may answer in advance.

// ErrClientRequestsUnsupported is what a question fails with when no
// client can be reached (a test's AskFunc; the fixture's askUnsupported).
var ErrClientRequestsUnsupported = errors.New("server-to-client requests are not supported yet")

// LegacyAsk puts one question (method and a pointer to its hub params
// type) to a client that does not take input_required, as a
// server-to-client request, and returns its answer as a pointer to the
// hub result type: server.Ask, the edge's question on the call's stream
// (bridge 1); a variable so that tests can stand in for the client.
var LegacyAsk = server.Ask

// Asker asks the client of the request a handler serves. Its Ask method
// is the fixture's AskFunc. The zero value seals with a key of the
// process's own.
type Asker struct {
	// Namespace names the namespace in the states it seals: a state opens
	// only in the namespace it was sealed in.
	Namespace string
	// States seals and opens the requestState; nil: a random key of the
	// process's own (requeststate.Random), made on first use.
	States *requeststate.Sealer
	// TTL is how long a state opens; 0: the sealer's.
	TTL time.Duration

	once sync.Once
}

func (a *Asker) sealer() *requeststate.Sealer {
	a.once.Do(func() {
		if a.States == nil {
			a.States = requeststate.Random()
		}
	})
	return a.States
}

// Ask puts reqs to the client and returns its answers under the same
// keys; see above for how. An error that is a [*server.InputRequired] or
// a [*server.InvalidParamsError] must be returned by the handler as its
// error, unchanged or wrapped.
func (a *Asker) Ask(ctx context.Context, reqs map[string]mcp.InputRequest) (map[string]mcp.InputResponse, error) {
	if len(reqs) == 0 {
		return map[string]mcp.InputResponse{}, nil
	}
	if !server.TakesInputRequired(ctx) {
		return askLegacy(ctx, reqs)
	}
	r, _ := ctx.Value(requestKey{}).(*request)
	if r == nil {
		return nil, errors.New("catalog: Ask is called outside a request the catalog serves")
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := r.open(a); err != nil {
		return nil, err
	}
	answers := map[string]mcp.InputResponse{}
	missing := map[string]mcp.InputRequest{}
	for _, k := range slices.Sorted(maps.Keys(reqs)) {
		q := reqs[k]
		raw, ok := r.known[k]
		if !ok {
			missing[k] = q
			continue
		}
		var resp mcp.InputResponse
		if err := json.Unmarshal(raw, &resp); err != nil {
			return nil, server.InvalidParams("inputResponses[%q] is not an answer: %v", k, err)
		}
		if err := fits(q, resp); err != nil {
			return nil, server.InvalidParams("inputResponses[%q] %v", k, err)
		}
		answers[k] = resp
		r.accepted[k] = raw
	}
	if len(missing) == 0 {
		return answers, nil
	}
	b, err := requeststate.BindParams(r.method, r.params, a.Namespace)
	b.Owner = r.owner
	if err != nil {
		return nil, server.InvalidParams("%v", err)
	}
	payload, err := json.Marshal(r.accepted)
	if err != nil {
		return nil, err
	}
	state, err := a.sealer().Seal(b, requeststate.Payload{Upstream: string(payload)}, a.TTL)
	if err != nil {
		return nil, err
	}
	return nil, &server.InputRequired{
		Result: &mcp.InputRequiredResult{InputRequests: missing, RequestState: state, ResultType: "input_required"},
		Err:    fmt.Errorf("%s needs %s from the client, which only a 2026-07-28 client is asked through input_required", r.method, methodsOf(missing)),
	}
}

// request is what Ask knows of the request being served: installed by
// the catalog's CallTool, GetPrompt and ReadResource, opened on the first
// Ask.
type request struct {
	method    string
	params    any    // pointer to the hub params
	owner     string // auth.Owner of the request
	responses map[string]mcp.InputResponse
	state     string

	mu       sync.Mutex
	opened   bool
	known    map[string]json.RawMessage // answers from the state, then the retry's
	accepted map[string]json.RawMessage // the answers Ask returned, and the state's
}

type requestKey struct{}

// withRequest returns ctx carrying the request a handler serves, for Ask.
func withRequest(ctx context.Context, method string, params any, responses map[string]mcp.InputResponse, state string) context.Context {
	return context.WithValue(ctx, requestKey{}, &request{method: method, params: params, owner: auth.Owner(ctx), responses: responses, state: state})
}

// open reads the state and the retry's answers once. The state's answers
// win over the retry's under the same key: they were accepted in an
// earlier round, and a key not asked in the last round is ignored.
func (r *request) open(a *Asker) error {
	if r.opened {
		return nil
	}
	r.known, r.accepted = map[string]json.RawMessage{}, map[string]json.RawMessage{}
	for k, v := range r.responses {
		if v.Value == nil {
			continue // an answer of no kind: the question is asked again
		}
		raw, err := json.Marshal(v)
		if err != nil {
			return server.InvalidParams("inputResponses[%q] cannot be read: %v", k, err)
		}
		r.known[k] = raw
	}
	if r.state != "" {
		b, err := requeststate.BindParams(r.method, r.params, a.Namespace)
		b.Owner = r.owner
		if err != nil {
			return server.InvalidParams("%v", err)
		}
		p, err := a.sealer().Open(r.state, b)
		if err != nil {
			return err // -32602 with the reason
		}
		var earlier map[string]json.RawMessage
		if p.Upstream != "" {
			if err := json.Unmarshal([]byte(p.Upstream), &earlier); err != nil {
				return server.InvalidParams("requestState was issued by another namespace's code")
			}
		}
		for k, v := range earlier {
			r.known[k], r.accepted[k] = v, v
		}
	}
	r.opened = true
	return nil
}

// fits reports whether resp answers question q: the result type of its
// method, and for an elicitation one of the three actions.
func fits(q mcp.InputRequest, resp mcp.InputResponse) error {
	switch q.Value.(type) {
	case *mcp.ElicitRequest:
		r, ok := resp.Value.(*mcp.ElicitResult)
		if !ok {
			return fmt.Errorf("answers %s with a %s", mcp.MethodElicitationCreate, kindOf(resp))
		}
		switch r.Action {
		case "accept", "decline", "cancel":
		default:
			return fmt.Errorf("has action %q; an elicitation is answered accept, decline or cancel", r.Action)
		}
	case *mcp.CreateMessageRequest:
		if _, ok := resp.Value.(*mcp.CreateMessageResult); !ok {
			return fmt.Errorf("answers %s with a %s", mcp.MethodSamplingCreateMessage, kindOf(resp))
		}
	case *mcp.ListRootsRequest:
		if _, ok := resp.Value.(*mcp.ListRootsResult); !ok {
			return fmt.Errorf("answers %s with a %s", mcp.MethodRootsList, kindOf(resp))
		}
	default:
		return fmt.Errorf("answers a question of no known kind")
	}
	return nil
}

func kindOf(resp mcp.InputResponse) string {
	switch resp.Value.(type) {
	case *mcp.ElicitResult:
		return "elicitation result"
	case *mcp.CreateMessageResult:
		return "sampling result"
	case *mcp.ListRootsResult:
		return "roots result"
	}
	return "result of no known kind"
}

// question is the method and hub params of one question, as a request
// to a legacy client sends them.
func question(q mcp.InputRequest) (method string, params any, err error) {
	switch v := q.Value.(type) {
	case *mcp.ElicitRequest:
		return mcp.MethodElicitationCreate, &v.Params, nil
	case *mcp.CreateMessageRequest:
		return mcp.MethodSamplingCreateMessage, &v.Params, nil
	case *mcp.ListRootsRequest:
		// Sent as a request, roots/list has the generic params of the
		// legacy revisions (RequestParams); ListRootsRequestParams is the
		// 2026-07-28 inputRequests shape.
		p := &mcp.RequestParams{}
		if v.Params != nil {
			p.Meta = v.Params.Meta
		}
		return mcp.MethodRootsList, p, nil
	}
	return "", nil, fmt.Errorf("catalog: a question of no known kind (%T)", q.Value)
}

func methodsOf(reqs map[string]mcp.InputRequest) string {
	var ms []string
	for _, q := range reqs {
		if m, _, err := question(q); err == nil {
			ms = append(ms, m)
		}
	}
	slices.Sort(ms)
	ms = slices.Compact(ms)
	if len(ms) == 0 {
		return "an answer"
	}
	return strings.Join(ms, " and ")
}

// askLegacy asks each question as a request of its own (LegacyAsk), in
// key order, and stops at the first that fails.
func askLegacy(ctx context.Context, reqs map[string]mcp.InputRequest) (map[string]mcp.InputResponse, error) {
	out := make(map[string]mcp.InputResponse, len(reqs))
	for _, k := range slices.Sorted(maps.Keys(reqs)) {
		method, params, err := question(reqs[k])
		if err != nil {
			return nil, err
		}
		res, err := LegacyAsk(ctx, method, params)
		if err != nil {
			return nil, err
		}
		v, ok := res.(mcp.InputResponseValue)
		if !ok {
			return nil, fmt.Errorf("catalog: the answer to %s is a %T, not a result of it", method, res)
		}
		out[k] = mcp.InputResponse{Value: v}
	}
	return out, nil
}
