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

// TestOmittedAsText: the generic fallback names the variant's kind and MIME
// type from its JSON members and keeps its annotations; a variant with
// neither is still named (by its Go type), and nothing panics.
func TestOmittedAsText(t *testing.T) {
	ann := &mcp.Annotations{Priority: new(float64)}
	for _, tc := range []struct {
		name string
		in   any
		want string
		ann  *mcp.Annotations
	}{
		{"audio, with a MIME type and annotations", &mcp.AudioContent{MIMEType: "audio/wav", Data: "AAAA", Annotations: ann, Meta: mcp.Meta{"k": json.RawMessage(`1`)}},
			"[audio content (audio/wav) omitted: this protocol revision cannot carry audio content]", ann},
		{"a variant without mimeType", &mcp.ResourceLink{Name: "n", URI: "file:///x"},
			"[resource_link content omitted: this protocol revision cannot carry resource_link content]", nil},
		{"no discriminator", &struct {
			Data string `json:"data"`
		}{"x"}, "[unknown content omitted", nil},
		{"nil", nil, "[unknown content omitted", nil},
	} {
		got := OmittedAsText(tc.in)
		if a, ok := tc.in.(*mcp.AudioContent); ok && string(got.Meta["k"]) != string(a.Meta["k"]) {
			t.Errorf("%s: _meta %v, want the block's own %v", tc.name, got.Meta, a.Meta)
		}
		if !strings.HasPrefix(got.Text, tc.want) || got.Annotations != tc.ann {
			t.Errorf("%s: OmittedAsText = %q (annotations %v), want %q… (annotations %v)", tc.name, got.Text, got.Annotations, tc.want, tc.ann)
		}
	}
}
