package model

import (
	"fmt"
	"sort"
	"strings"

	"github.com/mcpx-dev/mcpx/gen/load"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

// scalar and raw types are shared: they carry no per-revision facts.
var (
	tString  = &Type{Kind: String}
	tInteger = &Type{Kind: Integer}
	tNumber  = &Type{Kind: Number}
	tBoolean = &Type{Kind: Boolean}
	tRaw     = &Type{Kind: Raw}
	tMeta    = &Type{Kind: Meta}
)

// builder turns one compiled schema file into wire types.
type builder struct {
	rev     string
	src     *load.Revision
	overlay *Overlay
	types   map[string]*Type              // by Go name
	defs    map[*jsonschema.Schema]*Type  // definitions already built
	enums   map[string][]string           // inline enum name -> values, to share identical ones
	meta    map[string]*jsonschema.Schema // _meta keys declared, with their value's schema
	err     error

	inline map[string]string // inline type name -> the member it was built for
}

// member returns the Go name of the member an inline type was built for.
func (b *builder) member(hint string) string {
	if b.src.Defs[hint] != nil {
		return "" // a definition keeps its own name
	}
	return b.inline[hint]
}

func newBuilder(rev string, src *load.Revision, o *Overlay) *builder {
	return &builder{rev: rev, src: src, overlay: o, types: map[string]*Type{}, defs: map[*jsonschema.Schema]*Type{}, enums: map[string][]string{}, meta: map[string]*jsonschema.Schema{}, inline: map[string]string{}}
}

func (b *builder) fail(format string, args ...any) {
	if b.err == nil {
		b.err = fmt.Errorf("mcpx-gen: %s "+format, append([]any{b.rev}, args...)...)
	}
}

// def builds (once) the type of a named definition.
func (b *builder) def(name string) *Type {
	s := b.src.Defs[name]
	if s == nil {
		b.fail("%s%s: no such definition", b.src.Pointer, name)
		return tRaw
	}
	return b.schema(s, name)
}

// schema builds the type of s; hint names it if it needs a name.
func (b *builder) schema(s *jsonschema.Schema, hint string) *Type {
	if t, ok := b.defs[s]; ok {
		return t
	}
	if name := b.src.DefName(s); name != "" {
		hint = name
	}
	for s.Ref != nil && len(s.Properties) == 0 && s.Types == nil && len(s.AnyOf) == 0 && len(s.AllOf) == 0 {
		if t, ok := b.defs[s.Ref]; ok {
			return t
		}
		if name := b.src.DefName(s.Ref); name != "" {
			hint = name
		}
		s = s.Ref
	}
	t := b.shape(s, hint)
	if b.src.DefName(s) != "" {
		b.defs[s] = t
	}
	return t
}

func isObjectSchema(s *jsonschema.Schema) bool {
	return len(s.Properties) > 0 || (s.Types != nil && strings.Contains(s.Types.String(), "object"))
}

// deref follows a bare $ref.
func deref(s *jsonschema.Schema) *jsonschema.Schema {
	for s.Ref != nil && len(s.Properties) == 0 && s.Types == nil && len(s.AnyOf) == 0 && len(s.AllOf) == 0 {
		s = s.Ref
	}
	return s
}

func (b *builder) shape(s *jsonschema.Schema, hint string) *Type {
	loc := s.Location
	if i := strings.Index(loc, "#"); i >= 0 {
		loc = loc[i:]
	}
	switch {
	case len(s.AllOf) > 0:
		return b.allOf(s, hint, loc)
	case len(s.AnyOf) > 0 || len(s.OneOf) > 0:
		return b.anyOf(s, hint, loc)
	case s.Const != nil:
		if v, ok := (*s.Const).(string); ok {
			return b.constant(v)
		}
		return tRaw
	case s.Enum != nil:
		return b.enum(s, hint, loc)
	}
	types := []string{}
	nullable := false
	if s.Types != nil {
		for _, t := range s.Types.ToStrings() {
			if t == "null" {
				nullable = true
				continue
			}
			types = append(types, t)
		}
	}
	if len(types) == 0 && len(s.Properties) > 0 {
		types = []string{"object"}
	}
	if len(types) != 1 {
		return tRaw
	}
	var t *Type
	switch types[0] {
	case "string":
		t = tString
	case "integer":
		t = tInteger
	case "number":
		t = tNumber
	case "boolean":
		t = tBoolean
	case "array":
		t = &Type{Kind: Array, Elem: b.items(s, hint)}
	case "object":
		t = b.object(s, hint, loc)
	}
	if nullable {
		c := *t
		c.Nullable = true
		t = &c
	}
	return t
}

func (b *builder) items(s *jsonschema.Schema, hint string) *Type {
	switch it := s.Items.(type) {
	case *jsonschema.Schema:
		return b.schema(it, hint+"Item")
	}
	if s.Items2020 != nil {
		return b.schema(s.Items2020, hint+"Item")
	}
	return tRaw
}

func (b *builder) constant(v string) *Type {
	name := "Const" + GoName(v)
	if t, ok := b.types[name]; ok {
		return t
	}
	t := &Type{Kind: Const, Name: name, Values: []string{v}}
	b.types[name] = t
	return t
}

func (b *builder) enum(s *jsonschema.Schema, hint, loc string) *Type {
	var vals []string
	for _, v := range s.Enum.Values {
		str, ok := v.(string)
		if !ok {
			return tRaw
		}
		vals = append(vals, str)
	}
	return b.namedEnum(vals, hint, b.member(hint), s.Description, loc)
}

// namedEnum returns the enum of these values: an existing one with the same
// values (definitions are built first, so they win), else a new one named
// after the member (CacheScope) or, if taken, after its place.
func (b *builder) namedEnum(vals []string, hint, member, doc, loc string) *Type {
	sort.Strings(vals)
	key := strings.Join(vals, "\x00")
	for _, t := range sortTypes(b.types) {
		if t.Kind == Enum && strings.Join(t.Values, "\x00") == key {
			return t
		}
	}
	name := hint
	if member != "" && b.types[member] == nil {
		name = member
	}
	name = b.unique(name)
	t := &Type{Kind: Enum, Name: name, Values: vals, Doc: doc, Source: loc}
	b.types[name] = t
	return t
}

// unique returns hint, or hint with a number when a different type took it.
func (b *builder) unique(hint string) string {
	name := hint
	for i := 2; b.types[name] != nil; i++ {
		name = fmt.Sprintf("%s%d", hint, i)
	}
	return name
}

func (b *builder) object(s *jsonschema.Schema, hint, loc string) *Type {
	if len(s.Properties) == 0 {
		if ap, ok := s.AdditionalProperties.(*jsonschema.Schema); ok && !isEmptySchema(ap) {
			if elem := b.schema(ap, hint+"Value"); elem.Kind != Raw {
				return &Type{Kind: Map, Elem: elem}
			}
		}
		return tRaw
	}
	name := b.unique(hint)
	t := &Type{Kind: Object, Name: name, Doc: s.Description, Source: loc, Deprecated: s.Deprecated}
	b.types[name] = t
	b.defs[s] = t
	b.fields(t, s)
	b.addMembers(t)
	return t
}

// addMembers adds the members the overlay says t carries although its
// schema leaves them out: _meta on request params (add-meta), resultType
// on a result (add-result-type, the tasks extension's results, which do
// not extend the core Result).
func (b *builder) addMembers(t *Type) {
	if b.overlay.Lookup("add-meta", t.Name, b.rev) != nil && t.Field("_meta") == nil {
		t.addField(&Field{Wire: "_meta", Name: "Meta", Type: tMeta, Doc: "Request metadata; see the overlay entry for why the schema lacks it."})
	}
	if b.overlay.Lookup("add-result-type", t.Name, b.rev) != nil && t.Field("resultType") == nil {
		t.addField(&Field{Wire: "resultType", Name: "ResultType", Type: tString, Required: true,
			Doc: "Indicates how the client is to parse the result, as the core Result's member does; see the overlay entry for why the schema lacks it."})
	}
}

func isEmptySchema(s *jsonschema.Schema) bool {
	return s.Ref == nil && s.Types == nil && len(s.Properties) == 0 && len(s.AnyOf) == 0 && len(s.AllOf) == 0 && s.Enum == nil && s.Const == nil
}

// fields adds s's properties to the object t.
func (b *builder) fields(t *Type, s *jsonschema.Schema) {
	required := map[string]bool{}
	for _, r := range s.Required {
		required[r] = true
	}
	names := make([]string, 0, len(s.Properties))
	for n := range s.Properties {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, wire := range names {
		p := s.Properties[wire]
		f := &Field{Wire: wire, Name: GoName(wire), Required: required[wire], Doc: p.Description, Deprecated: p.Deprecated || deref(p).Deprecated}
		if ft := deref(p).Format; ft != nil {
			f.Format = ft.Name
		}
		if f.Doc == "" && wire != "_meta" { // every _meta would repeat MetaObject's page-long text
			f.Doc = deref(p).Description
		}
		switch {
		case wire == "_meta":
			f.Type = tMeta
			b.metaKeys(deref(p))
		case b.overlay.Lookup("open", t.Name+"."+wire, "") != nil:
			f.Type = tRaw
		default:
			b.inline[t.Name+GoName(wire)] = GoName(wire)
			f.Type = b.schema(p, t.Name+GoName(wire))
		}
		if old := t.Field(wire); old != nil {
			old.Required = old.Required || f.Required
			continue
		}
		t.addField(f)
	}
}

// allOf merges the branches' members into one object. A branch that is a
// union of objects contributes every variant's members, optional unless all
// variants require them; its discriminator becomes an enum.
func (b *builder) allOf(s *jsonschema.Schema, hint, loc string) *Type {
	name := b.unique(hint)
	t := &Type{Kind: Object, Name: name, Doc: s.Description, Source: loc}
	b.types[name] = t
	b.defs[s] = t
	for _, br := range s.AllOf {
		br = deref(br)
		if len(br.AnyOf) > 0 {
			b.flatten(t, br)
			continue
		}
		b.fields(t, br)
	}
	b.addMembers(t)
	return t
}

func (b *builder) flatten(t *Type, u *jsonschema.Schema) {
	count := map[string]int{}
	consts := map[string][]string{}
	for _, v := range u.AnyOf {
		v = deref(v)
		for _, r := range v.Required {
			count[r]++
		}
		for n, p := range v.Properties {
			if p.Const != nil {
				if c, ok := (*p.Const).(string); ok {
					consts[n] = append(consts[n], c)
				}
			}
		}
	}
	for _, v := range u.AnyOf {
		v = deref(v)
		clone := *v
		clone.Required = nil
		for _, r := range v.Required {
			if count[r] == len(u.AnyOf) {
				clone.Required = append(clone.Required, r)
			}
		}
		props := map[string]*jsonschema.Schema{}
		for n, p := range v.Properties {
			if _, isConst := consts[n]; !isConst {
				props[n] = p
			}
		}
		clone.Properties = props
		b.fields(t, &clone)
	}
	for n, vals := range consts {
		f := &Field{Wire: n, Name: GoName(n), Required: count[n] == len(u.AnyOf), Type: b.namedEnum(vals, t.Name+GoName(n), GoName(n), "", "")}
		if t.Field(n) == nil {
			t.addField(f)
		}
	}
}

// anyOf builds an enum (all branches constant strings), a nullable type
// (one branch and null), a union (all branches objects, or lists of them) or
// raw JSON (anything else: scalars of several types).
func (b *builder) anyOf(s *jsonschema.Schema, hint, loc string) *Type {
	branches := append(append([]*jsonschema.Schema{}, s.AnyOf...), s.OneOf...)
	var consts []string
	var rest []*jsonschema.Schema
	nullable := false
	for _, br := range branches {
		br = deref(br)
		switch {
		case br.Const != nil:
			if c, ok := (*br.Const).(string); ok {
				consts = append(consts, c)
				continue
			}
			return tRaw
		case br.Types != nil && br.Types.String() == "[null]":
			nullable = true
			continue
		}
		rest = append(rest, br)
	}
	if len(consts) > 0 {
		if len(rest) > 0 {
			return tRaw
		}
		return b.namedEnum(consts, hint, b.member(hint), s.Description, loc)
	}
	if len(rest) == 1 {
		t := b.schema(rest[0], hint)
		if nullable {
			c := *t
			c.Nullable = true
			t = &c
		}
		return t
	}
	for _, br := range rest {
		if !isObjectSchema(br) && !(br.Types != nil && br.Types.String() == "[array]") {
			return tRaw // scalars of several types: kept verbatim
		}
		if len(br.AnyOf) > 0 || len(br.AllOf) > 0 {
			return tRaw
		}
	}
	name := b.unique(hint)
	u := &Type{Kind: Union, Name: name, Doc: s.Description, Source: loc, Nullable: nullable}
	b.types[name] = u
	b.defs[s] = u
	for i, br := range rest {
		vt := b.schema(br, fmt.Sprintf("%sVariant%d", name, i+1))
		if vt.Kind == Array {
			u.Variants = append(u.Variants, &Variant{Tag: "[]", Type: vt})
			continue
		}
		if vt.Kind != Object {
			b.fail("%s: union %s has a variant that is %s, not an object", loc, name, vt.Kind)
			return tRaw
		}
		u.Variants = append(u.Variants, &Variant{Type: vt})
	}
	b.discriminate(u, loc)
	return u
}

// discriminate finds how u's object variants are told apart: a member every
// variant declares as a constant (type, method, mode, ...), else a required
// member only one variant has.
func (b *builder) discriminate(u *Type, loc string) {
	var objs []*Variant
	for _, v := range u.Variants {
		if v.Tag == "" {
			objs = append(objs, v)
		}
	}
	if len(objs) == 1 { // one variant: keep its constant, so it pairs with a wider union
		v := objs[0]
		v.Tag, v.Default = "*", true
		for _, f := range v.Type.Fields {
			if f.Type.Kind == Const {
				u.Disc, v.Tag = f.Wire, f.Type.Values[0]
				break
			}
		}
		return
	}
	if len(objs) == 0 {
		return
	}
	var candidates []string
	for _, f := range objs[0].Type.Fields {
		if f.Type.Kind == Const {
			candidates = append(candidates, f.Wire)
		}
	}
next:
	for _, c := range candidates {
		seen := map[string]bool{}
		for _, v := range objs {
			f := v.Type.Field(c)
			if f == nil || f.Type.Kind != Const || seen[f.Type.Values[0]] {
				continue next
			}
			seen[f.Type.Values[0]] = true
		}
		u.Disc = c
		for _, v := range objs {
			f := v.Type.Field(c)
			v.Tag, v.Default = f.Type.Values[0], !f.Required
		}
		return
	}
	// By shape: a required member no other variant declares.
	for _, v := range objs {
		for _, f := range v.Type.Fields {
			if !f.Required {
				continue
			}
			unique := true
			for _, o := range objs {
				if o != v && o.Type.Field(f.Wire) != nil {
					unique = false
				}
			}
			if unique {
				v.Tag = f.Wire
				break
			}
		}
		if v.Tag == "" && u.problem == "" {
			// Only an error if the union is still reachable once open places
			// are known (see checkProblems): JSON Schema documents kept raw
			// are full of such unions.
			u.problem = fmt.Sprintf("mcpx-gen: %s %s: union %s: variant %s has no discriminator and no member of its own; add an overlay entry", b.rev, loc, u.Name, v.Type.Name)
		}
	}
}

// Build models one revision (and, for the newest, its extensions).
func buildWire(src *load.Revision, exts []*load.Revision, o *Overlay) (*Wire, error) {
	rev := src.Schema.ID
	w := &Wire{Rev: rev, Era: string(src.Schema.Era), Types: map[string]*Type{}, Roots: map[string]*Type{}, Pairs: map[*Type][]*Type{}, MetaTypes: map[string]*Type{},
		Batches: src.Defs["JSONRPCBatchRequest"] != nil}
	all := []*load.Revision{src}
	all = append(all, exts...)
	for _, s := range all {
		w.Sources = append(w.Sources, s.Schema)
	}
	var bs []*builder
	for i, s := range all {
		b := newBuilder(rev, s, o)
		if i > 0 {
			b.types = bs[0].types // one namespace per revision
		}
		bs = append(bs, b)
		ext := ""
		if i > 0 {
			ext = s.Schema.ID
		}
		for _, name := range s.Order { // enums first, so inline copies take their names
			if d := s.Defs[name]; d.Enum != nil || isConstUnion(d) {
				b.def(name)
			}
		}
		b.methods(w, ext)
		for _, name := range s.Order {
			// Beyond the methods: results that are not a method's own (CreateTaskResult),
			// what _meta carries (capabilities, Implementation), the error object, and
			// the elicitation schema shapes the edge rewrites for older revisions.
			root := strings.HasSuffix(name, "Result") || strings.HasSuffix(name, "Capabilities") || name == "Implementation" || name == "Error" ||
				strings.HasSuffix(name, "Schema") && s.Defs[name].AnyOf == nil
			if ext != "" { // an extension's object types, but not its message envelopes
				root = root || !strings.HasSuffix(name, "Request") && !strings.HasSuffix(name, "Notification") && s.Defs[name].AnyOf == nil
			}
			if root && name != "ServerResult" && name != "ClientResult" && w.Roots[name] == nil {
				if t := b.def(name); t.Kind == Object || t.Kind == Union {
					w.Roots[name] = t
				}
			}
		}
		b.reservedKeys(w)
		if i == len(all)-1 {
			bs[0].overlayKeys(w)
		}
		if b.err != nil {
			return nil, b.err
		}
	}
	sort.Strings(w.MetaKeys)
	w.MetaKeys = dedup(w.MetaKeys)
	sort.Slice(w.Methods, func(i, j int) bool { return w.Methods[i].Name < w.Methods[j].Name })
	reach(w)
	return w, nil
}

func dedup(s []string) []string {
	out := s[:0]
	for i, v := range s {
		if i == 0 || v != s[i-1] {
			out = append(out, v)
		}
	}
	return out
}

// methods adds the revision's methods: the members of the ClientRequest,
// ServerRequest, ClientNotification and ServerNotification unions; an
// extension has no such unions, and its requests come from the client and
// its notifications from the server.
func (b *builder) methods(w *Wire, ext string) {
	type root struct {
		def          string
		fromServer   bool
		notification bool
	}
	var roots []root
	if ext == "" {
		for _, u := range []struct {
			name               string
			server, notication bool
		}{{"ClientRequest", false, false}, {"ServerRequest", true, false}, {"ClientNotification", false, true}, {"ServerNotification", true, true}} {
			s := b.src.Defs[u.name]
			if s == nil {
				continue
			}
			for _, br := range s.AnyOf {
				if name := b.src.DefName(deref(br)); name != "" {
					roots = append(roots, root{name, u.server, u.notication})
				}
			}
		}
	} else {
		for _, name := range b.src.Order {
			switch {
			case strings.HasSuffix(name, "Request"):
				roots = append(roots, root{name, false, false})
			case strings.HasSuffix(name, "Notification"):
				roots = append(roots, root{name, true, true})
			}
		}
	}
	for _, r := range roots {
		s := deref(b.src.Defs[r.def])
		ms := s.Properties["method"]
		if (ms == nil || ms.Const == nil) && ext != "" {
			continue // an extension's helper type, not a method
		}
		if ms == nil || ms.Const == nil {
			b.fail("%s%s: no constant method", b.src.Pointer, r.def)
			continue
		}
		name := (*ms.Const).(string)
		if prev := w.method(name); prev != nil { // in both ClientRequest and ServerRequest
			prev.FromServer = prev.FromServer || r.fromServer
			prev.FromClient = prev.FromClient || !r.fromServer
			continue
		}
		m := &Method{Name: name, Notification: r.notification, FromClient: !r.fromServer, FromServer: r.fromServer, Def: r.def, Extension: ext}
		if ps := s.Properties["params"]; ps != nil {
			hint := strings.TrimSuffix(strings.TrimSuffix(r.def, "Request"), "Notification") + kindSuffix(r.notification) + "Params"
			if b.src.Defs[hint] != nil && ps.Ref == nil {
				m.Params = b.def(hint) // an extension repeats its params definitions inline
			} else {
				m.Params = b.schema(ps, hint)
			}
			for _, req := range s.Required {
				m.ParamsNeeded = m.ParamsNeeded || req == "params"
			}
			if m.Params.Kind == Raw || m.Params.Kind == Map {
				m.Params = nil // a bare object: no members to convert
			}
			b.inheritMeta(m.Params, r.notification)
		}
		if !r.notification {
			m.ResultDef = strings.TrimSuffix(r.def, "Request") + "Result"
			if b.src.Defs[m.ResultDef] == nil {
				m.ResultDef = "Result"
				if b.src.Defs["EmptyResult"] != nil {
					m.ResultDef = "EmptyResult"
				}
			}
			m.Result = b.def(m.ResultDef)
		}
		w.Methods = append(w.Methods, m)
	}
}

func kindSuffix(notification bool) string {
	if notification {
		return "Notification"
	}
	return "Request"
}

// reach keeps in w.Types only the named types reachable from the methods and
// roots, so a spoke package holds nothing its revision never sends.
func reach(w *Wire) {
	keep := map[string]*Type{}
	seen := map[*Type]bool{}
	var visit func(t *Type)
	visit = func(t *Type) {
		if t == nil || seen[t] {
			return
		}
		seen[t] = true
		if t.Named() {
			if old := keep[t.Name]; old != nil && old != t {
				problem := fmt.Sprintf("mcpx-gen: %s: two types are named %s", w.Rev, t.Name)
				if t.problem == "" {
					t.problem = problem
				}
			}
			keep[t.Name] = t
		}
		visit(t.Elem)
		for _, f := range t.Fields {
			visit(f.Type)
		}
		for _, v := range t.Variants {
			visit(v.Type)
		}
		visit(t.lifted)
	}
	for _, m := range w.Methods {
		visit(m.Params)
		visit(m.Result)
	}
	for _, t := range w.Roots {
		visit(t)
	}
	for _, t := range w.MetaTypes {
		visit(t)
	}
	w.Types = keep
}

func isConstUnion(s *jsonschema.Schema) bool {
	if len(s.AnyOf) == 0 {
		return false
	}
	for _, br := range s.AnyOf {
		if deref(br).Const == nil {
			return false
		}
	}
	return true
}

func (w *Wire) method(name string) *Method {
	for _, m := range w.Methods {
		if m.Name == name {
			return m
		}
	}
	return nil
}

// inheritMeta gives method params the _meta the revision declares on the
// abstract Request or Notification params: up to 2025-06-18 the schemas
// declare it there only (for progressToken), not on each method's params,
// yet every request may carry it.
func (b *builder) inheritMeta(params *Type, notification bool) {
	if params == nil || params.Kind != Object || params.Field("_meta") != nil {
		return
	}
	base := b.src.Defs["Request"]
	if notification {
		base = b.src.Defs["Notification"]
	}
	if base == nil {
		return
	}
	p := deref(base).Properties["params"]
	if p == nil || deref(p).Properties["_meta"] == nil {
		return
	}
	doc := "Metadata such as progressToken; this revision declares it for every request in its abstract Request definition."
	if notification {
		doc = "Metadata; this revision declares it for every notification in its abstract Notification definition."
	}
	params.addField(&Field{Wire: "_meta", Name: "Meta", Type: tMeta, Doc: doc})
	b.metaKeys(deref(deref(p).Properties["_meta"]))
}
