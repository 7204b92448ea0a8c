// Package closedworld is a test helper that checks a message mcpx sends
// against the JSON Schema of the protocol revision it is sent under, and then
// checks that the message says nothing that revision does not know about.
//
// The second check is the point of the package. None of the MCP schemas
// closes its core definitions with "additionalProperties": false, so a
// message carrying a field that only a newer revision defines (a Tool with
// "title" sent to a 2025-03-26 client, a list result with "ttlMs" sent to any
// legacy client) is perfectly schema-valid. Plain validation therefore cannot
// catch a downgrade that forgot to strip something. [Validator.Validate] walks
// the instance alongside the raw schema and rejects every object member the
// schema does not declare at that place: the "closed world" reading of the
// schema, in which what is not declared does not exist.
//
// The walk bends in the places where the protocol is deliberately open:
//
//   - an object schema without "properties" is open, and one whose
//     "additionalProperties" is present and not false admits extra members
//     (checked against that sub-schema);
//   - "_meta" objects are open for ordinary keys, but a key under a reserved
//     MCP prefix (second dot-label "modelcontextprotocol" or "mcp") must be
//     declared somewhere in the revision's schema or listed as a "meta-key"
//     entry of schemas/overlay.json for that revision;
//   - places listed as "open" in schemas/overlay.json (JSON Schema documents,
//     tool arguments and results) are not walked below. "Type.field" names
//     property field of definition Type, or of an inline object whose
//     synthesized name is Type (the definition name followed by the
//     PascalCase of each property on the way down, as mcpx-gen names types:
//     2024-11-05 CallToolRequest.params is CallToolRequestParams).
//
// Combinators: $refs are followed; allOf branches pool their declared
// properties (a member any branch declares is declared, but every branch with
// "properties" must admit an undeclared one); for anyOf/oneOf the instance
// passes if some branch that JSON Schema accepts also passes the walk, and
// otherwise the error is the closest such branch's (the one whose "const"
// members, such as "type" or "method", match the instance).
//
// Two things to know when using it. Before 2025-11-25 a request or
// notification definition is only "method" and "params"; the JSON-RPC
// envelope belongs to JSONRPCRequest/JSONRPCNotification, so a whole wire
// message is checked against those, and its method and params against the
// specific definition. And a reserved _meta key declared elsewhere in the
// revision (or admitted by the overlay) is accepted by name wherever _meta
// appears, but is only checked against a sub-schema where one is declared.
//
// Load compiles every revision's schema (and, for 2026-07-28, the tasks
// extension); Default does so once for the schema files fetched by
// `make schemas`.
package closedworld

import (
	"bytes"
	"errors"
	"fmt"
	"net/url"
	"sort"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"

	"github.com/mcpx-dev/mcpx/schemas"
)

// baseURL is the stable prefix under which every schema file is registered
// with the compiler, so that schema locations (and error messages) do not
// depend on where the checkout lives.
const baseURL = "https://schemas.mcpx.invalid/"

// Draft identifiers as the schema files spell them in "$schema".
const (
	draft07   = "http://json-schema.org/draft-07/schema#"
	draft2020 = "https://json-schema.org/draft/2020-12/schema"
)

// Validator checks instances against the definitions of every protocol
// revision. It is safe for concurrent use.
type Validator struct {
	revs map[string]*revision
	ids  []string // revision ids, oldest first

	mu       sync.Mutex // guards compiler and compiled
	compiler *jsonschema.Compiler
	compiled map[string]*jsonschema.Schema // by schema location
}

// revision is one protocol revision: its schema file, the extensions that
// extend it, and the overlay facts that apply to it.
type revision struct {
	id       string
	docs     []*document     // the revision's own schema first, then extensions
	metaKeys map[string]bool // reserved _meta keys this revision admits
	open     map[string]bool // "Type.field" places not walked below
}

// document is one parsed schema file.
type document struct {
	id      string         // revision or extension id, for messages
	url     string         // where the compiler knows it
	root    any            // the whole parsed file
	defsKey string         // "definitions" (draft-07) or "$defs" (2020-12)
	defs    map[string]any // the definitions
}

// Error is a validation failure. Its message names the revision, the
// definition and a JSON pointer into the instance.
type Error struct {
	Revision   string
	Definition string
	Pointer    string // JSON pointer into the instance; "" is the whole instance
	Reason     string
	Err        error // the *jsonschema.ValidationError, for schema failures
}

// Error formats e as "<revision> <definition>: <pointer>: <reason>"; the
// whole instance is shown as "(root)".
func (e *Error) Error() string {
	return fmt.Sprintf("%s %s: %s: %s", e.Revision, e.Definition, showPointer(e.Pointer), e.Reason)
}

// showPointer prints a JSON pointer, the empty one as "(root)".
func showPointer(ptr string) string {
	if ptr == "" {
		return "(root)"
	}
	return ptr
}

// Unwrap returns the underlying jsonschema error, if any.
func (e *Error) Unwrap() error { return e.Err }

var (
	defaultOnce sync.Once
	defaultV    *Validator
	defaultErr  error
)

// Default loads from schemas.SourceDir() once (sync.Once) and is what tests
// use; on error it returns the error (typically: the schema files are
// missing, run `make schemas`).
func Default() (*Validator, error) {
	defaultOnce.Do(func() {
		defaultV, defaultErr = Load(schemas.SourceDir())
	})
	return defaultV, defaultErr
}

// Load compiles every revision's schema (and the tasks extension, as part of
// 2026-07-28) from dir (normally schemas.SourceDir()). Each file is checked
// against its pinned sha256 by [schemas.Read]. Every definition is compiled
// here, so a schema the compiler cannot handle fails Load rather than a test.
func Load(dir string) (*Validator, error) {
	return load(dir, schemas.OverlayJSON())
}

// load is Load with the overlay given, so tests can vary it.
func load(dir string, overlay []byte) (*Validator, error) {
	m, err := schemas.Load()
	if err != nil {
		return nil, err
	}
	ov, err := schemas.ParseOverlay(overlay)
	if err != nil {
		return nil, err
	}
	c := schemas.NewCompiler()
	v := &Validator{
		revs:     map[string]*revision{},
		compiler: c,
		compiled: map[string]*jsonschema.Schema{},
	}

	for _, s := range m.Schemas {
		d, err := loadDocument(c, dir, s, addedResultTypes(ov, s.ID))
		if err != nil {
			return nil, err
		}
		v.revs[s.ID] = &revision{id: s.ID, docs: []*document{d}}
		v.ids = append(v.ids, s.ID)
	}
	sort.Strings(v.ids) // ids are dates
	for _, s := range m.Extensions {
		var d *document
		for _, id := range v.ids { // "extends" is a range of revisions
			if !s.ExtendsRevision(id) {
				continue
			}
			if d == nil {
				if d, err = loadDocument(c, dir, s, addedResultTypes(ov, id)); err != nil {
					return nil, err
				}
			}
			v.revs[id].docs = append(v.revs[id].docs, d)
		}
		if d == nil {
			return nil, fmt.Errorf("schema %s: extends %q, which covers no listed revision", s.ID, s.Extends)
		}
	}

	for _, r := range v.revs {
		r.metaKeys = map[string]bool{}
		for _, d := range r.docs {
			collectReservedKeys(d.defs, r.metaKeys)
		}
		r.open = map[string]bool{}
		for _, e := range ov.Entries {
			if !e.Covers(r.id) {
				continue
			}
			switch e.Kind {
			case "meta-key":
				r.metaKeys[e.Key] = true
			case "open":
				r.open[e.At] = true
			}
		}
	}

	for _, id := range v.ids {
		for _, d := range v.revs[id].docs {
			names := make([]string, 0, len(d.defs))
			for name := range d.defs {
				names = append(names, name)
			}
			sort.Strings(names)
			for _, name := range names {
				if _, err := v.compile(d.url + "#" + fragment(schemas.Pointer(d.defsKey, name))); err != nil {
					return nil, fmt.Errorf("%s %s: compile: %w", id, name, err)
				}
			}
		}
	}
	return v, nil
}

// addedResultTypes names the definitions an add-result-type entry of the
// overlay gives resultType in rev.
func addedResultTypes(ov *schemas.Overlay, rev string) map[string]bool {
	out := map[string]bool{}
	for _, e := range ov.Entries {
		if e.Kind == "add-result-type" && e.Covers(rev) {
			out[e.At] = true
		}
	}
	return out
}

// addResultType declares a required string resultType on every object of
// the definition node (through allOf, anyOf and oneOf, not $refs): the
// overlay says the tasks extension's results carry it (the core Result's
// member) although the schema leaves it out. The generator adds the same
// member to the hub from the same entry. The extension's schema also
// intersects an open Result base (declaring _meta) with task shapes closed
// by "additionalProperties": false, which rejects the base's own members;
// a closed object below an allOf therefore admits what its sibling
// branches declare, which is what the intersection means.
func addResultType(node any, siblings map[string]any) {
	m, ok := node.(map[string]any)
	if !ok {
		return
	}
	if props, ok := m["properties"].(map[string]any); ok {
		if _, has := props["resultType"]; !has {
			props["resultType"] = map[string]any{"type": "string"}
		}
		req, _ := m["required"].([]any)
		m["required"] = append(req, "resultType")
		if m["additionalProperties"] == false {
			for k, v := range siblings {
				if _, has := props[k]; !has {
					props[k] = v
				}
			}
		}
	}
	if list, ok := m["allOf"].([]any); ok {
		pooled := map[string]any{}
		for k, v := range siblings {
			pooled[k] = v
		}
		for _, b := range list {
			if bm, ok := b.(map[string]any); ok {
				if props, ok := bm["properties"].(map[string]any); ok {
					for k, v := range props {
						pooled[k] = v
					}
				}
			}
		}
		for _, b := range list {
			addResultType(b, pooled)
		}
	}
	for _, k := range []string{"anyOf", "oneOf"} {
		if list, ok := m[k].([]any); ok {
			for _, b := range list {
				addResultType(b, siblings)
			}
		}
	}
}

// loadDocument reads one verified schema file and registers it with c,
// with resultType added to the definitions named in resultTypes.
func loadDocument(c *jsonschema.Compiler, dir string, s schemas.Schema, resultTypes map[string]bool) (*document, error) {
	b, err := schemas.Read(dir, s)
	if err != nil {
		return nil, err
	}
	raw, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		return nil, fmt.Errorf("schema %s: %w", s.ID, err)
	}
	root, ok := raw.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("schema %s: not a JSON object", s.ID)
	}
	d := &document{id: s.ID, url: baseURL + s.File, root: raw}
	// The dialect decides where definitions live, and the compiler picks the
	// dialect from "$schema"; insist on the two the MCP schemas use so that a
	// draft-07 file is never read as 2020-12 or the other way round.
	switch sch, _ := root["$schema"].(string); sch {
	case draft07:
		d.defsKey = "definitions"
	case draft2020:
		d.defsKey = "$defs"
	default:
		return nil, fmt.Errorf("schema %s: unexpected $schema %q", s.ID, sch)
	}
	if d.defs, ok = root[d.defsKey].(map[string]any); !ok {
		return nil, fmt.Errorf("schema %s: no %q object", s.ID, d.defsKey)
	}
	for name := range resultTypes {
		def, ok := d.defs[name]
		if !ok {
			continue
		}
		addResultType(def, nil)
	}
	if err := c.AddResource(d.url, raw); err != nil {
		return nil, fmt.Errorf("schema %s: %w", s.ID, err)
	}
	return d, nil
}

// compile returns the compiled schema at loc (a schema URL with a JSON
// pointer fragment), compiling it on first use.
func (v *Validator) compile(loc string) (*jsonschema.Schema, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if s, ok := v.compiled[loc]; ok {
		return s, nil
	}
	s, err := v.compiler.Compile(loc)
	if err != nil {
		return nil, err
	}
	v.compiled[loc] = s
	return s, nil
}

// lookup finds def in rev: the revision's own schema first, then its
// extensions (2026-07-28 and the tasks extension share a few names, such as
// InputRequests; the core definition wins).
func (v *Validator) lookup(rev, def string) (*revision, *document, error) {
	r, ok := v.revs[rev]
	if !ok {
		return nil, nil, fmt.Errorf("unknown revision %q (have %s)", rev, strings.Join(v.ids, ", "))
	}
	for _, d := range r.docs {
		if _, ok := d.defs[def]; ok {
			return r, d, nil
		}
	}
	return r, nil, fmt.Errorf("%s: no definition %q", rev, def)
}

// Has reports whether rev's schema (plus the extension for 2026-07-28)
// defines def.
func (v *Validator) Has(rev, def string) bool {
	_, d, err := v.lookup(rev, def)
	return err == nil && d != nil
}

// Validate checks instance (JSON bytes) against definition def (e.g.
// "ListToolsResult", "Tool", "CallToolRequestParams") of revision rev
// ("2024-11-05" ... "2026-07-28"; for 2026-07-28, def may also name a
// definition of the tasks extension schema).
//
// It first validates with JSON Schema (format assertions on), then walks the
// instance against the schema and rejects any object member the revision does
// not declare at that place (see the package documentation). A failure is an
// [*Error]; an unknown revision or definition, or malformed JSON, is a plain
// error.
func (v *Validator) Validate(rev, def string, instance []byte) error {
	r, d, err := v.lookup(rev, def)
	if err != nil {
		return err
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(instance))
	if err != nil {
		return fmt.Errorf("%s %s: instance is not valid JSON: %w", rev, def, err)
	}
	ptr := schemas.Pointer(d.defsKey, def)
	sch, err := v.compile(d.url + "#" + fragment(ptr))
	if err != nil {
		return fmt.Errorf("%s %s: compile: %w", rev, def, err)
	}
	if err := sch.Validate(inst); err != nil {
		var ve *jsonschema.ValidationError
		if !errors.As(err, &ve) {
			return fmt.Errorf("%s %s: %w", rev, def, err)
		}
		loc, reason := describe(ve)
		return &Error{Revision: rev, Definition: def, Pointer: loc, Reason: reason, Err: ve}
	}
	w := &walker{v: v, rev: r}
	if cw := w.check(node{doc: d, ptr: ptr, schema: d.defs[def], name: def}, inst, nil, false); cw != nil {
		return &Error{Revision: rev, Definition: def, Pointer: cw.pointer, Reason: cw.reason}
	}
	return nil
}

// describe condenses a jsonschema error to a pointer and a one-line reason:
// it descends while an error has a single cause, then lists the leaves.
func describe(ve *jsonschema.ValidationError) (string, string) {
	for len(ve.Causes) == 1 {
		ve = ve.Causes[0]
	}
	loc := schemas.Pointer(ve.InstanceLocation...)
	reason := "schema-invalid"
	if _, ok := ve.ErrorKind.(*kind.Schema); !ok {
		reason += ": " + schemas.Problem(ve)
	}
	if len(ve.Causes) == 0 {
		return loc, reason
	}
	var leaves []string
	for _, f := range schemas.Failures(ve) {
		leaves = append(leaves, showPointer(f.Pointer)+": "+f.Problem)
	}
	const most = 6
	if len(leaves) > most {
		leaves = append(leaves[:most], fmt.Sprintf("and %d more", len(leaves)-most))
	}
	return loc, reason + " (" + strings.Join(leaves, "; ") + ")"
}

// fragment turns a JSON pointer into a URL fragment the compiler accepts.
func fragment(ptr string) string {
	parts := strings.Split(ptr, "/")
	for i, p := range parts {
		parts[i] = url.PathEscape(p)
	}
	return strings.Join(parts, "/")
}

// collectReservedKeys adds every reserved-prefix property name declared
// anywhere in x to keys. Such names only ever appear as _meta keys.
func collectReservedKeys(x any, keys map[string]bool) {
	switch x := x.(type) {
	case map[string]any:
		if props, ok := x["properties"].(map[string]any); ok {
			for k := range props {
				if schemas.IsReservedMetaKey(k) {
					keys[k] = true
				}
			}
		}
		for _, c := range x {
			collectReservedKeys(c, keys)
		}
	case []any:
		for _, c := range x {
			collectReservedKeys(c, keys)
		}
	}
}
