package streamhttp

import (
	"bytes"
	"encoding/json"
	"math/big"
	"net/http"
	"strings"

	"github.com/mcpx-dev/mcpx/generated/mcp"
	"github.com/mcpx-dev/mcpx/internal/mcpjson"
	"github.com/mcpx-dev/mcpx/runtime/jsonrpc"
)

// paramHeader is one tool parameter mirrored into an Mcp-Param-{Name}
// header (x-mcp-header in the tool's inputSchema, SEP-2243).
type paramHeader struct {
	name string   // the {Name} part
	path []string // property keys from the schema root
	typ  string   // "string", "integer" or "boolean"
}

// paramHeaders reads the x-mcp-header annotations of an inputSchema: only
// properties reachable through a chain of "properties" keys count, as the
// specification requires.
func paramHeaders(schema json.RawMessage) []paramHeader {
	var out []paramHeader
	var walk func(raw json.RawMessage, path []string, depth int)
	walk = func(raw json.RawMessage, path []string, depth int) {
		var node struct {
			Properties map[string]json.RawMessage `json:"properties"`
			Header     string                     `json:"x-mcp-header"`
			Type       json.RawMessage            `json:"type"`
		}
		if depth > 32 || mcpjson.Unmarshal(raw, &node) != nil {
			return
		}
		if node.Header != "" && len(path) > 0 {
			var typ string
			_ = mcpjson.Unmarshal(node.Type, &typ)
			out = append(out, paramHeader{name: node.Header, path: path, typ: typ})
		}
		for k, sub := range node.Properties {
			walk(sub, append(append([]string(nil), path...), k), depth+1)
		}
	}
	walk(schema, nil, 0)
	return out
}

// checkParamHeaders validates the Mcp-Param-* headers of a 2026-07-28
// tools/call against its arguments (streamable-http.mdx, "Server Behavior
// for Custom Headers"): a value in the body needs its header, a header
// needs its value, both must be equal after decoding, and a header with
// characters a header may not hold is rejected. Any failure is -32020.
func (h *Handler) checkParamHeaders(r *http.Request, m *jsonrpc.Message, pk *peek) *jsonrpc.Error {
	if m.Method != mcp.MethodToolsCall {
		return nil
	}
	var p struct {
		Name      string
		Arguments json.RawMessage
	}
	if mcpjson.Unmarshal(pk.Name, &p.Name) != nil {
		return nil // the edge reports bad params
	}
	p.Arguments = pk.Arguments
	tools, err := h.e.Server.NS.ListTools(r.Context())
	if err != nil {
		return nil
	}
	var schema json.RawMessage
	for _, t := range tools {
		if t.Name == p.Name {
			schema = t.InputSchema
		}
	}
	if schema == nil || !bytes.Contains(schema, []byte("x-mcp-header")) {
		return nil // unknown tool (the edge answers it) or no annotations
	}
	for _, ph := range paramHeaders(schema) {
		header := "Mcp-Param-" + ph.name
		hv, present, ok := headerValue(r, header)
		if ok && present {
			hv, ok = decodeSentinel(hv)
		}
		if !ok {
			return mismatch("Header mismatch: the %s header holds characters a header value may not, or malformed Base64", header)
		}
		body := lookup(p.Arguments, ph.path)
		switch {
		case body == nil && !present:
			continue
		case body == nil:
			return mismatch("Header mismatch: %s header is present but arguments.%s is not", header, strings.Join(ph.path, "."))
		case !present:
			return mismatch("Header mismatch: arguments.%s is in the body but the %s header is missing", strings.Join(ph.path, "."), header)
		case !sameValue(hv, body):
			return mismatch("Header mismatch: %s header value %q does not match arguments.%s", header, hv, strings.Join(ph.path, "."))
		}
	}
	return nil
}

// lookup returns the JSON value at path in args, or nil when it is absent
// or null.
func lookup(args json.RawMessage, path []string) json.RawMessage {
	cur := args
	for _, k := range path {
		var obj map[string]json.RawMessage
		if mcpjson.Unmarshal(cur, &obj) != nil {
			return nil
		}
		cur = obj[k]
	}
	if len(cur) == 0 || string(cur) == "null" {
		return nil
	}
	return cur
}

// sameValue compares a decoded header value with a body value: strings as
// they are, booleans as true/false, numbers numerically (42 and 42.0 are
// equal, as the specification suggests).
func sameValue(header string, body json.RawMessage) bool {
	switch body[0] {
	case '"':
		var s string
		return mcpjson.Unmarshal(body, &s) == nil && s == header
	case 't', 'f':
		return header == string(body)
	}
	a, ok1 := new(big.Rat).SetString(header)
	b, ok2 := new(big.Rat).SetString(string(body))
	return ok1 && ok2 && a.Cmp(b) == 0
}
