// Package load reads the pinned schema files and compiles them with
// jsonschema/v6, so every later step works on resolved schemas: a $ref is a
// pointer, a definition knows its location, and a schema that does not
// compile stops the generator before any Go is written.
package load

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/mcpx-dev/mcpx/schemas"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

// Revision is one compiled schema file: a protocol revision or an extension.
type Revision struct {
	Schema schemas.Schema
	// Defs maps each definition name to its compiled schema.
	Defs map[string]*jsonschema.Schema
	// Order lists the definition names sorted, for deterministic walks.
	Order []string
	// Pointer is the JSON pointer prefix of definitions: "#/definitions/"
	// (draft-07) or "#/$defs/" (2020-12).
	Pointer string
}

// Set is every schema in the manifest, compiled, revisions newest first.
type Set struct {
	Revisions  []*Revision
	Extensions []*Revision
}

// URL is the resource URL under which a schema file is registered.
func URL(s schemas.Schema) string {
	return "mcpx:///schemas/" + s.File
}

// All loads and compiles every schema in the manifest from dir.
func All(dir string) (*Set, error) {
	m, err := schemas.Load()
	if err != nil {
		return nil, err
	}
	set := &Set{}
	for _, s := range m.Schemas {
		r, err := One(dir, s)
		if err != nil {
			return nil, err
		}
		set.Revisions = append(set.Revisions, r)
	}
	for _, s := range m.Extensions {
		r, err := One(dir, s)
		if err != nil {
			return nil, err
		}
		set.Extensions = append(set.Extensions, r)
	}
	return set, nil
}

// One loads and compiles a single schema file, every definition of it.
func One(dir string, s schemas.Schema) (*Revision, error) {
	b, err := schemas.Read(dir, s)
	if err != nil {
		return nil, err
	}
	return Compile(s, b)
}

// Compile compiles every definition in the schema document b.
func Compile(s schemas.Schema, b []byte) (*Revision, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		return nil, fmt.Errorf("mcpx-gen: %s: %w", s.ID, err)
	}
	var top struct {
		Definitions map[string]json.RawMessage `json:"definitions"`
		Defs        map[string]json.RawMessage `json:"$defs"`
	}
	if err := json.Unmarshal(b, &top); err != nil {
		return nil, fmt.Errorf("mcpx-gen: %s: %w", s.ID, err)
	}
	r := &Revision{Schema: s, Defs: map[string]*jsonschema.Schema{}, Pointer: "#/$defs/"}
	names := top.Defs
	if len(top.Definitions) > 0 {
		names, r.Pointer = top.Definitions, "#/definitions/"
	}
	if len(names) == 0 {
		return nil, fmt.Errorf("mcpx-gen: %s: the schema has no definitions", s.ID)
	}
	c := schemas.NewCompiler()
	url := URL(s)
	if err := c.AddResource(url, doc); err != nil {
		return nil, fmt.Errorf("mcpx-gen: %s: %w", s.ID, err)
	}
	for name := range names {
		r.Order = append(r.Order, name)
	}
	sort.Strings(r.Order)
	for _, name := range r.Order {
		sch, err := c.Compile(url + r.Pointer + name)
		if err != nil {
			return nil, fmt.Errorf("mcpx-gen: %s %s%s: %w", s.ID, r.Pointer, name, err)
		}
		r.Defs[name] = sch
	}
	return r, nil
}

// DefName returns the definition a compiled schema is the root of, or "" for
// an inline schema.
func (r *Revision) DefName(s *jsonschema.Schema) string {
	_, frag, ok := strings.Cut(s.Location, "#")
	if !ok {
		return ""
	}
	name, ok := strings.CutPrefix("#"+frag, r.Pointer)
	if !ok || strings.Contains(name, "/") {
		return ""
	}
	return name
}
