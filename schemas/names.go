package schemas

import (
	"encoding/base64"
	"errors"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// GoName turns a wire name into the exported Go name mcpx-gen gives it:
// "uriTemplate" -> "URITemplate", "_meta" -> "Meta", "ref/prompt" ->
// "RefPrompt". An inline type is named after its definition plus the GoName
// of each member on the way down, so everything that refers to such a place
// by name (the overlay, the closed-world validator) must use this function.
func GoName(s string) string {
	var parts []string
	cur := []rune{}
	flush := func() {
		if len(cur) > 0 {
			parts = append(parts, string(cur))
			cur = cur[:0]
		}
	}
	for _, r := range s {
		switch {
		case r >= 'A' && r <= 'Z':
			flush()
			cur = append(cur, r)
		case r >= 'a' && r <= 'z' || r >= '0' && r <= '9':
			cur = append(cur, r)
		default:
			flush()
		}
	}
	flush()
	var b strings.Builder
	for _, p := range parts {
		if up := strings.ToUpper(p); initialisms[up] {
			b.WriteString(up)
			continue
		}
		b.WriteString(strings.ToUpper(p[:1]) + p[1:])
	}
	out := b.String()
	if out == "" || out[0] >= '0' && out[0] <= '9' {
		out = "X" + out
	}
	return out
}

var initialisms = map[string]bool{"ID": true, "URI": true, "URL": true, "MIME": true, "TTL": true, "JSON": true, "RPC": true, "HTTP": true, "API": true}

// IsReservedMetaKey reports whether a _meta key uses a prefix the
// specification reserves: one whose second dot-label is modelcontextprotocol
// or mcp, as in "io.modelcontextprotocol/serverInfo".
func IsReservedMetaKey(k string) bool {
	prefix, _, ok := strings.Cut(k, "/")
	if !ok {
		return false
	}
	labels := strings.Split(prefix, ".")
	return len(labels) >= 2 && (labels[1] == "modelcontextprotocol" || labels[1] == "mcp")
}

// ByteFormat is the "byte" string format (standard base64) the MCP schemas
// use for binary data; jsonschema/v6 does not know it by default.
var ByteFormat = &jsonschema.Format{
	Name: "byte",
	Validate: func(v any) error {
		s, ok := v.(string)
		if !ok {
			return nil
		}
		if _, err := base64.StdEncoding.DecodeString(s); err != nil {
			return errors.New("not standard base64")
		}
		return nil
	},
}

// NewCompiler returns a jsonschema/v6 compiler set up as mcpx uses it
// everywhere: formats asserted, "byte" registered.
func NewCompiler() *jsonschema.Compiler {
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	c.RegisterFormat(ByteFormat)
	return c
}
