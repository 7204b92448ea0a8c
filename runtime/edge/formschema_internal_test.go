package edge

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/mcpx-dev/mcpx/generated/mcp"
	"github.com/mcpx-dev/mcpx/generated/revision"
	"github.com/mcpx-dev/mcpx/runtime/jsonrpc"
	"github.com/mcpx-dev/mcpx/testkit/closedworld"
)

// Fields of a 2025-11-25 form (SEP-1034 defaults, SEP-1330 enums).
const (
	fString     = `{"type":"string","title":"Name","minLength":1,"default":"Ada"}`
	fNumber     = `{"type":"integer","minimum":0,"default":3}`
	fBool       = `{"type":"boolean","default":true}`
	fUntitled   = `{"type":"string","enum":["s","m","l"],"default":"m"}`
	fTitled     = `{"type":"string","title":"Size","description":"Pick one","oneOf":[{"const":"s","title":"Small"},{"const":"l","title":"Large"}],"default":"l"}`
	fLegacy     = `{"type":"string","enum":["a","b"],"enumNames":["A","B"],"default":"a"}`
	fMulti      = `{"type":"array","items":{"type":"string","enum":["x","y"]},"default":["x"]}`
	fMultiTitle = `{"type":"array","items":{"anyOf":[{"const":"x","title":"X"}]}}`
	fPlain      = `{"type":"string","enum":["s","m"]}`
)

func form(fields ...string) json.RawMessage {
	var b strings.Builder
	b.WriteString(`{"type":"object","properties":{`)
	for i := 0; i+1 < len(fields); i += 2 {
		if i > 0 {
			b.WriteString(",")
		}
		b.WriteString(`"` + fields[i] + `":` + fields[i+1])
	}
	b.WriteString(`},"required":["f"]}`)
	return json.RawMessage(b.String())
}

// TestFitForm: a requestedSchema fitted to each revision that has
// elicitation, from its tables: unchanged where the revision has the
// field's type; to 2025-06-18 a default its StringSchema, NumberSchema
// or EnumSchema lacks is dropped (BooleanSchema keeps it), a titled
// oneOf becomes enum + enumNames in order, and a multi-select is refused
// -32602 naming the field. Every field of the result is valid,
// closed-world, as the revision's PrimitiveSchemaDefinition.
func TestFitForm(t *testing.T) {
	v, err := closedworld.Default()
	if err != nil {
		t.Fatal(err)
	}
	type want struct {
		field string // the field's form after fitting; "" = refused
		says  string // the refusal names this
	}
	for _, tc := range []struct {
		name    string
		field   string
		by      map[mcp.Revision]want
		invalid bool // the field is invalid as written: a revision that has its type passes it on as it is
	}{
		{"string default", fString, map[mcp.Revision]want{
			"2025-06-18": {field: `{"type":"string","title":"Name","minLength":1}`}}, false},
		{"number default", fNumber, map[mcp.Revision]want{
			"2025-06-18": {field: `{"type":"integer","minimum":0}`}}, false},
		{"boolean default", fBool, map[mcp.Revision]want{
			"2025-06-18": {field: fBool}}, false},
		{"untitled single-select", fUntitled, map[mcp.Revision]want{
			"2025-06-18": {field: `{"type":"string","enum":["s","m","l"]}`}}, false},
		{"titled single-select", fTitled, map[mcp.Revision]want{
			"2025-06-18": {field: `{"type":"string","title":"Size","description":"Pick one","enum":["s","l"],"enumNames":["Small","Large"]}`}}, false},
		{"legacy titled", fLegacy, map[mcp.Revision]want{
			"2025-06-18": {field: `{"type":"string","enum":["a","b"],"enumNames":["A","B"]}`}}, false},
		{"plain enum", fPlain, map[mcp.Revision]want{
			"2025-06-18": {field: fPlain}}, false},
		{"multi-select", fMulti, map[mcp.Revision]want{
			"2025-06-18": {says: `field "f" is a multi-select enum (type array), which its revision's forms lack (no UntitledMultiSelectEnumSchema)`}}, false},
		{"titled multi-select", fMultiTitle, map[mcp.Revision]want{
			"2025-06-18": {says: `field "f" is a multi-select enum (type array), which its revision's forms lack (no TitledMultiSelectEnumSchema)`}}, false},
		{"titled oneOf without titles", `{"type":"string","oneOf":[{"const":"s"}]}`, map[mcp.Revision]want{
			"2025-06-18": {says: `field "f" has a oneOf choice without a string const and title`}}, true},
	} {
		for _, rev := range []mcp.Revision{"2025-06-18", "2025-11-25", "2026-07-28"} {
			t.Run(tc.name+"/"+string(rev), func(t *testing.T) {
				w, ok := tc.by[rev]
				if !ok {
					w = want{field: tc.field} // a revision that has every variant
				}
				in := form("f", tc.field, "other", fBool)
				got, err := fitForm(revision.Lookup(rev), in, "c 1, "+string(rev))
				if w.field == "" {
					var je *jsonrpc.Error
					if !errors.As(err, &je) || je.Code != jsonrpc.InvalidParams || !strings.Contains(je.Message, w.says) || !strings.Contains(je.Message, "c 1, "+string(rev)) {
						t.Fatalf("got %s, %v; want -32602 saying %q and naming the client", got, err, w.says)
					}
					return
				}
				if err != nil {
					t.Fatal(err)
				}
				if w.field == tc.field && string(got) != string(in) {
					t.Errorf("changed a form the revision can carry:\n%s\n->\n%s", in, got)
				}
				var doc struct {
					Properties map[string]json.RawMessage `json:"properties"`
					Required   []string                   `json:"required"`
				}
				if err := json.Unmarshal(got, &doc); err != nil {
					t.Fatal(err)
				}
				if !jsonEqual(t, doc.Properties["f"], w.field) || !jsonEqual(t, doc.Properties["other"], fBool) || len(doc.Required) != 1 {
					t.Errorf("fitted form:\n%s\nwant field f %s", got, w.field)
				}
				for name, p := range doc.Properties {
					if tc.invalid && !ok {
						break
					}
					if err := v.Validate(string(rev), "PrimitiveSchemaDefinition", p); err != nil {
						t.Errorf("field %s is not valid in %s: %v", name, rev, err)
					}
				}
			})
		}
	}
}

func jsonEqual(t *testing.T, a json.RawMessage, b string) bool {
	t.Helper()
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal([]byte(b), &y) != nil {
		return false
	}
	xa, _ := json.Marshal(x)
	ya, _ := json.Marshal(y)
	return string(xa) == string(ya)
}
