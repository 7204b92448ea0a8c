package edge

import (
	"encoding/json"
	"slices"

	"github.com/mcpx-dev/mcpx/generated/convert"
	"github.com/mcpx-dev/mcpx/generated/mcp"
	"github.com/mcpx-dev/mcpx/internal/mcpjson"
)

// A tools/call's params are decoded from every client's request and, in
// the gateway, encoded again for the upstream, both by reflection: 2.5 µs
// and 3 µs a call in memory, 6 % and 5 % of mcpx's CPU at c=32. Nearly
// all of them hold a name, arguments and a _meta, no more; those are read
// and written here by scanning bytes. Anything else (a task, input
// responses, a name with an escape, a member twice, a value encoding/json
// would write otherwise) goes the typed way. TestCallParamsMatchTyped and
// FuzzCallParams hold both to the typed way's answers in every revision.

// scanCallParams is decodeParams of a tools/call's params that
// jsonrpc.Decode read (valid JSON, UTF-8, no name twice): the hub params
// the typed decode and upgrade would give, their arguments and _meta
// values slices of raw as the typed way's are; ok is false when raw holds
// more than a plain name, object arguments and an object _meta. Every
// revision's tools/call params have these three members, converted as
// they are.
func scanCallParams(raw []byte) (p *mcp.CallToolRequestParams, ok bool) {
	p = new(mcp.CallToolRequestParams)
	const hasName, hasArguments, hasMeta = 1, 2, 4
	seen := 0
	ok = mcpjson.Members(raw, func(name, val []byte) bool {
		var bit int
		switch string(name) {
		case "name":
			if val[0] != '"' || slices.Contains(val, '\\') {
				return false
			}
			bit, p.Name = hasName, string(val[1:len(val)-1])
		case "arguments":
			if val[0] != '{' {
				return false
			}
			bit, p.Arguments = hasArguments, val
		case "_meta":
			if val[0] != '{' {
				return false
			}
			bit, p.Meta = hasMeta, make(mcp.Meta, 4)
			if !mcpjson.Members(val, func(k, v []byte) bool {
				key := MetaKey(k)
				if _, twice := p.Meta[key]; twice {
					return false
				}
				p.Meta[key] = v
				return true
			}) {
				return false
			}
		default:
			return false
		}
		if seen&bit != 0 {
			return false
		}
		seen |= bit
		return true
	})
	return p, ok
}

// MetaKey is the _meta key k as a string: for the reserved keys every
// 2026-07-28 request has, and the progress token's, the constant, not a
// string allocated for each request.
func MetaKey(k []byte) string {
	switch string(k) {
	case mcp.MetaKeyProtocolVersion:
		return mcp.MetaKeyProtocolVersion
	case mcp.MetaKeyClientCapabilities:
		return mcp.MetaKeyClientCapabilities
	case mcp.MetaKeyClientInfo:
		return mcp.MetaKeyClientInfo
	case mcp.MetaKeyLogLevel:
		return mcp.MetaKeyLogLevel
	case "progressToken":
		return "progressToken"
	}
	return string(k)
}

// writeCallParams is Dialect.encode of p in rev: the bytes the typed
// downgrade and mcpjson.Marshal give; ok is false for params it leaves to
// them (a task, input responses, request state; a name, _meta key or raw
// value that Marshal would not write as it is).
func writeCallParams(rev mcp.Revision, p *mcp.CallToolRequestParams) (json.RawMessage, bool) {
	if p.Task != nil || p.InputResponses != nil || p.RequestState != "" || !mcpjson.PlainString(p.Name) {
		return nil, false
	}
	if len(p.Arguments) > 0 && !mcpjson.Canonical(p.Arguments) {
		return nil, false
	}
	// The revision's _meta is the generated downgrade's (it drops the
	// keys of other eras, converts a modern one's capabilities).
	wire, err := convert.Downgrade(rev, p)
	if err != nil {
		return nil, false
	}
	wm := wireMeta(wire)
	if wm == nil {
		return nil, false
	}
	meta := *wm
	var arr [8]string
	keys := arr[:0]
	size := len(`{"_meta":{},"arguments":,"name":""}`) + len(p.Arguments) + len(p.Name)
	for k, v := range meta {
		if !mcpjson.PlainString(k) || v != nil && !mcpjson.Canonical(v) {
			return nil, false
		}
		keys = append(keys, k)
		size += len(k) + len(v) + len(`"":null,`)
	}
	slices.Sort(keys)
	b := make([]byte, 0, size)
	b = append(b, '{')
	if len(meta) > 0 {
		b = append(b, `"_meta":{`...)
		for i, k := range keys {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, '"')
			b = append(b, k...)
			b = append(b, `":`...)
			if v := meta[k]; v != nil {
				b = append(b, v...)
			} else {
				b = append(b, "null"...)
			}
		}
		b = append(b, "},"...)
	}
	if len(p.Arguments) > 0 {
		b = append(b, `"arguments":`...)
		b = append(b, p.Arguments...)
		b = append(b, ',')
	}
	b = append(b, `"name":"`...)
	b = append(b, p.Name...)
	b = append(b, `"}`...)
	return b, true
}
