package edge

import (
	"encoding/json"
	"errors"
	"reflect"

	"github.com/mcpx-dev/mcpx/generated/mcp"
	"github.com/mcpx-dev/mcpx/generated/revision"
	"github.com/mcpx-dev/mcpx/runtime/server"
)

// inputRequiredOn are the requests a server MAY answer with an
// InputRequiredResult, the MRTR page's "Supported Requests" (each one's
// response in the 2026-07-28 schema is anyOf InputRequiredResult and its
// result); a server MUST NOT send one on any other. The generated tables
// name one result type per method, so the list is kept here.
var inputRequiredOn = map[string]bool{
	mcp.MethodToolsCall:     true,
	mcp.MethodPromptsGet:    true,
	mcp.MethodResourcesRead: true,
}

// inputRequired answers a namespace's [*server.InputRequired] (err) for
// method: its InputRequiredResult, when the client's revision has that
// type and the method allows it, and the client declared what every
// question needs (else -32021 naming it: the MRTR page forbids asking a
// client what it did not declare). Any other client gets the error it
// carries, except on the requests that allow input_required, which a
// legacy client gets the rounds for (bridge 3, rounds.go): this is where
// the bridge is chosen. ok is false when err is no InputRequired.
func (e *Edge) inputRequired(c *call, method string, err error) (any, error, bool) {
	if err == nil { // before errors.As's target, which escapes
		return nil, nil, false
	}
	var ir *server.InputRequired
	if !errors.As(err, &ir) || ir.Result == nil {
		return nil, err, false
	}
	_, has := revision.Lookup(c.rev).Type("InputRequiredResult")
	if !has && inputRequiredOn[method] {
		// Bridge 3 (rounds.go): mcpx asks a legacy client and retries.
		r, err := e.inputRounds(c, method, ir)
		return r, err, true
	}
	if !c.takesInputRequired(method) {
		return nil, ir.Err, true
	}
	if missing, lacks := undeclared(c.clientCapabilities(), ir.Result.InputRequests); lacks {
		return nil, &server.MissingCapabilityError{Required: missing}, true
	}
	ir.Result.ResultType = resultInputRequired
	return ir.Result, nil, true
}

// takesInputRequired reports whether the client of c takes an
// InputRequiredResult on method: what [Edge.inputRequired] answers one
// with, told to the namespace beforehand (server.TakesInputRequired) so
// that a built-in namespace knows how to ask.
func (c *call) takesInputRequired(method string) bool {
	_, has := revision.Lookup(c.rev).Type("InputRequiredResult")
	return has && inputRequiredOn[method]
}

// undeclared returns the capabilities the questions need that caps lacks:
// elicitation (its url mode for a URL request, its form mode, or an empty
// elicitation object, for a form), sampling (with tools when the request
// offers tools or sets toolChoice) and roots.
func undeclared(caps *mcp.ClientCapabilities, reqs map[string]mcp.InputRequest) (need mcp.ClientCapabilities, lacks bool) {
	present := json.RawMessage(`{}`)
	for _, r := range reqs {
		switch q := r.Value.(type) {
		case *mcp.ElicitRequest:
			el := caps.Elicitation
			if _, url := q.Params.Value.(*mcp.ElicitRequestURLParams); url {
				if el == nil || el.URL == nil {
					need.Elicitation, lacks = &mcp.ClientCapabilitiesElicitation{URL: present}, true
				}
			} else if el == nil || (el.Form == nil && el.URL != nil) {
				need.Elicitation, lacks = &mcp.ClientCapabilitiesElicitation{Form: present}, true
			}
		case *mcp.CreateMessageRequest:
			switch s := caps.Sampling; {
			case s == nil:
				need.Sampling, lacks = &mcp.ClientCapabilitiesSampling{}, true
			case (len(q.Params.Tools) > 0 || q.Params.ToolChoice != nil) && s.Tools == nil:
				need.Sampling, lacks = &mcp.ClientCapabilitiesSampling{Tools: present}, true
			}
		case *mcp.ListRootsRequest:
			if caps.Roots == nil {
				need.Roots, lacks = present, true
			}
		}
	}
	return need, lacks
}

// retried reports whether hub params p are an MRTR retry: they carry
// inputResponses or a requestState. Its result MUST NOT be cached (the
// caching page), so the edge gives it no freshness (uncached).
func retried(p any) bool {
	v := reflect.ValueOf(p)
	if v.Kind() != reflect.Pointer || v.IsNil() || v.Elem().Kind() != reflect.Struct {
		return false
	}
	s, r := v.Elem().FieldByName("RequestState"), v.Elem().FieldByName("InputResponses")
	return s.IsValid() && s.Kind() == reflect.String && s.String() != "" ||
		r.IsValid() && r.Kind() == reflect.Map && r.Len() > 0
}

// uncached makes a result's caching hints say "do not reuse": the
// schema requires ttlMs and cacheScope on a complete resources/read
// result, so the closest a retry's result can come to carrying none is
// immediately stale (0) and private.
func uncached(result any) {
	env, ok := result.(mcp.Enveloped)
	if !ok {
		return
	}
	x := env.Envelope()
	if x.TTLMs != nil {
		*x.TTLMs = 0
	}
	if x.CacheScope != nil {
		*x.CacheScope = mcp.CacheScopePrivate
	}
}
