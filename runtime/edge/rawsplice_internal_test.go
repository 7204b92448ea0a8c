package edge

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/mcpx-dev/mcpx/generated/convert"
	"github.com/mcpx-dev/mcpx/generated/mcp"
	"github.com/mcpx-dev/mcpx/internal/mcpjson"
)

// TestRequestForLongArguments: a tools/call's long arguments (which
// marshalWire sends by mcpjson.MarshalLong) are written as
// mcpjson.Marshal and encoding/json write them, whether already compact or
// not, and invalid ones are still refused, in every revision, with and
// without capabilities to declare.
func TestRequestForLongArguments(t *testing.T) {
	long := strings.Repeat("x", 64<<10)
	for name, args := range map[string]string{
		"canonical": `{"text":"` + long + `","n":[1,-0,2e5,true,null,{}]}`,
		"spaced":    `{"text": "` + long + `"}`,
		"html":      `{"text":"` + long + `<&>"}`,
		"u2028":     `{"text":"` + long + "\u2028\"}",
		"invalid":   `{"text":"` + long + `",}`,
	} {
		for _, rev := range []mcp.Revision{mcp.Rev20260728, mcp.Rev20251125, mcp.Rev20241105} {
			for _, caps := range []*mcp.ClientCapabilities{nil, {Elicitation: &mcp.ClientCapabilitiesElicitation{Form: json.RawMessage(`{}`)}}} {
				d := testDialect(rev)
				p := &mcp.CallToolRequestParams{Name: "t", Arguments: json.RawMessage(args), Meta: mcp.Meta{}}
				got, err := d.RequestFor(mcp.MethodToolsCall, p, nil, "", caps)
				// What Marshal writes for the same request.
				q := *p
				q.Meta = mcp.Meta{}
				if d.Modern() {
					c := json.RawMessage(`{}`)
					if caps != nil {
						c = mustJSON(caps)
					}
					q.Meta[protocolVersionKey], q.Meta[clientCapabilitiesKey], q.Meta[mcp.MetaKeyClientInfo] = d.revRaw, c, d.clientRaw
				}
				wire, derr := convert.Downgrade(rev, &q)
				if derr != nil {
					t.Fatal(derr)
				}
				want, werr := mcpjson.Marshal(wire)
				std, serr := json.Marshal(wire)
				if (err == nil) != (werr == nil) || (serr == nil) != (werr == nil) {
					t.Fatalf("%s, %s: RequestFor error %v, Marshal's %v, encoding/json's %v", name, rev, err, werr, serr)
				}
				if err != nil && err.Error() != werr.Error() {
					t.Errorf("%s, %s: error %v, Marshal's %v", name, rev, err, werr)
				}
				if string(got) != string(want) || err == nil && string(std) != string(want) {
					t.Errorf("%s, %s, caps %v: RequestFor and Marshal differ (%d, %d bytes)", name, rev, caps != nil, len(got), len(want))
				}
			}
		}
	}
}

// BenchmarkRequestForLong is a forwarded tools/call's request with 64 kB
// of arguments (Issue 17's echo) to a 2026-07-28 upstream.
func BenchmarkRequestForLong(b *testing.B) {
	d := testDialect(mcp.Rev20260728)
	args := json.RawMessage(`{"text":"` + strings.Repeat("x", 64<<10) + `"}`)
	p := &mcp.CallToolRequestParams{Name: "echo", Arguments: args, Meta: mcp.Meta{}}
	b.SetBytes(int64(len(args)))
	b.ReportAllocs()
	for range b.N {
		if _, err := d.RequestFor(mcp.MethodToolsCall, p, nil, "", nil); err != nil {
			b.Fatal(err)
		}
	}
}
