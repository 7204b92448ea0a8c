package gatewaytest

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/mcpx-dev/mcpx/testkit/closedworld"
)

// The forms the asking upstream (2025-11-25) sends for elicit_sep and
// elicit_multi.
const (
	sepForm = `{"type":"object","properties":{` +
		`"name":{"type":"string","title":"Name","default":"Ada"},` +
		`"count":{"type":"integer","minimum":1,"default":2},` +
		`"gift":{"type":"boolean","default":false},` +
		`"size":{"type":"string","title":"Size","oneOf":[{"const":"s","title":"Small"},{"const":"l","title":"Large"}],"default":"l"},` +
		`"crust":{"type":"string","enum":["thin","thick"],"default":"thin"}},"required":["name","size"]}`
	multiForm = `{"type":"object","properties":{"toppings":{"type":"array","items":{"type":"string","enum":["ham","olive"]}}}}`
)

// sepFormIn0618 is sepForm said the 2025-06-18 way: the defaults its
// StringSchema, NumberSchema and EnumSchema lack dropped (BooleanSchema
// has one), the titled oneOf as enum + enumNames.
const sepFormIn0618 = `{"type":"object","properties":{` +
	`"name":{"type":"string","title":"Name"},` +
	`"count":{"type":"integer","minimum":1},` +
	`"gift":{"type":"boolean","default":false},` +
	`"size":{"type":"string","title":"Size","enum":["s","l"],"enumNames":["Small","Large"]},` +
	`"crust":{"type":"string","enum":["thin","thick"]}},"required":["name","size"]}`

// TestFormFittedToTheClientsRevision: a 2025-11-25 upstream's form using
// SEP-1034 defaults and a SEP-1330 titled enum reaches a 2025-06-18
// client over HTTP rewritten so that each field is valid, closed-world,
// as a 2025-06-18 PrimitiveSchemaDefinition, and its answer reaches the
// upstream; a 2025-11-25 client gets the form as written. A multi-select,
// which 2025-06-18 cannot say, is refused to the upstream with -32602
// naming the field, and the client is not asked.
func TestFormFittedToTheClientsRevision(t *testing.T) {
	v, err := closedworld.Default()
	if err != nil {
		t.Fatal(err)
	}
	gw, _ := askGateway(t, askUpstream{ns: "h", rev: "2025-11-25", http: true})
	for _, tc := range []struct{ rev, want string }{{"2025-06-18", sepFormIn0618}, {"2025-11-25", sepForm}} {
		t.Run(tc.rev, func(t *testing.T) {
			c := newHTTPAskingClient(t, gw, tc.rev, declaresAll)
			if got := c.call("h__elicit_sep"); !strings.Contains(got, `"name":"Ada"`) {
				t.Errorf("the upstream's tool said %q, want the client's answer", got)
			}
			q := c.asked()
			if len(q) != 1 || q[0].Method != "elicitation/create" {
				t.Fatalf("the client was asked %+v, want one elicitation/create", q)
			}
			var p struct {
				RequestedSchema json.RawMessage `json:"requestedSchema"`
			}
			if err := json.Unmarshal(q[0].Params, &p); err != nil {
				t.Fatal(err)
			}
			if !sameJSON(string(p.RequestedSchema), tc.want) {
				t.Errorf("the client was asked with\n%s\nwant\n%s", p.RequestedSchema, tc.want)
			}
			var doc struct {
				Properties map[string]json.RawMessage `json:"properties"`
			}
			json.Unmarshal(p.RequestedSchema, &doc)
			for name, f := range doc.Properties {
				if err := v.Validate(tc.rev, "PrimitiveSchemaDefinition", f); err != nil {
					t.Errorf("field %s sent to a %s client: %v", name, tc.rev, err)
				}
			}

			got := c.call("h__elicit_multi")
			if tc.rev == "2025-11-25" {
				if !strings.Contains(got, `"action":"accept"`) {
					t.Errorf("multi-select to a 2025-11-25 client: the upstream got %q", got)
				}
				return
			}
			if !strings.HasPrefix(got, "error -32602: ") || !strings.Contains(got, `field "toppings" is a multi-select enum`) || !strings.Contains(got, "asked-client 9, 2025-06-18") {
				t.Errorf("the upstream got %q, want -32602 naming the field and the client", got)
			}
			if n := len(c.asked()); n != 1 {
				t.Errorf("the client was asked %d questions, want the first only", n)
			}
		})
	}
}
