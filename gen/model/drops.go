package model

import (
	"fmt"
	"sort"
	"strings"
)

// checkDrops makes a silent rename loud. Each revision is compared with the
// next older one (manifest order): a member of a type both have that the
// newer lacks is either renamed (overlay "rename": the hub then pairs both
// spellings, so no drop is seen here) or removed (overlay "removed", with
// why). Anything else is an error naming the type, the member, both
// revisions, the likely new spellings (members the newer revision added to
// the type, of the same JSON type and format) and the entry to add:
// without one, a value sent in the old spelling would be lost on the way
// to the new one, with no warning.
func checkDrops(h *Hub, o *Overlay) error {
	var errs []string
	for i := 0; i+1 < len(h.Revs); i++ {
		newer, older := h.Revs[i], h.Revs[i+1]
		for _, t := range h.SortedTypes() {
			if t.Kind != Object || !t.Revs[newer] || !t.Revs[older] {
				continue
			}
			for _, f := range t.Fields {
				if !f.Revs[older] || f.Revs[newer] {
					continue
				}
				if o.Lookup("removed", t.Name+"."+f.Wire, newer) != nil {
					continue
				}
				errs = append(errs, dropError(t, f, newer, older))
			}
		}
		errs = append(errs, metaDrops(h, o, newer, older)...)
	}
	if len(errs) == 0 {
		return nil
	}
	sort.Strings(errs)
	return fmt.Errorf("%s", strings.Join(errs, "\n"))
}

// spelling is a member's name in rev.
func (f *Field) spelling(rev string) string {
	if w, ok := f.Wires[rev]; ok {
		return w
	}
	return f.Wire
}

func dropError(t *Type, f *Field, newer, older string) string {
	old := f.spelling(older)
	var likely []*Field
	for _, g := range t.Fields {
		if g.Revs[newer] && !g.Revs[older] && shape(g) == shape(f) {
			likely = append(likely, g)
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "mcpx-gen: %s drops %s.%s (%s), which %s has, and no overlay entry says why.", newer, t.Name, old, shape(f), older)
	if len(likely) > 0 {
		var names []string
		for _, g := range likely {
			names = append(names, g.spelling(newer))
		}
		fmt.Fprintf(&b, " Likely renamed to %s (added to %s in %s, same JSON type).", strings.Join(names, " or "), t.Name, newer)
		g := likely[0]
		fmt.Fprintf(&b, " If renamed, add to schemas/overlay.json: {\"kind\": \"rename\", \"at\": %q, \"revisions\": %q, \"wire\": %q, \"goName\": %q, \"why\": \"...\"} (goName keeps the hub's Go field %s; leave it out to call it %s).",
			t.Name+"."+g.spelling(newer), ".."+older, old, f.Name, f.Name, g.Name)
	}
	fmt.Fprintf(&b, " If removed, add: {\"kind\": \"removed\", \"at\": %q, \"revisions\": %q, \"why\": \"...\"}.", t.Name+"."+f.Wire, newer+"..")
	return b.String()
}

// shape describes a member's JSON type and format, to match renames.
func shape(f *Field) string {
	s := typeShape(f.Type)
	if f.Format != "" {
		s += " (format " + f.Format + ")"
	}
	return s
}

func typeShape(t *Type) string {
	switch t.Kind {
	case Object, Union, Enum:
		return t.Kind.String() + " " + t.Name
	case Const:
		return "const"
	case Array:
		return "array of " + typeShape(t.Elem)
	case Map:
		return "map of " + typeShape(t.Elem)
	case Integer:
		return Number.String() // one JSON type: 2026-07-28 made integers numbers (ttl -> ttlMs)
	}
	return t.Kind.String()
}

// checkGoNames: two members of a hub type never share a Go name (an
// overlay goName could make them).
func checkGoNames(h *Hub) error {
	for _, t := range h.SortedTypes() {
		seen := map[string]string{}
		for _, f := range t.Fields {
			if other, ok := seen[f.Name]; ok {
				return fmt.Errorf("mcpx-gen: hub type %s: members %s and %s are both Go field %s; fix the overlay's goName", t.Name, other, f.Wire, f.Name)
			}
			seen[f.Name] = f.Wire
		}
	}
	return nil
}
