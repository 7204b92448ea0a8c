package closedworld

import (
	"encoding/json"
	"math/big"
	"net/url"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/mcpx-dev/mcpx/schemas"
)

// node is a place in a schema document: the raw sub-schema, where it is (for
// compiling it on its own) and the type name mcpx-gen would give it.
type node struct {
	doc    *document
	ptr    string // JSON pointer into the document
	schema any    // map[string]any, or a bool schema
	name   string // definition name, or synthesized name of an inline schema
}

func (n node) child(tokens []string, schema any, name string) node {
	ptr := n.ptr
	for _, t := range tokens {
		ptr += schemas.Pointer(t)
	}
	return node{doc: n.doc, ptr: ptr, schema: schema, name: name}
}

// cwError is a closed-world failure before it is dressed as an [*Error].
type cwError struct {
	pointer string
	reason  string
}

// walker walks one instance against one revision's schema.
type walker struct {
	v   *Validator
	rev *revision
}

// Limits that keep a pathological schema from running away. The MCP schemas
// come nowhere near them.
const (
	maxRefChain     = 32  // $ref hops without reaching a schema
	maxDepth        = 64  // nested allOf/anyOf levels at one instance place
	maxAlternatives = 256 // allOf x anyOf combinations tried at one place
)

// check walks inst (a value decoded by jsonschema.UnmarshalJSON) against
// schema n. path is the instance location; meta says inst is a "_meta"
// object. Scalars are never closed-world failures.
func (w *walker) check(n node, inst any, path []string, meta bool) *cwError {
	switch inst.(type) {
	case map[string]any, []any:
	default:
		return nil
	}
	alts := w.alternatives(n, inst, 0)
	sort.SliceStable(alts, func(i, j int) bool { return score(alts[i], inst) > score(alts[j], inst) })
	var first *cwError
	for _, alt := range alts {
		err := w.checkAlt(alt, inst, path, meta)
		if err == nil {
			return nil
		}
		if first == nil {
			first = err
		}
	}
	return first
}

// alternatives expands n into the ways the instance can satisfy it. Each
// alternative is the set of object schemas that all apply at once: n itself
// plus every allOf branch, times one branch of each anyOf/oneOf (only the
// branches that jsonschema accepts for inst, unless none does). $refs are
// followed and contribute the definition's name.
func (w *walker) alternatives(n node, inst any, depth int) [][]node {
	n, ok := w.deref(n)
	m, isMap := n.schema.(map[string]any)
	if !ok || !isMap || depth > maxDepth {
		return [][]node{nil} // a bool schema, or one we cannot follow: no constraint here
	}
	alts := [][]node{{n}}
	if all, ok := m["allOf"].([]any); ok {
		for i, b := range all {
			sub := w.alternatives(n.child([]string{"allOf", strconv.Itoa(i)}, b, n.name), inst, depth+1)
			alts = product(alts, sub)
		}
	}
	for _, kw := range []string{"anyOf", "oneOf"} {
		branches, ok := m[kw].([]any)
		if !ok {
			continue
		}
		var valid, every [][]node
		for i, b := range branches {
			c := n.child([]string{kw, strconv.Itoa(i)}, b, n.name)
			sub := w.alternatives(c, inst, depth+1)
			every = append(every, sub...)
			if w.valid(c, inst) {
				valid = append(valid, sub...)
			}
		}
		if len(valid) == 0 {
			valid = every // jsonschema rejects every branch: let the walk say why the closest fails
		}
		alts = product(alts, valid)
	}
	return alts
}

// product combines every alternative of a with every alternative of b.
func product(a, b [][]node) [][]node {
	out := make([][]node, 0, len(a)*len(b))
	for _, x := range a {
		for _, y := range b {
			if len(out) == maxAlternatives {
				return out
			}
			out = append(out, append(append([]node(nil), x...), y...))
		}
	}
	return out
}

// deref follows $ref (always local, "#/..." in these schemas) until it
// reaches a schema without one. A $ref to a definition names the result
// after the definition. It reports false for a $ref it cannot follow.
func (w *walker) deref(n node) (node, bool) {
	for range maxRefChain {
		m, ok := n.schema.(map[string]any)
		if !ok {
			return n, true
		}
		ref, ok := m["$ref"].(string)
		if !ok {
			return n, true
		}
		frag, ok := strings.CutPrefix(ref, "#")
		if !ok {
			return n, false
		}
		ptr, err := url.PathUnescape(frag)
		if err != nil {
			return n, false
		}
		target, name, ok := n.doc.resolve(ptr)
		if !ok {
			return n, false
		}
		if name == "" {
			name = n.name
		}
		n = node{doc: n.doc, ptr: ptr, schema: target, name: name}
	}
	return n, false
}

// resolve looks up a JSON pointer in the document. name is the definition
// name when the pointer is exactly a definition.
func (d *document) resolve(ptr string) (schema any, name string, ok bool) {
	if ptr == "" {
		return d.root, "", true
	}
	if !strings.HasPrefix(ptr, "/") {
		return nil, "", false
	}
	tokens := strings.Split(ptr[1:], "/")
	var cur any = d.root
	for i, t := range tokens {
		t = strings.NewReplacer("~1", "/", "~0", "~").Replace(t)
		tokens[i] = t
		switch c := cur.(type) {
		case map[string]any:
			if cur, ok = c[t]; !ok {
				return nil, "", false
			}
		case []any:
			k, err := strconv.Atoi(t)
			if err != nil || k < 0 || k >= len(c) {
				return nil, "", false
			}
			cur = c[k]
		default:
			return nil, "", false
		}
	}
	if len(tokens) == 2 && tokens[0] == d.defsKey {
		name = tokens[1]
	}
	return cur, name, true
}

// valid reports whether the sub-schema at n, compiled on its own, accepts
// inst. A sub-schema that will not compile is given the benefit of the doubt.
func (w *walker) valid(n node, inst any) bool {
	sch, err := w.v.compile(n.doc.url + "#" + fragment(n.ptr))
	if err != nil {
		return true
	}
	return sch.Validate(inst) == nil
}

// score ranks an alternative by how well it fits inst: a "type" that differs
// from the instance's counts against it, and so does a member whose schema
// has a "const" (such as "type", "method", "mode", "resultType") that the
// instance contradicts; a const it matches counts for it.
func score(alt []node, inst any) int {
	s := 0
	obj, isObj := inst.(map[string]any)
	for _, n := range alt {
		m, _ := n.schema.(map[string]any)
		if t, ok := m["type"].(string); ok && t != jsonType(inst) {
			s -= 2
		}
		if !isObj {
			continue
		}
		props, _ := m["properties"].(map[string]any)
		for k, p := range props {
			pm, _ := p.(map[string]any)
			c, hasConst := pm["const"]
			v, present := obj[k]
			if !hasConst || !present {
				continue
			}
			if equalJSON(c, v) {
				s++
			} else {
				s--
			}
		}
	}
	return s
}

func jsonType(v any) string {
	switch v.(type) {
	case map[string]any:
		return "object"
	case []any:
		return "array"
	}
	return ""
}

// checkAlt checks one alternative: members of an object, items of an array.
func (w *walker) checkAlt(alt []node, inst any, path []string, meta bool) *cwError {
	switch inst := inst.(type) {
	case map[string]any:
		return w.checkObject(alt, inst, path, meta)
	case []any:
		return w.checkArray(alt, inst, path)
	}
	return nil
}

// checkObject applies the closed-world rule to every member of obj. A member
// is declared if any schema of the alternative lists it in "properties" or
// matches it with "patternProperties" (so allOf branches pool their
// properties). An undeclared member is rejected if some schema of the
// alternative has "properties" and no "additionalProperties" that admits it
// (or has "additionalProperties": false); schemas without "properties" are
// open. Inside a _meta object, undeclared ordinary keys are accepted and not
// walked, and undeclared reserved keys must be known to the revision.
func (w *walker) checkObject(alt []node, obj map[string]any, path []string, meta bool) *cwError {
	keys := make([]string, 0, len(obj))
	for k := range obj {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		var subs []node
		declared, closed, open := false, false, false
		for _, n := range alt {
			m, _ := n.schema.(map[string]any)
			props, hasProps := m["properties"].(map[string]any)
			if s, ok := props[k]; ok {
				declared = true
				subs = append(subs, n.child([]string{"properties", k}, s, n.name+schemas.GoName(k)))
				if w.rev.open[n.name+"."+k] {
					open = true
				}
				continue
			}
			matched := false
			if pp, ok := m["patternProperties"].(map[string]any); ok {
				for pat, s := range pp {
					if matchPattern(pat, k) {
						matched = true
						subs = append(subs, n.child([]string{"patternProperties", pat}, s, n.name))
					}
				}
			}
			if matched {
				declared = true
				continue
			}
			if ap, ok := m["additionalProperties"]; ok {
				if b, isBool := ap.(bool); isBool && !b {
					closed = true
				} else {
					subs = append(subs, n.child([]string{"additionalProperties"}, ap, n.name))
				}
				continue
			}
			if hasProps {
				closed = true
			}
		}
		at := append(path[:len(path):len(path)], k)
		if meta && !declared {
			if schemas.IsReservedMetaKey(k) && !w.rev.metaKeys[k] {
				return &cwError{pointer: schemas.Pointer(at...), reason: "reserved _meta key not declared by this revision"}
			}
			continue // an ordinary _meta key: open, not walked
		}
		if !declared && k == "_meta" && inheritsMeta(alt) {
			// Up to 2025-06-18 the schemas declare params._meta (for
			// progressToken) only on the abstract Request and Notification,
			// yet every request and notification may carry it: an open
			// _meta, whose reserved keys must still be known.
			if err := w.check(node{schema: map[string]any{"type": "object"}, name: "Meta"}, obj[k], at, true); err != nil {
				return err
			}
			continue
		}
		if !declared && closed {
			return &cwError{pointer: schemas.Pointer(at...), reason: "member not declared by this revision"}
		}
		if open {
			continue
		}
		for _, s := range subs {
			if err := w.check(s, obj[k], at, k == "_meta"); err != nil {
				return err
			}
		}
	}
	return nil
}

// checkArray walks every item against "prefixItems" (2020-12), a tuple
// "items" and "additionalItems" (draft-07), or "items". Items add nothing to
// the synthesized name.
func (w *walker) checkArray(alt []node, arr []any, path []string) *cwError {
	for i, item := range arr {
		at := append(path[:len(path):len(path)], strconv.Itoa(i))
		for _, n := range alt {
			m, _ := n.schema.(map[string]any)
			var sub node
			found := false
			idx := strconv.Itoa(i)
			if pi, ok := m["prefixItems"].([]any); ok && i < len(pi) {
				sub, found = n.child([]string{"prefixItems", idx}, pi[i], n.name), true
			} else if tuple, ok := m["items"].([]any); ok {
				if i < len(tuple) {
					sub, found = n.child([]string{"items", idx}, tuple[i], n.name), true
				} else if ai, ok := m["additionalItems"]; ok {
					sub, found = n.child([]string{"additionalItems"}, ai, n.name), true
				}
			} else if it, ok := m["items"]; ok {
				sub, found = n.child([]string{"items"}, it, n.name), true
			}
			if !found {
				continue
			}
			if err := w.check(sub, item, at, false); err != nil {
				return err
			}
		}
	}
	return nil
}

var patterns sync.Map // pattern string -> *regexp.Regexp (nil if it does not compile)

// matchPattern reports whether a patternProperties pattern matches key. A
// pattern Go cannot compile matches nothing.
func matchPattern(pat, key string) bool {
	re, ok := patterns.Load(pat)
	if !ok {
		c, err := regexp.Compile(pat)
		if err != nil {
			c = nil
		}
		re, _ = patterns.LoadOrStore(pat, c)
	}
	c, _ := re.(*regexp.Regexp)
	return c != nil && c.MatchString(key)
}

// equalJSON compares two decoded JSON values; numbers compare by value.
func equalJSON(a, b any) bool {
	switch a := a.(type) {
	case json.Number:
		bn, ok := b.(json.Number)
		if !ok {
			return false
		}
		x, okx := new(big.Rat).SetString(a.String())
		y, oky := new(big.Rat).SetString(bn.String())
		if !okx || !oky {
			return a == bn
		}
		return x.Cmp(y) == 0
	case map[string]any:
		bm, ok := b.(map[string]any)
		if !ok || len(a) != len(bm) {
			return false
		}
		for k, v := range a {
			if bv, ok := bm[k]; !ok || !equalJSON(v, bv) {
				return false
			}
		}
		return true
	case []any:
		bs, ok := b.([]any)
		if !ok || len(a) != len(bs) {
			return false
		}
		for i := range a {
			if !equalJSON(a[i], bs[i]) {
				return false
			}
		}
		return true
	default:
		return a == b
	}
}

// inheritsMeta reports whether the object is a method's params, named
// <Method>RequestParams or <Method>NotificationParams by synthesis.
func inheritsMeta(alt []node) bool {
	for _, n := range alt {
		if strings.HasSuffix(n.name, "RequestParams") || strings.HasSuffix(n.name, "NotificationParams") {
			return true
		}
	}
	return false
}
