package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/mcpx-dev/mcpx/generated/mcp"
	"github.com/mcpx-dev/mcpx/internal/mcpjson"
	"github.com/mcpx-dev/mcpx/runtime/jsonrpc"
	"github.com/mcpx-dev/mcpx/runtime/server"
)

// An upstream's -32021 (a client capability it needs is missing) reaches
// only a client that really lacks it (issue 12). A client that declared
// everything the upstream says is missing did not cause it: mcpx did not
// pass the capability on, because it cannot relay those questions to the
// client's revision yet (server.RelayedCapabilities), or it failed to. That
// client gets -32603 saying so, not an error telling it to declare what it
// already declared, and mcpx logs it.

// missingCapability returns the error for an upstream's -32021 in err
// (from m, for method, on behalf of the client of ctx), or nil when err is
// no -32021.
func (g *Gateway) missingCapability(ctx context.Context, m *member, method string, err error) error {
	if err == nil { // before errors.As's target, which escapes
		return nil
	}
	var je *jsonrpc.Error
	if !errors.As(err, &je) || je.Code != jsonrpc.MissingRequiredClientCapability {
		return nil
	}
	var data struct {
		Required mcp.ClientCapabilities `json:"requiredCapabilities"`
	}
	_ = mcpjson.Unmarshal(je.Data, &data)
	need, _ := toJSON(&data.Required).(map[string]any)
	// An upstream that names nothing leaves nothing to compare: the client
	// gets its -32021 as it came.
	if len(need) == 0 || !covers(toJSON(declaredForm(server.ClientCapabilities(ctx))), need) {
		return &server.MissingCapabilityError{Required: data.Required}
	}
	required, _ := json.Marshal(&data.Required)
	g.log.Warn("gateway: an upstream needs a client capability the client declared but mcpx did not relay to it",
		"upstream", m.name, "method", method, "required", string(required), "told", relayedJSON(ctx))
	return fmt.Errorf("upstream %q: %s: the upstream needs the client capabilities %s, which the client declared but mcpx could not relay to it", m.name, method, required)
}

// declaredForm is caps with an empty elicitation object read as what it
// means, form mode (the elicitation page: {} is form only).
func declaredForm(caps *mcp.ClientCapabilities) *mcp.ClientCapabilities {
	if el := caps.Elicitation; el != nil && el.Form == nil && el.URL == nil {
		c := *caps
		c.Elicitation = &mcp.ClientCapabilitiesElicitation{Form: json.RawMessage(`{}`)}
		return &c
	}
	return caps
}

// relayedJSON is what mcpx declared upstream for ctx's client, for logs.
func relayedJSON(ctx context.Context) string {
	c := server.RelayedCapabilities(ctx)
	if c == nil {
		return "{}"
	}
	b, _ := json.Marshal(c)
	return string(b)
}

// toJSON is v as generic JSON values (objects are map[string]any).
func toJSON(v any) any {
	b, err := json.Marshal(v)
	if err != nil {
		return nil
	}
	var out any
	_ = json.Unmarshal(b, &out)
	return out
}

// covers reports whether declared capabilities have includes every member
// need names: each member of an object, recursively; any other value
// equal, where false (or null) asks for nothing.
func covers(have, need any) bool {
	switch n := need.(type) {
	case map[string]any:
		h, ok := have.(map[string]any)
		if !ok {
			return false
		}
		for k, v := range n {
			hv, ok := h[k]
			if !ok {
				if v == nil || v == false {
					continue
				}
				return false
			}
			if !covers(hv, v) {
				return false
			}
		}
		return true
	case nil, bool:
		if n == nil || n == false {
			return true
		}
	}
	a, _ := json.Marshal(have)
	b, _ := json.Marshal(need)
	return string(a) == string(b)
}
