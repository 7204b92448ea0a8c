// Package model turns compiled schemas into one model over all revisions.
//
//  1. Each revision's schema becomes a [Wire]: its named types (objects,
//     unions, enums) and its methods, in that revision's own shapes.
//  2. The newest revision, with its extensions, seeds the [Hub]. Every older
//     revision is then merged into it, newest first, by walking both from the
//     same roots (method params and results) side by side: a field the hub
//     lacks is added to it, so the hub is a superset and nothing an older
//     peer sends has nowhere to go.
//  3. The walk records which hub type each wire type stands for (a [Pair]).
//     Converters are generated from those pairs and tables from the
//     presence it records; neither is ever typed by hand.
//
// Facts a schema cannot state come from the overlay (see [Overlay]).
package model

import (
	"sort"

	"github.com/mcpx-dev/mcpx/schemas"
)

// Kind is the shape of a [Type].
type Kind int

const (
	String  Kind = iota // a JSON string
	Integer             // a JSON integer
	Number              // any JSON number
	Boolean             // true or false
	Raw                 // open JSON kept verbatim
	Meta                // a _meta object: ordinary keys verbatim, reserved keys filtered per revision
	Const               // a string that has exactly one value (a discriminator)
	Enum                // a string from a closed set
	Object              // an object with declared members
	Union               // one of several variants
	Array               // a list of Elem
	Map                 // an object with arbitrary keys and Elem values
)

func (k Kind) String() string {
	return [...]string{"string", "integer", "number", "boolean", "raw JSON", "_meta", "const", "enum", "object", "union", "array", "map"}[k]
}

// Type is a type in a [Wire] or in the [Hub].
type Type struct {
	Kind   Kind
	Name   string // Object, Union, Enum: the Go name; Const: the value's Go name
	Doc    string // the schema description
	Source string // where the type was defined, e.g. "#/$defs/Tool"

	Fields   []*Field   // Object, sorted by wire name
	Variants []*Variant // Union, in schema order
	Disc     string     // Union: the member whose const tells variants apart; "" means by shape
	Values   []string   // Enum: the values; Const: its one value
	Elem     *Type      // Array, Map
	Nullable bool       // JSON null is also allowed
	// Deprecated: the schema says `deprecated: true`.
	Deprecated bool

	// Hub only.
	Revs      RevSet            // revisions that have this type
	ValueRevs map[string]RevSet // Enum: revisions that have each value
	lifted    *Type             // Wire only: this object lifted into a one-variant union
	problem   string            // why the type cannot be generated, if it is reached
}

// Field is a member of an object.
type Field struct {
	Wire     string // the member name on the wire (the hub's spelling)
	Name     string // the Go field name
	Type     *Type
	Required bool
	Doc      string
	// Deprecated: the schema says `deprecated: true` for the member.
	Deprecated bool
	// Format is the member's JSON Schema "format" ("uri", "date-time"), if any.
	Format string

	// Hub only.
	Revs  RevSet            // revisions that have this member
	Wires map[string]string // revision -> wire name, where it differs from Wire

	// Wire only: Nested marks the member that carries the enclosing hub
	// type's own members in this revision (overlay "nest").
	Nested bool
}

// Variant is one alternative of a union.
type Variant struct {
	Tag  string // the discriminator's value; for a union by shape, a member only this variant has; "[]" for a list variant
	Type *Type
	// Default marks the variant chosen when the discriminator is absent
	// (its discriminator member is optional).
	Default bool
	Revs    RevSet // hub only
}

// Field returns the member with wire name w, or nil.
func (t *Type) Field(w string) *Field {
	for _, f := range t.Fields {
		if f.Wire == w {
			return f
		}
	}
	return nil
}

// Variant returns the variant with tag, or nil.
func (t *Type) Variant(tag string) *Variant {
	for _, v := range t.Variants {
		if v.Tag == tag {
			return v
		}
	}
	return nil
}

func (t *Type) addField(f *Field) {
	t.Fields = append(t.Fields, f)
	sort.SliceStable(t.Fields, func(i, j int) bool { return t.Fields[i].Wire < t.Fields[j].Wire })
}

// Named reports whether the type is emitted as a Go type of its own.
func (t *Type) Named() bool {
	switch t.Kind {
	case Object, Union, Enum, Const:
		return true
	}
	return false
}

// RevSet is a set of revision ids.
type RevSet map[string]bool

func (s RevSet) add(rev string) RevSet {
	if s == nil {
		s = RevSet{}
	}
	s[rev] = true
	return s
}

// Sorted returns the ids oldest first.
func (s RevSet) Sorted() []string {
	out := make([]string, 0, len(s))
	for r := range s {
		out = append(out, r)
	}
	sort.Strings(out)
	return out
}

// Method is a JSON-RPC method or notification in one revision.
type Method struct {
	Name         string // e.g. "tools/call"
	Notification bool
	FromClient   bool   // sent by the client
	FromServer   bool   // sent by the server (some methods go both ways)
	Def          string // the request or notification definition, e.g. "CallToolRequest"
	Params       *Type  // nil when the method takes no params
	ParamsNeeded bool   // params is required
	Result       *Type  // requests only
	ResultDef    string // the result definition, e.g. "CallToolResult"
	Extension    string // the extension that defines it, or ""
}

// Wire is one revision's model, in its own shapes.
type Wire struct {
	Rev     string
	Era     string
	Methods []*Method
	// Types holds the named types reachable from the methods and the extra
	// roots, by Go name.
	Types map[string]*Type
	// Roots are the named result definitions, reachable or not from a method
	// (CreateTaskResult, InputRequiredResult, ...), by definition name.
	Roots map[string]*Type
	// MetaKeys are the reserved _meta keys this revision declares (its
	// schema, else overlay meta-key), as it spells them.
	MetaKeys []string
	// MetaTypes is the type of each reserved key's value (raw JSON when
	// neither the schema nor the overlay says).
	MetaTypes map[string]*Type
	// Batches reports whether the revision defines JSON-RPC batches (its
	// schema has a JSONRPCBatchRequest).
	Batches bool
	// Pairs lists, for each wire type, the hub types it stands for.
	Pairs map[*Type][]*Type
	// Sources are the schema files the wire was built from: the revision's,
	// then its extensions'.
	Sources []schemas.Schema
}

// Hub is the model every message is built in.
type Hub struct {
	Revs    []string // newest first
	Types   map[string]*Type
	Methods []*HubMethod
	Wires   []*Wire // newest first
	// MetaKeys maps each reserved _meta key (the newest spelling) to the
	// revisions that have it.
	MetaKeys map[string]RevSet
	// MetaTypes is the hub type of each reserved key's value.
	MetaTypes map[string]*Type
	// MetaWires maps a key to its spelling in the revisions that spell it
	// otherwise (overlay rename with "key").
	MetaWires map[string]map[string]string
	Overlay   *Overlay
}

// HubMethod is a method as the hub knows it, with the revisions that have it.
type HubMethod struct {
	Method
	Revs RevSet
}

// SortedTypes returns the hub's named types by name.
func (h *Hub) SortedTypes() []*Type { return sortTypes(h.Types) }

// SortedTypes returns the wire's named types by name.
func (w *Wire) SortedTypes() []*Type { return sortTypes(w.Types) }

func sortTypes(m map[string]*Type) []*Type {
	out := make([]*Type, 0, len(m))
	for _, t := range m {
		out = append(out, t)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// GoName is [schemas.GoName]: the Go name of a wire name.
func GoName(s string) string { return schemas.GoName(s) }
