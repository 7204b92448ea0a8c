package model

import (
	"sort"
	"strings"

	"github.com/mcpx-dev/mcpx/schemas"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

// Reserved _meta keys are members like any other: each revision declares
// them (its schema's _meta properties, else overlay meta-key with a type),
// their values have types that pair with the hub's, a key can be renamed
// (overlay rename with "key") or removed (overlay removed with "key"), and
// the converters convert the values of the keys they know.

// metaKeys records the _meta members a schema declares.
func (b *builder) metaKeys(meta *jsonschema.Schema) {
	names := make([]string, 0, len(meta.Properties))
	for k := range meta.Properties {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		if b.meta[k] == nil {
			b.meta[k] = meta.Properties[k]
		}
	}
}

// metaHint names the type of a key's inline value: MetaRelatedTask.
func metaHint(key string) string {
	_, tail, _ := strings.Cut(key, "/")
	return "Meta" + GoName(tail)
}

// reservedKeys adds the reserved keys this builder's schema declares, with
// their value types, to w.
func (b *builder) reservedKeys(w *Wire) {
	names := make([]string, 0, len(b.meta))
	for k := range b.meta {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		if !schemas.IsReservedMetaKey(k) || w.MetaTypes[k] != nil {
			continue
		}
		w.MetaKeys = append(w.MetaKeys, k)
		w.MetaTypes[k] = b.schema(b.meta[k], metaHint(k))
	}
}

// overlayKeys adds the keys overlay meta-key entries declare for w's
// revision, typed by the entry's "type" (a definition of the schema, or a
// JSON type); a key the schema declares keeps the schema's type.
func (b *builder) overlayKeys(w *Wire) {
	for _, e := range b.overlay.Entries {
		if e.Kind != "meta-key" || !e.Covers(w.Rev) {
			continue
		}
		b.overlay.use(e)
		if w.MetaTypes[e.Key] != nil {
			continue
		}
		var t *Type
		switch e.Type {
		case "":
			t = tRaw
		case "string":
			t = tString
		case "integer":
			t = tInteger
		case "number":
			t = tNumber
		case "boolean":
			t = tBoolean
		case "object":
			t = tRaw
		default:
			if b.src.Defs[e.Type] == nil {
				b.fail("overlay meta-key %s: type %q is neither a definition of the schema nor a JSON type", e.Key, e.Type)
				return
			}
			t = b.def(e.Type)
		}
		w.MetaKeys = append(w.MetaKeys, e.Key)
		w.MetaTypes[e.Key] = t
	}
}

// metaKeys merges the wire's reserved keys into the hub: the key under its
// hub spelling, its value type paired with the hub's.
func (m *merger) metaKeys() {
	rev := m.w.Rev
	for _, k := range m.w.MetaKeys {
		hubKey := k
		for _, e := range m.o.Entries {
			if e.Kind == "rename" && e.Key != "" && e.Wire == k && e.Covers(rev) {
				m.o.use(e)
				hubKey = e.Key
			}
		}
		if hubKey != k {
			if m.hub.MetaWires[hubKey] == nil {
				m.hub.MetaWires[hubKey] = map[string]string{}
			}
			m.hub.MetaWires[hubKey][rev] = k
		}
		m.hub.MetaKeys[hubKey] = m.hub.MetaKeys[hubKey].add(rev)
		wk := k
		m.hub.MetaTypes[hubKey] = m.root(m.hub.MetaTypes[hubKey], m.w.MetaTypes[k], func(t *Type) { m.w.MetaTypes[wk] = t })
	}
}

// MetaWire is the spelling of the hub key k in rev.
func (h *Hub) MetaWire(k, rev string) string {
	if w, ok := h.MetaWires[k][rev]; ok {
		return w
	}
	return k
}

// metaDrops lists the reserved keys newer drops that older had, with no
// overlay removed entry for them.
func metaDrops(h *Hub, o *Overlay, newer, older string) []string {
	var errs []string
	for _, k := range sortedKeys(h.MetaKeys) {
		revs := h.MetaKeys[k]
		if !revs[older] || revs[newer] {
			continue
		}
		explained := false
		for _, e := range o.Entries {
			if e.Kind == "removed" && e.Key == k && e.Covers(newer) {
				o.use(e)
				explained = true
			}
		}
		if !explained {
			errs = append(errs, "mcpx-gen: "+newer+" drops the reserved _meta key "+h.MetaWire(k, older)+", which "+older+" has, and no overlay entry says why. If renamed, add to schemas/overlay.json: {\"kind\": \"rename\", \"key\": \"<its "+newer+" spelling>\", \"revisions\": \".."+older+"\", \"wire\": \""+h.MetaWire(k, older)+"\", \"why\": \"...\"}. If removed, add: {\"kind\": \"removed\", \"key\": \""+k+"\", \"revisions\": \""+newer+"..\", \"why\": \"...\"}.")
		}
	}
	return errs
}

func sortedKeys(m map[string]RevSet) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
