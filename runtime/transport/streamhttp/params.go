package streamhttp

import (
	"encoding/json"
	"math/big"
	"net/http"
	"strings"

	"github.com/mcpx-dev/mcpx/generated/mcp"
	"github.com/mcpx-dev/mcpx/internal/mcpjson"
	"github.com/mcpx-dev/mcpx/runtime/jsonrpc"
)

// checkParamHeaders validates the Mcp-Param-* headers of a 2026-07-28
// tools/call against its arguments (streamable-http.mdx, "Server Behavior
// for Custom Headers"): a value in the body needs its header, a header
// needs its value, both must be equal after decoding, and a header with
// characters a header may not hold is rejected. Any failure is -32020.
func (h *Handler) checkParamHeaders(r *http.Request, m *jsonrpc.Message, pk *peek) *jsonrpc.Error {
	if m.Method != mcp.MethodToolsCall {
		return nil
	}
	name, err := jsonrpc.StringValue(pk.Name)
	if err != nil {
		return nil // the edge reports bad params
	}
	for _, ph := range h.e.ParamHeaders(r.Context(), name) { // none for an unknown tool: the edge answers it

		header := "Mcp-Param-" + ph.Name
		hv, present, ok := headerValue(r, header)
		if ok && present {
			hv, ok = decodeSentinel(hv)
		}
		if !ok {
			return mismatch("Header mismatch: the %s header holds characters a header value may not, or malformed Base64", header)
		}
		body := lookup(pk.Arguments, ph.Path)
		switch {
		case body == nil && !present:
			continue
		case body == nil:
			return mismatch("Header mismatch: %s header is present but arguments.%s is not", header, strings.Join(ph.Path, "."))
		case !present:
			return mismatch("Header mismatch: arguments.%s is in the body but the %s header is missing", strings.Join(ph.Path, "."), header)
		case !sameValue(hv, body):
			return mismatch("Header mismatch: %s header value %s does not match arguments.%s", header, jsonrpc.Quote(hv), strings.Join(ph.Path, "."))
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
