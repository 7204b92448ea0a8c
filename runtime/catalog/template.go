package catalog

import (
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"strings"
)

// uriTemplate matches URIs against an RFC 6570 level-1 template, the only
// level resource templates in mcpx's own namespaces need. Level-1 expansion
// percent-encodes everything but unreserved characters, so a variable
// matches a non-empty run of those and of percent-escapes; it can never
// swallow a "/" or "?" of the surrounding literal text, which keeps matching
// unambiguous for templates such as "test://template/{id}/data".
type uriTemplate struct {
	re   *regexp.Regexp
	vars []string
}

// varValue is what a level-1 expansion can produce: unreserved characters
// (RFC 3986 §2.3) and pct-encoded octets.
const varValue = `((?:[A-Za-z0-9._~-]|%[0-9A-Fa-f]{2})+)`

// parseURITemplate compiles a level-1 template. It rejects operators
// ({+x}, {#x}, {/x}, …), modifiers ({x*}, {x:3}), lists ({x,y}), unbalanced
// braces, repeated variable names, and two variables with no literal text
// between them, whose split would be a guess.
func parseURITemplate(s string) (*uriTemplate, error) {
	if s == "" {
		return nil, errors.New("empty URI template")
	}
	var re strings.Builder
	re.WriteString("^")
	t := &uriTemplate{}
	seen := map[string]bool{}
	lastWasVar := false
	for rest := s; rest != ""; {
		open := strings.IndexAny(rest, "{}")
		if open < 0 {
			re.WriteString(regexp.QuoteMeta(rest))
			break
		}
		if rest[open] == '}' {
			return nil, fmt.Errorf("unmatched '}' at offset %d", len(s)-len(rest)+open)
		}
		if open > 0 {
			re.WriteString(regexp.QuoteMeta(rest[:open]))
			lastWasVar = false
		}
		end := strings.IndexByte(rest[open:], '}')
		if end < 0 {
			return nil, fmt.Errorf("unclosed '{' at offset %d", len(s)-len(rest)+open)
		}
		name := rest[open+1 : open+end]
		if !isVarName(name) {
			return nil, fmt.Errorf("expression {%s}: only level-1 {name} expressions are supported", name)
		}
		if seen[name] {
			return nil, fmt.Errorf("variable %q appears twice", name)
		}
		if lastWasVar {
			return nil, fmt.Errorf("variable %q directly follows another; put literal text between them", name)
		}
		seen[name] = true
		t.vars = append(t.vars, name)
		re.WriteString(varValue)
		lastWasVar = true
		rest = rest[open+end+1:]
	}
	re.WriteString("$")
	t.re = regexp.MustCompile(re.String())
	return t, nil
}

// isVarName reports whether s is an RFC 6570 varname made of ALPHA, DIGIT
// and "_" (pct-encoded and dotted names are not needed here).
func isVarName(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if !(r == '_' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') {
			return false
		}
	}
	return true
}

// match reports whether uri is an expansion of the template and, if so,
// returns each variable's percent-decoded value.
func (t *uriTemplate) match(uri string) (map[string]string, bool) {
	m := t.re.FindStringSubmatch(uri)
	if m == nil {
		return nil, false
	}
	vars := make(map[string]string, len(t.vars))
	for i, name := range t.vars {
		v, err := url.PathUnescape(m[i+1])
		if err != nil {
			return nil, false
		}
		vars[name] = v
	}
	return vars, true
}
