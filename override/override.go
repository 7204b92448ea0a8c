// Package override holds the few conversion steps that need code, each named
// by an entry of schemas/overlay.json and called by the generated
// converters. A missing or misnamed function breaks the build, so the
// overlay and this package cannot drift apart.
//
// Every function takes and returns hub types only: the generated converter
// runs it first and then converts the result to the target revision as usual.
package override

import (
	"encoding/json"
	"reflect"
	"strings"

	"github.com/mcpx-dev/mcpx/generated/mcp"
)

// AudioAsText stands in for an audio block sent to a revision that has no
// audio content (overlay: fallback ContentBlock audio, ..2024-11-05). The
// client learns that something was left out instead of failing to decode the
// whole message.
func AudioAsText(a *mcp.AudioContent) *mcp.TextContent {
	return &mcp.TextContent{Text: "[audio content (" + a.MIMEType + ") omitted: this protocol revision cannot carry audio]", Annotations: a.Annotations}
}

// ResourceLinkAsText stands in for a resource link sent to a revision that
// has none (overlay: fallback ContentBlock resource_link, ..2025-03-26): the
// link's name and URI as text, since embedding would mean reading it.
func ResourceLinkAsText(l *mcp.ResourceLink) *mcp.TextContent {
	var b strings.Builder
	b.WriteString("Resource: ")
	if l.Title != "" {
		b.WriteString(l.Title)
	} else {
		b.WriteString(l.Name)
	}
	b.WriteString(" <" + l.URI + ">")
	if l.Description != "" {
		b.WriteString(": " + l.Description)
	}
	return &mcp.TextContent{Text: b.String(), Annotations: l.Annotations}
}

// OmittedAsText stands in for any content block a revision lacks that no
// specific fallback covers (overlay: fallback ContentBlock "*"), so that a
// content kind a newer revision adds reaches older clients as a text block
// saying what was left out, not as an error for the whole message, with no
// new Go. v is the hub variant (a pointer to a struct); its members are found
// by their JSON names, as the schema spells them: the discriminator "type",
// "mimeType", and "annotations" and "_meta", which the stand-in keeps, each
// where the variant has it.
func OmittedAsText(v any) *mcp.TextContent {
	var (
		kind, mime string
		ann        *mcp.Annotations
		meta       mcp.Meta
	)
	rv := reflect.ValueOf(v)
	for rv.Kind() == reflect.Pointer && !rv.IsNil() {
		rv = rv.Elem()
	}
	if rv.Kind() == reflect.Struct {
		for i := 0; i < rv.NumField(); i++ {
			f := rv.Type().Field(i)
			if !f.IsExported() {
				continue
			}
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			fv := rv.Field(i)
			switch name {
			case "type", "mimeType":
				// A constant type marshals as its value; a string as itself.
				var s string
				if b, err := json.Marshal(fv.Interface()); err != nil || json.Unmarshal(b, &s) != nil {
					continue
				}
				if name == "type" {
					kind = s
				} else {
					mime = s
				}
			case "annotations":
				ann, _ = fv.Interface().(*mcp.Annotations)
			case "_meta":
				meta, _ = fv.Interface().(mcp.Meta)
			}
		}
	}
	if kind == "" { // no discriminator: name the Go type, which is the schema's name
		kind = "unknown"
		if rv.IsValid() && rv.Type().Name() != "" {
			kind = rv.Type().Name()
		}
	}
	what := kind + " content"
	if mime != "" {
		what += " (" + mime + ")"
	}
	return &mcp.TextContent{Meta: meta, Text: "[" + what + " omitted: this protocol revision cannot carry " + kind + " content]", Annotations: ann}
}

// IsJSONObject reports whether raw is a JSON object (overlay: keep-if
// CallToolResult.structuredContent, 2025-06-18..2025-11-25, where the schema
// types it as an object).
func IsJSONObject(raw json.RawMessage) bool {
	for _, c := range raw {
		switch c {
		case ' ', '\t', '\r', '\n':
			continue
		}
		return c == '{'
	}
	return false
}

// IsObjectSchema reports whether raw is a JSON Schema whose root has type
// "object" (overlay: keep-if Tool.outputSchema, 2025-06-18..2025-11-25).
// It runs on every tool of every tools/list sent to those revisions, so it
// scans the top level of the object instead of decoding it; a root type
// written with escapes ("obj\u0065ct") is not recognised and the schema is
// dropped, which is the safe direction.
func IsObjectSchema(raw json.RawMessage) bool {
	i := skipSpace(raw, 0)
	if i >= len(raw) || raw[i] != '{' {
		return false
	}
	i++
	for {
		i = skipSpace(raw, i)
		if i >= len(raw) || raw[i] != '"' {
			return false // '}' (no type) or malformed
		}
		end := skipString(raw, i)
		if end < 0 {
			return false
		}
		key := raw[i+1 : end-1]
		i = skipSpace(raw, end)
		if i >= len(raw) || raw[i] != ':' {
			return false
		}
		i = skipSpace(raw, i+1)
		valEnd := skipValue(raw, i)
		if valEnd < 0 {
			return false
		}
		if string(key) == "type" {
			return string(raw[i:valEnd]) == `"object"`
		}
		i = skipSpace(raw, valEnd)
		if i >= len(raw) || raw[i] != ',' {
			return false
		}
		i++
	}
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\r' || b[i] == '\n') {
		i++
	}
	return i
}

// skipString returns the index after the string starting at b[i] == '"', or -1.
func skipString(b []byte, i int) int {
	for j := i + 1; j < len(b); j++ {
		switch b[j] {
		case '\\':
			j++
		case '"':
			return j + 1
		}
	}
	return -1
}

// skipValue returns the index after the JSON value starting at b[i], or -1.
// Nested objects and arrays are skipped by depth, minding strings.
func skipValue(b []byte, i int) int {
	if i >= len(b) {
		return -1
	}
	switch b[i] {
	case '"':
		return skipString(b, i)
	case '{', '[':
		depth := 0
		for j := i; j < len(b); j++ {
			switch b[j] {
			case '"':
				end := skipString(b, j)
				if end < 0 {
					return -1
				}
				j = end - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return j + 1
				}
			}
		}
		return -1
	}
	j := i
	for j < len(b) && b[j] != ',' && b[j] != '}' && b[j] != ']' && b[j] != ' ' && b[j] != '\t' && b[j] != '\r' && b[j] != '\n' {
		j++
	}
	if j == i {
		return -1
	}
	return j
}
