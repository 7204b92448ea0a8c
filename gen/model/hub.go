package model

import (
	"fmt"
	"sort"

	"github.com/mcpx-dev/mcpx/gen/load"
)

// Build models every revision and merges them into the hub.
func Build(set *load.Set, o *Overlay) (*Hub, error) {
	h := &Hub{Types: map[string]*Type{}, MetaKeys: map[string]RevSet{}, MetaTypes: map[string]*Type{}, MetaWires: map[string]map[string]string{}, Overlay: o}
	for i, src := range set.Revisions {
		var exts []*load.Revision
		for _, e := range set.Extensions {
			if e.Schema.ExtendsRevision(src.Schema.ID) { // a range: a newer revision inherits it
				exts = append(exts, e)
			}
		}
		w, err := buildWire(src, exts, o)
		if err != nil {
			return nil, err
		}
		if i == 0 && w.Era != "modern" {
			return nil, fmt.Errorf("mcpx-gen: schemas/manifest.json: the newest revision %s must be the modern one", w.Rev)
		}
		h.Revs = append(h.Revs, w.Rev)
		h.Wires = append(h.Wires, w)
		m := &merger{hub: h, o: o, w: w, seen: map[[2]*Type]bool{}}
		m.wire()
		if m.err != nil {
			return nil, m.err
		}
		reach(w)
		for _, t := range w.SortedTypes() {
			if t.problem != "" {
				return nil, fmt.Errorf("%s", t.problem)
			}
		}
	}
	sort.Slice(h.Methods, func(i, j int) bool { return h.Methods[i].Name < h.Methods[j].Name })
	if err := checkDrops(h, o); err != nil {
		return nil, err
	}
	if err := checkGoNames(h); err != nil {
		return nil, err
	}
	return h, nil
}

// merger merges one wire into the hub.
type merger struct {
	hub  *Hub
	o    *Overlay
	w    *Wire
	seen map[[2]*Type]bool
	err  error
}

func (m *merger) fail(format string, args ...any) {
	if m.err == nil {
		m.err = fmt.Errorf("mcpx-gen: %s "+format, append([]any{m.w.Rev}, args...)...)
	}
}

func (m *merger) wire() {
	rev := m.w.Rev
	m.metaKeys()
	for _, wm := range m.w.Methods {
		var hm *HubMethod
		for _, x := range m.hub.Methods {
			if x.Name == wm.Name {
				hm = x
			}
		}
		if hm == nil {
			hm = &HubMethod{Method: *wm}
			hm.Params, hm.Result = nil, nil
			m.hub.Methods = append(m.hub.Methods, hm)
		}
		hm.Revs = hm.Revs.add(rev)
		hm.Params = m.root(hm.Params, wm.Params, func(t *Type) { wm.Params = t })
		if !wm.Notification {
			hm.Result = m.root(hm.Result, wm.Result, func(t *Type) { wm.Result = t })
		}
	}
	names := make([]string, 0, len(m.w.Roots))
	for n := range m.w.Roots {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		wt := m.w.Roots[n]
		m.root(m.hub.Types[wt.Name], wt, func(t *Type) { m.w.Roots[n] = t })
	}
}

// root pairs a wire root with its hub counterpart, adopting it when the hub
// has none, and returns the hub type.
func (m *merger) root(h, w *Type, set func(*Type)) *Type {
	if w == nil {
		return h
	}
	if h == nil {
		return m.adopt(w)
	}
	m.mergeType(h, w, set, w.Name)
	return h
}

// adopt returns the hub type for a wire type the hub has no counterpart for
// at this place: the hub type of the same name, or a new one.
func (m *merger) adopt(w *Type) *Type {
	switch w.Kind {
	case String, Integer, Number, Boolean, Raw, Meta:
		return w
	case Array, Map:
		return &Type{Kind: w.Kind, Elem: m.adopt(w.Elem), Nullable: w.Nullable}
	}
	h := m.hub.Types[w.Name]
	if h == nil {
		h = &Type{Kind: w.Kind, Name: w.Name, Doc: w.Doc, Source: w.Source, Disc: w.Disc, Nullable: w.Nullable, Deprecated: w.Deprecated}
		m.hub.Types[w.Name] = h
	} else if h.Kind != w.Kind && !(h.Kind == Enum && w.Kind == Const) {
		m.fail("%s: the hub already has a %s named %s, and this revision's %s cannot join it; add an overlay entry", w.Source, h.Kind, w.Name, w.Kind)
		return h
	}
	m.merge(h, w)
	return h
}

// mergeType merges wire type w into hub type h found at the same place. set
// replaces the wire type at that place (raw JSON where the hub is open, a
// union where the hub has one).
func (m *merger) mergeType(h, w *Type, set func(*Type), at string) {
	switch {
	case h.Kind == Raw || h.Kind == Meta:
		if w.Kind != h.Kind {
			set(h)
		}
	case h.Kind == Array && w.Kind == Array, h.Kind == Map && w.Kind == Map:
		m.mergeType(h.Elem, w.Elem, func(t *Type) { w.Elem = t }, at+"[]")
	case h.Kind == Union && w.Kind == Object:
		u := m.lift(h, w, at)
		if u != nil {
			set(u)
			m.merge(h, u)
		}
	case h.Named() && w.Named():
		if h.Kind != w.Kind && !(h.Kind == Enum && w.Kind == Const) && !(h.Kind == Const && w.Kind == Enum) {
			m.fail("%s: the hub has a %s (%s) where this revision has a %s (%s); add an overlay entry", at, h.Kind, h.Name, w.Kind, w.Name)
			return
		}
		m.merge(h, w)
	case w.Kind == Raw:
		// The revision leaves open what the hub structures: converters go
		// through JSON at this place.
	case numeric(h) && numeric(w), h.Kind == w.Kind:
	case h.Kind == Enum && w.Kind == String, h.Kind == String && (w.Kind == Enum || w.Kind == Const):
	default:
		m.fail("%s: the hub has %s where this revision has %s; add an overlay entry", at, h.Kind, w.Kind)
	}
}

func numeric(t *Type) bool { return t.Kind == Integer || t.Kind == Number }

// lift wraps a wire object that stands where the hub has a union into a
// one-variant union, choosing the hub variant whose members it matches.
func (m *merger) lift(h, w *Type, at string) *Type {
	if w.lifted != nil {
		return w.lifted
	}
	var match *Variant
	for _, v := range h.Variants {
		if v.Type.Kind != Object {
			continue
		}
		ok := true
		for _, f := range w.Fields {
			if v.Type.Field(f.Wire) == nil {
				ok = false
			}
		}
		for _, f := range v.Type.Fields {
			if f.Required && f.Wire != h.Disc && w.Field(f.Wire) == nil {
				ok = false
			}
		}
		if ok {
			if match != nil {
				m.fail("%s: object %s matches two variants of the hub union %s; add an overlay entry", at, w.Name, h.Name)
				return nil
			}
			match = v
		}
	}
	if match == nil {
		m.fail("%s: object %s matches no variant of the hub union %s; add an overlay entry", at, w.Name, h.Name)
		return nil
	}
	// The union takes the hub union's name, the object its hub variant's.
	u := &Type{Kind: Union, Name: h.Name, Doc: w.Doc, Source: w.Source, Disc: h.Disc,
		Variants: []*Variant{{Tag: match.Tag, Type: w, Default: true}}}
	w.Name = match.Type.Name
	w.lifted = u
	return u
}

// merge merges the wire's named type w into the hub's h and records the pair.
func (m *merger) merge(h, w *Type) {
	key := [2]*Type{h, w}
	if m.seen[key] {
		return
	}
	m.seen[key] = true
	rev := m.w.Rev
	m.w.Pairs[w] = append(m.w.Pairs[w], h)
	h.Revs = h.Revs.add(rev)
	switch {
	case h.Kind == Enum || h.Kind == Const:
		if h.ValueRevs == nil {
			h.ValueRevs = map[string]RevSet{}
		}
		for _, v := range w.Values {
			if h.ValueRevs[v] == nil && !contains(h.Values, v) {
				if h.Kind == Const && len(h.Values) > 0 {
					m.fail("%s: constant %q where the hub has %q", w.Source, v, h.Values[0])
					return
				}
				h.Values = append(h.Values, v)
				sort.Strings(h.Values)
			}
			h.ValueRevs[v] = h.ValueRevs[v].add(rev)
		}
	case h.Kind == Object && w.Kind == Object:
		m.fields(h, w)
	case h.Kind == Union && w.Kind == Union:
		m.variants(h, w)
	default:
		m.fail("%s: cannot pair hub %s %s with %s %s", w.Source, h.Kind, h.Name, w.Kind, w.Name)
	}
}

func contains(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

func (m *merger) fields(h, w *Type) {
	rev := m.w.Rev
	fresh := len(h.Revs) == 1 // the hub type first appears in this revision
	nest := m.o.Lookup("nest", h.Name, rev)
	for _, wf := range w.Fields {
		if nest != nil && nest.Field == wf.Wire {
			if wf.Type.Kind != Object {
				m.fail("%s: overlay nest %s.%s: the member is %s, not an object", w.Source, h.Name, wf.Wire, wf.Type.Kind)
				continue
			}
			wf.Nested = true
			m.merge(h, wf.Type)
			continue
		}
		hubWire := wf.Wire
		for _, e := range m.o.Entries {
			if e.Kind == "rename" && e.Wire == wf.Wire && e.Covers(rev) {
				typ, field, _ := cut(e.At)
				if typ == h.Name || typ == w.Name {
					m.o.use(e)
					hubWire = field
				}
			}
		}
		hf := h.Field(hubWire)
		if hf == nil {
			hf = &Field{Wire: hubWire, Name: wf.Name, Required: wf.Required && fresh, Doc: wf.Doc, Deprecated: wf.Deprecated, Format: wf.Format, Type: m.adopt(wf.Type)}
			if hubWire != wf.Wire {
				hf.Name = GoName(hubWire)
			}
			if n := m.goName(h, w, hubWire); n != "" {
				hf.Name = n // the hub's Go name outlives a respelling
			}
			if hf.Type.Kind != wf.Type.Kind && (hf.Type.Kind == Raw || hf.Type.Kind == Meta) {
				wf.Type = hf.Type
			}
			h.addField(hf)
		} else {
			wfRef := wf
			m.mergeType(hf.Type, wf.Type, func(t *Type) { wfRef.Type = t }, h.Name+"."+hubWire)
			if hf.Doc == "" {
				hf.Doc = wf.Doc
			}
		}
		hf.Revs = hf.Revs.add(rev)
		if hubWire != wf.Wire {
			if hf.Wires == nil {
				hf.Wires = map[string]string{}
			}
			hf.Wires[rev] = wf.Wire
		}
	}
}

// goName is the Go name a rename entry keeps for the hub member hubWire
// of h (or of w's name for it), or "".
func (m *merger) goName(h, w *Type, hubWire string) string {
	for _, e := range m.o.Entries {
		if e.Kind != "rename" || e.GoName == "" {
			continue
		}
		if typ, field, _ := cut(e.At); field == hubWire && (typ == h.Name || typ == w.Name) {
			m.o.use(e)
			return e.GoName
		}
	}
	return ""
}

func cut(at string) (typ, field string, ok bool) {
	for i := len(at) - 1; i >= 0; i-- {
		if at[i] == '.' {
			return at[:i], at[i+1:], true
		}
	}
	return at, "", false
}

func (m *merger) variants(h, w *Type) {
	rev := m.w.Rev
	if w.problem != "" { // reached through a place that is not open
		if m.err == nil {
			m.err = fmt.Errorf("%s", w.problem)
		}
		return
	}
	if h.Disc == "" {
		h.Disc = w.Disc
	}
	for _, wv := range w.Variants {
		hv := h.Variant(wv.Tag)
		if hv == nil {
			hv = &Variant{Tag: wv.Tag, Type: m.adopt(wv.Type), Default: wv.Default}
			h.Variants = append(h.Variants, hv)
		} else {
			wvRef := wv
			m.mergeType(hv.Type, wv.Type, func(t *Type) { wvRef.Type = t }, h.Name+"|"+wv.Tag)
		}
		hv.Revs = hv.Revs.add(rev)
	}
}
