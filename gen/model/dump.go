package model

import (
	"fmt"
	"io"
	"strings"
)

// Dump writes a readable listing of the hub, for debugging the generator
// (mcpx-gen -dump).
func (h *Hub) Dump(out io.Writer) {
	for _, m := range h.Methods {
		fmt.Fprintf(out, "method %s params=%s result=%s revs=%v\n", m.Name, name(m.Params), name(m.Result), m.Revs.Sorted())
	}
	for _, t := range h.SortedTypes() {
		fmt.Fprintf(out, "%s %s disc=%q revs=%v %v\n", t.Kind, t.Name, t.Disc, t.Revs.Sorted(), t.Values)
		for _, f := range t.Fields {
			fmt.Fprintf(out, "    %-22s %-28s req=%-5v revs=%v %v\n", f.Wire, describe(f.Type), f.Required, strings.Join(f.Revs.Sorted(), ","), f.Wires)
		}
		for _, v := range t.Variants {
			fmt.Fprintf(out, "    | %-20s %-28s default=%v revs=%v\n", v.Tag, describe(v.Type), v.Default, strings.Join(v.Revs.Sorted(), ","))
		}
	}
	for k, r := range h.MetaKeys {
		fmt.Fprintf(out, "meta %s %v\n", k, r.Sorted())
	}
}

func name(t *Type) string {
	if t == nil {
		return "-"
	}
	return describe(t)
}

func describe(t *Type) string {
	s := t.Kind.String()
	switch {
	case t.Named():
		s = t.Name
	case t.Kind == Array:
		s = "[]" + describe(t.Elem)
	case t.Kind == Map:
		s = "map[]" + describe(t.Elem)
	}
	if t.Nullable {
		s += "|null"
	}
	return s
}
