package edge

import (
	"encoding/json"
	"maps"
	"reflect"
	"strings"
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
		"foreign": func() mcp.Meta { // a key 2026-07-28 lacks: the downgrade copies the map
			return mcp.Meta{mcp.MetaKeyModelImmediateResponse: json.RawMessage(`true`), clientCapabilitiesKey: json.RawMessage(`{}`)}
		},
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

// TestSameCapsComparesEveryMember: capabilities that differ in any one
// member (every member of ClientCapabilities and of the types under it but
// tasks, set in turn) are not the same to sameCaps, so a member added to
// the generated type fails here until sameCaps compares it.
func TestSameCapsComparesEveryMember(t *testing.T) {
	n := 0
	var walk func(path string, v reflect.Value)
	walk = func(path string, v reflect.Value) {
		for i := range v.NumField() {
			f, name := v.Field(i), path+"."+v.Type().Field(i).Name
			if name == ".Tasks" {
				continue
			}
			switch f.Kind() {
			case reflect.Slice, reflect.Pointer: // json.RawMessage, a struct
				n++
				// Against the same value without it: its parents set.
				if sameCaps(withMember(t, path), withMember(t, name)) {
					t.Errorf("%s set, sameCaps says the same as unset", name)
				}
			}
			if f.Kind() == reflect.Pointer {
				walk(name, reflect.New(f.Type().Elem()).Elem())
			} else if f.Kind() != reflect.Slice {
				t.Errorf("%s: a %s member sameCaps does not know", name, f.Kind())
			}
		}
	}
	walk("", reflect.ValueOf(mcp.ClientCapabilities{}))
	if n < 9 {
		t.Errorf("%d members walked", n)
	}
}

// withMember is capabilities with only the member at path (".A.B") set: a
// slice to {}, the structs on its way allocated.
func withMember(t *testing.T, path string) *mcp.ClientCapabilities {
	t.Helper()
	c := &mcp.ClientCapabilities{}
	if path == "" {
		return c
	}
	v := reflect.ValueOf(c).Elem()
	names := strings.Split(path[1:], ".")
	for i, name := range names {
		f := v.FieldByName(name)
		switch f.Kind() {
		case reflect.Slice:
			f.SetBytes([]byte(`{}`))
		case reflect.Pointer:
			f.Set(reflect.New(f.Type().Elem()))
			if i < len(names)-1 {
				v = f.Elem()
			}
		}
	}
	return c
}

// TestWireCapsOwnCopy: the encoded capabilities kept do not share the
// caller's memory (a request's buffer, used again for the next): the same
// bytes changed in place are other capabilities.
func TestWireCapsOwnCopy(t *testing.T) {
	d := testDialect(mcp.Rev20260728)
	buf := []byte(`{"a.b/c":{}}`)
	caps := &mcp.ClientCapabilities{Extensions: buf}
	first, ok := d.wireCaps(caps)
	if !ok || string(first) != `{"extensions":{"a.b/c":{}}}` {
		t.Fatalf("%s, %v", first, ok)
	}
	copy(buf, `{"a.b/d":{}}`)
	if again, _ := d.wireCaps(caps); string(again) != `{"extensions":{"a.b/d":{}}}` || string(first) != `{"extensions":{"a.b/c":{}}}` {
		t.Errorf("after the buffer changed: %s (first %s)", again, first)
	}
	if _, ok := d.wireCaps(&mcp.ClientCapabilities{Tasks: &mcp.ClientCapabilitiesTasks{}}); ok {
		t.Error("tasks kept")
	}
}
