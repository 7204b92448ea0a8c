package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
)

// DocCommand is the command that writes docs/gateway.md from [GatewayDoc].
const DocCommand = "go test ./runtime/config -run TestGatewayDoc -update"

// GatewayDoc renders docs/gateway.md, the configuration reference, from the
// embedded schema: every key with its type, default, allowed values and
// description, one section per object (the top level, then each object
// definition in the order the schema first refers to it), keys in the
// order the schema lists them. What the reference says is the schema's; the
// renderer adds only the page's title and the lines that say where it comes
// from. It fails on a keyword it does not know how to show, so that nothing
// the schema says is left out.
func GatewayDoc() ([]byte, error) {
	root, err := parseOrdered(schemaJSON)
	if err != nil {
		return nil, fmt.Errorf("config: the embedded schema: %w", err)
	}
	top, ok := root.(*object)
	if !ok {
		return nil, errors.New("config: the embedded schema is not an object")
	}
	r := &renderer{defs: map[string]*object{}}
	if defs, ok := top.get("$defs").(*object); ok {
		for _, k := range defs.keys {
			d, ok := defs.get(k).(*object)
			if !ok {
				return nil, fmt.Errorf("config: $defs/%s is not an object", k)
			}
			r.defs[k] = d
		}
	}
	r.line("# Gateway configuration")
	r.line("")
	r.line("<!-- Generated from runtime/config/schema.json by `" + DocCommand + "`. Do not edit. -->")
	r.line("")
	r.line(prose(str(top, "description")))
	r.line("")
	r.line("`mcpx config check FILE` checks a file and names every problem; `mcpx config schema` prints the schema this page is rendered from, for editors (`\"$schema\"`).")
	r.section("Top level", "", top)
	for len(r.queue) > 0 {
		name := r.queue[0]
		r.queue = r.queue[1:]
		d := r.defs[name]
		r.section(title(name, d), str(d, "description"), d)
	}
	if r.err != nil {
		return nil, r.err
	}
	return r.buf.Bytes(), nil
}

// renderer writes the page; the first error stops it.
type renderer struct {
	buf    bytes.Buffer
	defs   map[string]*object
	queue  []string        // object definitions still to render
	queued map[string]bool // every definition ever queued
	err    error
}

func (r *renderer) line(s string) { r.buf.WriteString(s + "\n") }

func (r *renderer) fail(format string, args ...any) {
	if r.err == nil {
		r.err = fmt.Errorf("config: rendering the schema: "+format, args...)
	}
}

// title is a definition's heading: its "title", else its name.
func title(name string, d *object) string {
	if t := str(d, "title"); t != "" {
		return t
	}
	return name
}

// anchor is the fragment GitHub gives a heading.
func anchor(heading string) string {
	var b strings.Builder
	for _, c := range strings.ToLower(heading) {
		switch {
		case c == ' ' || c == '-':
			b.WriteRune('-')
		case c == '_' || ('a' <= c && c <= 'z') || ('0' <= c && c <= '9'):
			b.WriteRune(c)
		}
	}
	return b.String()
}

// link refers to the section of definition name, queueing it.
func (r *renderer) link(name string) string {
	d := r.defs[name]
	if d == nil {
		r.fail("no definition %q", name)
		return name
	}
	if r.queued == nil {
		r.queued = map[string]bool{}
	}
	if !r.queued[name] {
		r.queued[name] = true
		r.queue = append(r.queue, name)
	}
	h := title(name, d)
	return "[" + h + "](#" + anchor(h) + ")"
}

// known are the keywords the renderer shows (or, for the annotations of the
// schema as a whole, deliberately leaves out).
var known = map[string]bool{
	"$schema": true, "$id": true, "$defs": true, "$ref": true, "title": true, "description": true,
	"type": true, "enum": true, "default": true, "pattern": true, "minLength": true,
	"minimum": true, "maximum": true, "items": true, "uniqueItems": true,
	"properties": true, "additionalProperties": true, "propertyNames": true, "required": true,
	"oneOf": true, "not": true, "dependentSchemas": true, "errorMessage": true,
}

func (r *renderer) check(where string, s *object) {
	for _, k := range s.keys {
		if !known[k] {
			r.fail("%s: keyword %q is not shown by GatewayDoc; teach runtime/config/doc.go to render it", where, k)
		}
	}
}

// section renders one object: its keys as a table, then what the schema
// says about them together.
func (r *renderer) section(heading, intro string, s *object) {
	r.check(heading, s)
	r.line("")
	r.line("## " + heading)
	if intro != "" {
		r.line("")
		r.line(prose(intro))
	}
	if props, ok := s.get("properties").(*object); ok {
		r.line("")
		r.line("| Key | Type | Default | Allowed | Description |")
		r.line("|---|---|---|---|---|")
		for _, k := range props.keys {
			p, ok := props.get(k).(*object)
			if !ok {
				r.fail("%s: properties/%s is not a schema", heading, k)
				continue
			}
			r.check(heading+"/"+k, p)
			typ, limits := r.describe(heading+"/"+k, p)
			if limits == "" {
				limits = "—"
			}
			r.line("| " + cell(code(k)) + " | " + cell(typ) + " | " + cell(r.defaultOf(p)) + " | " + cell(limits) + " | " + cell(prose(str(p, "description"))) + " |")
		}
	}
	var notes []string
	if pn, ok := s.get("propertyNames").(*object); ok {
		r.check(heading+"/propertyNames", pn)
		notes = append(notes, "Each key: "+r.limits(pn)+".")
	}
	if ap, ok := s.get("additionalProperties").(*object); ok {
		typ, limits := r.describe(heading+"/additionalProperties", ap)
		n := "Each value: " + typ
		if limits != "" {
			n += "; " + limits
		}
		notes = append(notes, n+".")
	}
	if req := strings.Join(quoted(s.get("required")), ", "); req != "" {
		notes = append(notes, "Required: "+req+".")
	}
	if one, ok := s.get("oneOf").([]any); ok {
		var alts []string
		for _, o := range one {
			branch, ok := o.(*object)
			req := quoted(branch.get("required"))
			if !ok || len(req) != 1 || len(branch.keys) != 1 {
				r.fail("%s: oneOf other than one required key per branch", heading)
				continue
			}
			alts = append(alts, req[0])
		}
		neither, both := "None", "More than one"
		if len(alts) == 2 {
			neither, both = "Neither", "Both"
		}
		notes = append(notes, "Exactly one of "+andList(alts, "", "")+"."+r.said(s, "oneOf", neither)+r.said(s, "oneOf:many", both))
	}
	if not, ok := s.get("not").(*object); ok {
		req := quoted(not.get("required"))
		if len(not.keys) != 1 || len(req) < 2 {
			r.fail("%s: not other than a list of required keys", heading)
		}
		notes = append(notes, "Not "+andList(req, "both ", "all of ")+"."+r.said(s, "not", "Both"))
	}
	if dep, ok := s.get("dependentSchemas").(*object); ok {
		for _, k := range dep.keys {
			d, _ := dep.get(k).(*object)
			props, ok := d.get("properties").(*object)
			if !ok || len(d.keys) != 1 {
				r.fail("%s: dependentSchemas/%s other than properties that are forbidden", heading, k)
				continue
			}
			var banned []string
			reason := ""
			for _, pk := range props.keys {
				ps, _ := props.get(pk).(*object)
				target := r.resolve(ps)
				if n, ok := target.get("not").(*object); !ok || len(n.keys) != 0 {
					r.fail("%s: dependentSchemas/%s/%s is not a forbidden key", heading, k, pk)
					continue
				}
				banned = append(banned, code(pk))
				if m, ok := target.get("errorMessage").(*object); ok && reason == "" {
					reason = str(m, "not")
				}
			}
			n := "With " + code(k) + ", no " + orList(banned)
			if reason != "" {
				n += ": " + prose(reason)
			}
			notes = append(notes, n+".")
		}
	}
	switch ap := s.get("additionalProperties").(type) {
	case bool:
		if !ap {
			notes = append(notes, "No other keys.")
		}
	case nil:
		if s.get("properties") != nil {
			notes = append(notes, "Other keys are allowed and not checked.")
		}
	}
	if len(notes) > 0 {
		r.line("")
		for _, n := range notes {
			r.line("- " + n)
		}
	}
}

// said is the schema's own wording (errorMessage) for keyword k failing,
// as a sentence after case; "" when it has none.
func (r *renderer) said(s *object, k, when string) string {
	m, ok := s.get("errorMessage").(*object)
	if !ok || str(m, k) == "" {
		return ""
	}
	return " " + when + ": " + prose(str(m, k)) + "."
}

// resolve follows a $ref into $defs.
func (r *renderer) resolve(s *object) *object {
	ref := str(s, "$ref")
	if ref == "" {
		return s
	}
	name, ok := strings.CutPrefix(ref, "#/$defs/")
	if !ok || r.defs[name] == nil {
		r.fail("$ref %q is not a definition of this schema", ref)
		return &object{}
	}
	return r.defs[name]
}

// describe returns the type a value has and its limits, following a $ref
// to a definition: one with keys of its own becomes a link to its section.
func (r *renderer) describe(where string, s *object) (typ, limits string) {
	if ref := str(s, "$ref"); ref != "" {
		name := strings.TrimPrefix(ref, "#/$defs/")
		d := r.resolve(s)
		r.check(where+"/$ref", d)
		if d.get("properties") != nil || d.get("propertyNames") != nil {
			return r.link(name), ""
		}
		return r.describe(where, d)
	}
	typ = str(s, "type")
	if typ == "" {
		if e, ok := s.get("enum").([]any); ok && len(e) > 0 {
			if _, ok := e[0].(string); ok {
				typ = "string"
			}
		}
	}
	switch typ {
	case "":
		r.fail("%s: no type", where)
	case "array":
		items, ok := s.get("items").(*object)
		if !ok {
			r.fail("%s: an array without items", where)
			break
		}
		it, il := r.describe(where+"/items", items)
		typ = "array of " + it
		if il != "" {
			limits = join(limits, "each item "+il)
		}
	case "object":
		if ap, ok := s.get("additionalProperties").(*object); ok && s.get("properties") == nil {
			vt, vl := r.describe(where+"/additionalProperties", ap)
			typ = "object of " + vt
			if vl != "" {
				limits = join(limits, "each value "+vl)
			}
		}
	}
	return typ, join(r.limits(s), limits)
}

// limits says what values are allowed beyond the type.
func (r *renderer) limits(s *object) string {
	var out []string
	if e, ok := s.get("enum").([]any); ok {
		var vals []string
		for _, v := range e {
			b, _ := json.Marshal(v)
			vals = append(vals, code(string(b)))
		}
		out = append(out, "one of "+strings.Join(vals, ", "))
	}
	if p := str(s, "pattern"); p != "" {
		n := "matches " + code(p)
		if m, ok := s.get("errorMessage").(*object); ok && str(m, "pattern") != "" {
			n += " (" + prose(str(m, "pattern")) + ")"
		}
		out = append(out, n)
	}
	if n, ok := s.get("minLength").(json.Number); ok {
		if n.String() == "1" {
			out = append(out, "not empty")
		} else {
			out = append(out, "at least "+n.String()+" characters")
		}
	}
	lo, hasLo := s.get("minimum").(json.Number)
	hi, hasHi := s.get("maximum").(json.Number)
	switch {
	case hasLo && hasHi:
		out = append(out, lo.String()+" to "+hi.String())
	case hasLo:
		out = append(out, "at least "+lo.String())
	case hasHi:
		out = append(out, "at most "+hi.String())
	}
	if u, _ := s.get("uniqueItems").(bool); u {
		out = append(out, "no repeats")
	}
	return strings.Join(out, "; ")
}

func (r *renderer) defaultOf(s *object) string {
	v := s.get("default")
	if v == nil {
		return "—"
	}
	b, err := json.Marshal(v)
	if err != nil {
		r.fail("default %v: %v", v, err)
	}
	return code(string(b))
}

func join(a, b string) string {
	switch {
	case a == "":
		return b
	case b == "":
		return a
	}
	return a + "; " + b
}

// cell makes s safe in a table cell.
func cell(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "|", `\|`), "\n", " ")
}

// code is s as inline code, fenced with enough backticks.
func code(s string) string {
	fence := "`"
	for strings.Contains(s, fence) {
		fence += "`"
	}
	if strings.HasPrefix(s, "`") || strings.HasSuffix(s, "`") {
		return fence + " " + s + " " + fence
	}
	return fence + s + fence
}

func quoted(v any) []string {
	list, _ := v.([]any)
	var out []string
	for _, x := range list {
		if s, ok := x.(string); ok {
			out = append(out, code(s))
		}
	}
	return out
}

// orList is "a", "a or b", "a, b or c".
func orList(items []string) string {
	if len(items) < 2 {
		return strings.Join(items, "")
	}
	return strings.Join(items[:len(items)-1], ", ") + " or " + items[len(items)-1]
}

// andList is two+"a and b", or more+"a, b, c".
func andList(items []string, two, more string) string {
	if len(items) == 2 {
		return two + items[0] + " and " + items[1]
	}
	return more + strings.Join(items, ", ")
}

// prose escapes what Markdown would read as markup in the schema's text:
// "<name>" would be an HTML tag, "__" emphasis.
func prose(s string) string {
	return strings.NewReplacer(`\`, `\\`, "<", `\<`, ">", `\>`, "*", `\*`, "_", `\_`, "[", `\[`, "]", `\]`, "`", "\\`").Replace(s)
}

func str(s *object, key string) string {
	v, _ := s.get(key).(string)
	return v
}

// object is a JSON object that keeps its members' order.
type object struct {
	keys []string
	vals map[string]any
}

func (o *object) get(key string) any {
	if o == nil {
		return nil
	}
	return o.vals[key]
}

// parseOrdered decodes JSON into *object, []any, string, json.Number, bool
// and nil, keeping the order of object members.
func parseOrdered(data []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	v, err := decodeValue(dec)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("trailing data after the schema")
	}
	return v, nil
}

func decodeValue(dec *json.Decoder) (any, error) {
	t, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch t {
	case json.Delim('{'):
		o := &object{vals: map[string]any{}}
		for dec.More() {
			kt, err := dec.Token()
			if err != nil {
				return nil, err
			}
			k := kt.(string)
			v, err := decodeValue(dec)
			if err != nil {
				return nil, err
			}
			if slices.Contains(o.keys, k) {
				return nil, fmt.Errorf("duplicate key %q", k)
			}
			o.keys = append(o.keys, k)
			o.vals[k] = v
		}
		_, err := dec.Token() // '}'
		return o, err
	case json.Delim('['):
		list := []any{}
		for dec.More() {
			v, err := decodeValue(dec)
			if err != nil {
				return nil, err
			}
			list = append(list, v)
		}
		_, err := dec.Token() // ']'
		return list, err
	}
	return t, nil
}
