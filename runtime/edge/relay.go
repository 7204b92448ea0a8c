package edge

import (
	"encoding/json"
	"errors"
	"slices"

	"github.com/mcpx-dev/mcpx/generated/mcp"
	"github.com/mcpx-dev/mcpx/generated/revision"
	"github.com/mcpx-dev/mcpx/runtime/jsonrpc"
)

// The upstream side of a question: an upstream's server-to-client request
// decoded into hub params, and the client's answer written back in the
// upstream's revision under the upstream's own id.

// relayed are the upstream requests mcpx puts to the client whose call
// caused them.
var relayed = []string{mcp.MethodSamplingCreateMessage, mcp.MethodElicitationCreate, mcp.MethodRootsList}

// Relays reports whether mcpx puts an upstream's request for method to a
// client.
func Relays(method string) bool { return slices.Contains(relayed, method) }

// ServerRequest decodes the params of a request the upstream sent mcpx
// into a new hub value. A method the upstream's revision does not have
// from a server is -32601; params that do not decode, or break the
// method's schema (validQuestion), -32602.
func (d *Dialect) ServerRequest(method string, raw json.RawMessage) (any, error) {
	m, ok := revision.Lookup(d.rev).Method(method)
	if !ok || !m.FromServer || m.Notification {
		return nil, jsonrpc.Errorf(jsonrpc.MethodNotFound, nil, "%s has no request %s from a server", d.rev, jsonrpc.Quote(method))
	}
	if m.Params == "" {
		return nil, nil
	}
	v, err := decodeParams(d.rev, m.Params, raw)
	if err != nil {
		return nil, err
	}
	// A question that decodes but breaks its schema (askcheck.go) is
	// refused to the upstream, not relayed.
	if err := validQuestion(method, raw, v); err != nil {
		return nil, err
	}
	return v, nil
}

// Reply is the response to the upstream's request id: result (a hub
// result of method) written in the upstream's revision, or err. An error
// that is not a *jsonrpc.Error, and a result the revision cannot carry
// (audio content to 2024-11-05, say), is -32603 saying so.
func (d *Dialect) Reply(id json.RawMessage, method string, result any, err error) *jsonrpc.Message {
	if err != nil {
		var je *jsonrpc.Error
		if !errors.As(err, &je) {
			je = jsonrpc.Errorf(jsonrpc.InternalError, nil, "mcpx could not get an answer to %s: %v", method, err)
		}
		return jsonrpc.ErrorResponse(id, je)
	}
	raw, err := d.encode(d.rev, result)
	if err != nil {
		return jsonrpc.ErrorResponse(id, jsonrpc.Errorf(jsonrpc.InternalError, nil, "the client's answer to %s cannot be written in protocol revision %s: %v", method, d.rev, err))
	}
	if raw == nil {
		raw = emptyObject
	}
	return jsonrpc.Response(id, raw)
}

// relayCapabilities is what mcpx declares to a legacy upstream that it
// initializes in rev: what it can relay to clients, as far as rev has it
// (sampling; elicitation with form and url where rev names the modes;
// roots with listChanged). Whether a particular client can take a
// question is decided when it is asked (see mayAsk).
func relayCapabilities(rev mcp.Revision) mcp.ClientCapabilities {
	t := revision.Lookup(rev)
	var caps mcp.ClientCapabilities
	if t == nil {
		return caps
	}
	has := func(c string) bool { return slices.Contains(t.ClientCapabilities, c) }
	if has("sampling") {
		caps.Sampling = &mcp.ClientCapabilitiesSampling{}
	}
	if has("elicitation") {
		caps.Elicitation = &mcp.ClientCapabilitiesElicitation{}
		if has("elicitation.form") {
			caps.Elicitation.Form = emptyObject
		}
		if has("elicitation.url") {
			caps.Elicitation.URL = emptyObject
		}
	}
	if has("roots") {
		caps.Roots = json.RawMessage(`{"listChanged":true}`)
	}
	return caps
}
