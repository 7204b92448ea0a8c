package edge

import (
	"encoding/json"
	"strings"

	"github.com/mcpx-dev/mcpx/generated/mcp"
	"github.com/mcpx-dev/mcpx/internal/mcpjson"
	"github.com/mcpx-dev/mcpx/runtime/jsonrpc"
	"github.com/mcpx-dev/mcpx/runtime/server"
)

const (
	protocolVersionKey    = mcp.MetaKeyProtocolVersion
	clientCapabilitiesKey = mcp.MetaKeyClientCapabilities
	logLevelKey           = mcp.MetaKeyLogLevel
)

// requestMeta is a request's params._meta, read before the revision is
// known: it may name the revision.
type requestMeta map[string]json.RawMessage

func readMeta(params json.RawMessage) (requestMeta, error) {
	if len(params) > 0 && params[0] == '[' {
		return nil, jsonrpc.Errorf(jsonrpc.InvalidParams, nil, "params must be an object, not an array")
	}
	if len(params) == 0 || params[0] != '{' {
		return nil, nil
	}
	var p struct {
		Meta requestMeta `json:"_meta"`
	}
	if err := mcpjson.Unmarshal(params, &p); err != nil {
		// In JSON terms ("at /_meta: expected an object, not a string"),
		// not the Go type it failed to fill.
		return nil, jsonrpc.Errorf(jsonrpc.InvalidParams, nil, "invalid params: %s", jsonrpc.Clip(mcpjson.Describe(err)))
	}
	return p.Meta, nil
}

// protocolVersion reads the _meta protocol version: the string (or, when
// it is not a string, its raw JSON, to be reported as unsupported) and
// whether it is there at all.
func (m requestMeta) protocolVersion() (string, bool) {
	raw, ok := m[protocolVersionKey]
	if !ok {
		return "", false
	}
	for _, r := range mcp.Revisions { // the common case, without a string of its own
		if len(raw) == len(r)+2 && raw[0] == '"' && string(raw[1:len(raw)-1]) == string(r) {
			return string(r), true
		}
	}
	v, err := jsonrpc.StringValue(raw)
	if err != nil {
		return string(raw), true
	}
	return v, true
}

// looksModern reports whether the _meta carries modern request keys
// without a protocol version: a modern request missing a required member,
// not a legacy one.
func (m requestMeta) looksModern() bool {
	_, caps := m[clientCapabilitiesKey]
	_, info := m[mcp.MetaKeyClientInfo]
	return caps || info
}

// missingMeta is the error for a modern request without _meta[key]; rev
// names its revision, "" when the request names none.
func missingMeta(key string, rev mcp.Revision) error {
	which := "modern"
	if rev != "" {
		which = string(rev)
	}
	return &metaError{rpc: jsonrpc.Errorf(jsonrpc.InvalidParams, map[string]string{"missing": key},
		"params._meta[%q] is required on every %s request", key, which)}
}

// checkModern checks the members every request of modern revision rev
// must carry.
func (m requestMeta) checkModern(rev mcp.Revision) error {
	raw, ok := m[clientCapabilitiesKey]
	if !ok {
		return missingMeta(clientCapabilitiesKey, rev)
	}
	// Most requests' {} (they declare nothing) is an object: not decoded.
	if string(raw) != "{}" {
		var caps mcp.ClientCapabilities
		if err := mcpjson.Unmarshal(raw, &caps); err != nil || len(raw) == 0 || raw[0] != '{' {
			return &metaError{rpc: jsonrpc.Errorf(jsonrpc.InvalidParams, nil, "params._meta[%q] must be a ClientCapabilities object", clientCapabilitiesKey)}
		}
	}
	if _, err := m.logLevel(); err != nil {
		return err
	}
	return nil
}

// logLevel is a modern request's log level: "" when absent, an
// invalid-params error when it names no level (logging page: SHOULD).
func (m requestMeta) logLevel() (mcp.LoggingLevel, error) {
	raw, ok := m[logLevelKey]
	if !ok {
		return "", nil
	}
	var l mcp.LoggingLevel
	if mcpjson.Unmarshal(raw, &l) != nil || !server.ValidLevel(l) {
		return "", jsonrpc.Errorf(jsonrpc.InvalidParams, map[string]any{"requested": requested(raw), "supported": levels()},
			"params._meta[%q] must be one of %s", logLevelKey, strings.Join(levels(), ", "))
	}
	return l, nil
}

func levels() []string {
	return []string{"debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"}
}

// progressToken is the request's progress token, or nil.
func (m requestMeta) progressToken() json.RawMessage {
	t := m["progressToken"]
	if len(t) == 0 || string(t) == "null" {
		return nil
	}
	return t
}

// requested is a value the client sent, as an error's data repeats it:
// as it is, or clipped (as a string) when longer than jsonrpc.MaxQuoted.
func requested(raw json.RawMessage) any {
	if len(raw) <= jsonrpc.MaxQuoted {
		return raw
	}
	return jsonrpc.Clip(string(raw))
}
