package auth

import (
	"path"
	"slices"
	"strings"
)

// Rule grants the principals it names the tools, prompts and resources
// its patterns match. Patterns are globs (path.Match: * matches any run
// of characters but '/', ? one character) over the names and URIs clients
// see: exposed tool and prompt names such as "files__read_*", resource
// URIs and URI templates such as "mcpx://files/*".
type Rule struct {
	// Principals the rule is for: "sub:<subject>" (a JWT's sub),
	// "token:<name>" (a static token), "group:<name>" (a value of the
	// JWT's groups claim), or "*" (anyone authenticated).
	Principals []string
	Tools      []string
	Prompts    []string
	Resources  []string
}

// Policy is the access rules of the config. A nil Policy lets everyone
// use everything; otherwise a principal may use what at least one rule
// naming it grants, and nothing else.
type Policy struct {
	Rules []Rule
}

// View is what one principal may use under a policy: nil means
// everything.
type View struct {
	key   string
	rules []*Rule
}

// ViewOf is the view of p under the policy. Principals that match the same
// rules share a Key, so what is cached for one serves the others.
func (pol *Policy) ViewOf(p *Principal) *View {
	if pol == nil {
		return nil
	}
	v := &View{}
	var key strings.Builder
	for i := range pol.Rules {
		if pol.Rules[i].names(p) {
			v.rules = append(v.rules, &pol.Rules[i])
			key.WriteByte(byte('a' + i%26))
			key.WriteString(strings.Repeat("'", i/26))
		}
	}
	v.key = "rules:" + key.String()
	return v
}

func (r *Rule) names(p *Principal) bool {
	if p == nil {
		return false
	}
	id := p.ID()
	for _, who := range r.Principals {
		switch {
		case who == "*" || who == id:
			return true
		case strings.HasPrefix(who, "group:") && slices.Contains(p.Groups, who[len("group:"):]):
			return true
		}
	}
	return false
}

// Key identifies the view among views: "" for everything.
func (v *View) Key() string {
	if v == nil {
		return ""
	}
	return v.key
}

// Tool reports whether the view includes the tool of that exposed name.
func (v *View) Tool(name string) bool {
	return v.allows(name, func(r *Rule) []string { return r.Tools })
}

// Prompt reports whether the view includes the prompt.
func (v *View) Prompt(name string) bool {
	return v.allows(name, func(r *Rule) []string { return r.Prompts })
}

// Resource reports whether the view includes the resource URI (or URI
// template).
func (v *View) Resource(uri string) bool {
	return v.allows(uri, func(r *Rule) []string { return r.Resources })
}

func (v *View) allows(name string, patterns func(*Rule) []string) bool {
	if v == nil {
		return true
	}
	for _, r := range v.rules {
		for _, pat := range patterns(r) {
			if Match(pat, name) {
				return true
			}
		}
	}
	return false
}

// Match reports whether name matches the glob pat. Unlike path.Match, '*'
// also crosses '/', so "mcpx://files/*" matches every resource of files;
// a malformed pattern matches nothing (the config check refuses it).
func Match(pat, name string) bool {
	if pat == "*" {
		return true
	}
	// Replace '/' by a byte path.Match's '*' crosses: patterns and
	// names are compared the same way.
	const slash = "\x00"
	ok, err := path.Match(strings.ReplaceAll(pat, "/", slash), strings.ReplaceAll(name, "/", slash))
	return err == nil && ok
}

// ValidPattern reports whether pat is a glob Match understands.
func ValidPattern(pat string) bool {
	_, err := path.Match(pat, "")
	return err == nil
}
