package override

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/mcpx-dev/mcpx/generated/mcp"
)

// isObjectSchemaSlow is the obvious implementation IsObjectSchema must agree with.
func isObjectSchemaSlow(raw json.RawMessage) bool {
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) != nil {
		return false
	}
	var typ string
	return json.Unmarshal(m["type"], &typ) == nil && typ == "object" && string(m["type"]) == `"object"`
}

var schemaCases = []struct {
	name string
	raw  string
	want bool
}{
	{"object root", `{"type":"object","properties":{"a":{"type":"string"}}}`, true},
	{"type after nested objects with a type", `{"properties":{"type":{"type":"array"}},"required":["type"], "type" : "object"}`, true},
	{"array root", `{"type":"array","items":{"type":"object"}}`, false},
	{"no type", `{"properties":{}}`, false},
	{"type list", `{"type":["object","null"]}`, false},
	{"not an object", `[{"type":"object"}]`, false},
	{"string containing braces and quotes", `{"description":"a \"}\" {", "type":"object"}`, true},
	{"empty", ``, false},
	{"truncated", `{"type":"obj`, false},
	{"leading space", " \n{\"type\":\"object\"}", true},
}

func TestIsObjectSchema(t *testing.T) {
	for _, tc := range schemaCases {
		if got := IsObjectSchema(json.RawMessage(tc.raw)); got != tc.want {
			t.Errorf("%s: IsObjectSchema(%s) = %v, want %v", tc.name, tc.raw, got, tc.want)
		}
	}
}

// FuzzIsObjectSchema: on every valid JSON input the scanner agrees with a
// full decode, and it never panics on invalid input.
func FuzzIsObjectSchema(f *testing.F) {
	for _, tc := range schemaCases {
		f.Add(tc.raw)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := IsObjectSchema(json.RawMessage(s))
		if !json.Valid([]byte(s)) {
			return
		}
		if want := isObjectSchemaSlow(json.RawMessage(s)); got != want && !strings.Contains(s, `\u`) {
			t.Errorf("IsObjectSchema(%q) = %v, full decode says %v", s, got, want)
		}
	})
}

func TestIsJSONObject(t *testing.T) {
	for raw, want := range map[string]bool{`{}`: true, ` {"a":1}`: true, `[1]`: false, `"x"`: false, `null`: false, ``: false} {
		if got := IsJSONObject(json.RawMessage(raw)); got != want {
			t.Errorf("IsJSONObject(%q) = %v", raw, got)
		}
	}
}

func TestFallbacksSayWhatWasLeftOut(t *testing.T) {
	if got := AudioAsText(&mcp.AudioContent{MIMEType: "audio/wav", Data: "aGk="}).Text; !strings.Contains(got, "audio/wav") {
		t.Errorf("AudioAsText = %q", got)
	}
	got := ResourceLinkAsText(&mcp.ResourceLink{Name: "readme", Title: "Read me", URI: "file:///r", Description: "the readme"}).Text
	if !strings.Contains(got, "Read me") || !strings.Contains(got, "file:///r") || !strings.Contains(got, "the readme") {
		t.Errorf("ResourceLinkAsText = %q", got)
	}
}
