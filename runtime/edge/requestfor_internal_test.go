package edge

import (
	"encoding/json"
	"maps"
	"reflect"
	"testing"

	"github.com/mcpx-dev/mcpx/generated/mcp"
)

// testDialect is a dialect settled on rev without a handshake.
func testDialect(rev mcp.Revision) *Dialect {
	d := &Dialect{client: mcp.Implementation{Name: "mcpx", Version: "1"}}
	d.clientRaw = mustJSON(d.client)
	d.setRevision(rev)
	return d
}

// TestRequestForMetaPutBack: RequestFor sets the request's _meta members
// in the params' own map and puts it back as it was (members it replaced
// restored, those it added removed, a nil map nil again), and writes what
// a copy of the map with the members set would have written.
func TestRequestForMetaPutBack(t *testing.T) {
	metas := map[string]func() mcp.Meta{
		"nil":   func() mcp.Meta { return nil },
		"empty": func() mcp.Meta { return mcp.Meta{} },
		"client's": func() mcp.Meta {
			return mcp.Meta{protocolVersionKey: json.RawMessage(`"2026-07-28"`), clientCapabilitiesKey: json.RawMessage(`{"roots":{}}`),
				mcp.MetaKeyClientInfo: json.RawMessage(`{"name":"c","version":"2"}`), logLevelKey: json.RawMessage(`"error"`),
				"progressToken": json.RawMessage(`7`), "x.y/z": json.RawMessage(`[1]`)}
		},
	}
	capss := map[string]*mcp.ClientCapabilities{
		"no caps":    nil,
		"empty caps": {},
		"caps":       {Elicitation: &mcp.ClientCapabilitiesElicitation{Form: json.RawMessage(`{}`)}, Extensions: json.RawMessage(`{"io.modelcontextprotocol/tasks":{}}`)},
		"hub caps":   {Roots: json.RawMessage(`{}`), Tasks: &mcp.ClientCapabilitiesTasks{}},
	}
	for _, rev := range []mcp.Revision{mcp.Rev20260728, mcp.Rev20251125, mcp.Rev20241105} {
		d := testDialect(rev)
		for mname, meta := range metas {
			for cname, caps := range capss {
				for _, progress := range []json.RawMessage{nil, json.RawMessage(`"p"`)} {
					for _, level := range []mcp.LoggingLevel{"", mcp.LoggingLevelInfo} {
						p := &mcp.CallToolRequestParams{Name: "t", Arguments: json.RawMessage(`{"a":1}`), Meta: meta()}
						got, err := d.RequestFor(mcp.MethodToolsCall, p, progress, level, caps)
						if err != nil {
							t.Fatal(err)
						}
						if !reflect.DeepEqual(p.Meta, meta()) || (p.Meta == nil) != (meta() == nil) {
							t.Errorf("%s, %s meta, %s: _meta left as %v", rev, mname, cname, p.Meta)
						}
						// What RequestFor wrote before: a copy with the members set.
						m := maps.Clone(meta())
						if m == nil {
							m = mcp.Meta{}
						}
						if progress != nil {
							m["progressToken"] = progress
						}
						if d.Modern() {
							c := json.RawMessage(`{}`)
							if caps != nil {
								c = mustJSON(caps)
							}
							m[protocolVersionKey], m[clientCapabilitiesKey], m[mcp.MetaKeyClientInfo] = d.revRaw, c, d.clientRaw
							if level != "" {
								m[logLevelKey] = mustJSON(level)
							}
						}
						q := *p
						q.Meta = m
						want, err := d.encode(rev, &q)
						if err != nil {
							t.Fatal(err)
						}
						if string(got) != string(want) {
							t.Errorf("%s, %s meta, %s, progress %s, level %q:\n got %s\nwant %s", rev, mname, cname, progress, level, got, want)
						}
					}
				}
			}
		}
	}
}
