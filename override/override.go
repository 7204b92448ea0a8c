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
func IsObjectSchema(raw json.RawMessage) bool {
	var s struct {
		Type json.RawMessage `json:"type"`
	}
	if !IsJSONObject(raw) || json.Unmarshal(raw, &s) != nil {
		return false
	}
	return string(s.Type) == `"object"`
}
