package emit

import (
	"fmt"

	"github.com/dave/jennifer/jen"
	"github.com/mcpx-dev/mcpx/gen/model"
)

// metaConv is one reserved _meta key a revision's converters handle beyond
// removing foreign keys: its value converted between the hub's type and the
// revision's (when they differ in this revision), its key respelled (when
// the overlay renames it), or both.
type metaConv struct {
	hubKey, wireKey string
	h, w            *model.Type // value types
	down, up        bool        // the value is converted on the way down, up
}

// in returns the plan's keys that change going in direction dir.
func (c *convWriter) metaIn(dir string) []metaConv {
	var out []metaConv
	for _, mc := range c.metaPlan() {
		if mc.hubKey != mc.wireKey || dir == "down" && mc.down || dir == "up" && mc.up {
			out = append(out, mc)
		}
	}
	return out
}

// metaPlan lists the keys whose values or spellings change between the hub
// and this revision, by hub key. A key whose value has the same shape in
// both (Implementation in the newest revision) costs nothing: the map is
// shared as before.
func (c *convWriter) metaPlan() []metaConv {
	if c.plan != nil {
		return *c.plan
	}
	var out []metaConv
	for _, k := range sortedKeys(c.hub.MetaKeys) {
		if !c.hub.MetaKeys[k][c.rev] {
			continue
		}
		mc := metaConv{hubKey: k, wireKey: c.hub.MetaWire(k, c.rev), h: c.hub.MetaTypes[k]}
		mc.w = c.w.MetaTypes[mc.wireKey]
		if mc.h != nil && mc.w != nil && structured(mc.h) && structured(mc.w) && mc.h.Kind == mc.w.Kind {
			// Down, a hub value may have what the revision lacks; up, the
			// revision's JSON is the hub's when its members are a subset.
			mc.down = !sameIn(mc.h, mc.w, c.rev, false, map[[2]*model.Type]bool{})
			mc.up = !sameIn(mc.h, mc.w, c.rev, true, map[[2]*model.Type]bool{})
		}
		if mc.down || mc.up || mc.hubKey != mc.wireKey {
			out = append(out, mc)
		}
	}
	c.plan = &out
	return out
}

// emptyToEmpty reports whether an empty object converts to itself between
// hub type h and wire type w (in either direction): both are objects none of
// whose members is required, so that {} decodes as the zero value (or does
// not decode, and is kept as it is), converts to the zero value and encodes
// as {} again.
func emptyToEmpty(h, w *model.Type) bool {
	if h.Kind != model.Object || w.Kind != model.Object {
		return false
	}
	for _, fs := range [][]*model.Field{h.Fields, w.Fields} {
		for _, f := range fs {
			if f.Required || f.Nested {
				return false
			}
		}
	}
	return true
}

func structured(t *model.Type) bool { return t.Kind == model.Object || t.Kind == model.Union }

// sameIn reports whether hub type h and wire type w write the same JSON in
// rev, so that converting a value between them would change nothing; with
// subset, whether w's JSON means the same as h's (every member of w is one
// of h under the same name), so that an upgrade would change nothing.
func sameIn(h, w *model.Type, rev string, subset bool, seen map[[2]*model.Type]bool) bool {
	if h == w {
		return true
	}
	key := [2]*model.Type{h, w}
	if seen[key] {
		return true
	}
	seen[key] = true
	switch {
	case h.Kind == model.Object && w.Kind == model.Object:
		if !subset && len(h.Fields) != len(w.Fields) {
			return false
		}
		for _, wf := range w.Fields {
			hf := h.Field(wf.Wire)
			if hf == nil || !hf.Revs[rev] || hf.Wires[rev] != "" || wf.Nested || !subset && wf.Required != hf.Required || !sameIn(hf.Type, wf.Type, rev, subset, seen) {
				return false
			}
		}
		return true
	case h.Kind == model.Union && w.Kind == model.Union:
		if !subset && len(h.Variants) != len(w.Variants) {
			return false
		}
		for _, wv := range w.Variants {
			hv := h.Variant(wv.Tag)
			if hv == nil || !sameIn(hv.Type, wv.Type, rev, subset, seen) {
				return false
			}
		}
		return true
	case h.Kind == model.Array && w.Kind == model.Array, h.Kind == model.Map && w.Kind == model.Map:
		return sameIn(h.Elem, w.Elem, rev, subset, seen)
	case structured(h) || structured(w):
		return false
	}
	return true // scalars, enums, raw JSON: converters copy them
}

// metaFuncs writes downMeta and upMeta for the keys of metaPlan.
func (c *convWriter) metaFuncs() {
	// Per key: take the value at its spelling on this side, drop that
	// spelling, and put the value (converted when the shapes differ) at its
	// spelling on the other. A value that does not decode is kept as it is;
	// one that does not encode (a union variant with no form here) is left
	// out.
	for _, dir := range []string{"down", "up"} {
		plan := c.metaIn(dir)
		if len(plan) == 0 {
			continue
		}
		var body []jen.Code
		src := "out"
		if dir == "down" {
			body = append(body, jen.Id("out").Op(":=").Id("in").Dot("Without").Call(jen.Id("foreignMetaKeys").Op("...")))
		} else {
			src = "in"
		}
		body = append(body,
			jen.Var().Id("set").Qual(HubPath, "Meta"),
			jen.Var().Id("drop").Index().String(),
			jen.Id("put").Op(":=").Func().Params(jen.Id("k").String(), jen.Id("v").Qual(jsonPath, "RawMessage")).Block(
				jen.If(jen.Id("set").Op("==").Nil()).Block(jen.Id("set").Op("=").Qual(HubPath, "Meta").Values()),
				jen.Id("set").Index(jen.Id("k")).Op("=").Id("v")))
		for _, mc := range plan {
			fromKey, toKey := mc.hubKey, mc.wireKey
			var from, to *jen.Statement
			conv := ""
			if dir == "down" {
				if mc.down {
					from, to, conv = jen.Qual(HubPath, mc.h.Name), jen.Id(mc.w.Name), fn("down", mc.w, mc.h)
				}
			} else {
				fromKey, toKey = mc.wireKey, mc.hubKey
				if mc.up {
					from, to, conv = jen.Id(mc.w.Name), jen.Qual(HubPath, mc.h.Name), fn("up", mc.w, mc.h)
				}
			}
			var inner []jen.Code
			cond := jen.Id("ok")
			switch {
			case conv == "":
				inner = []jen.Code{
					jen.Id("drop").Op("=").Append(jen.Id("drop"), jen.Lit(fromKey)),
					jen.Id("put").Call(jen.Lit(toKey), jen.Id("raw"))}
			case fromKey != toKey:
				inner = []jen.Code{
					jen.Id("drop").Op("=").Append(jen.Id("drop"), jen.Lit(fromKey)),
					jen.Var().Id("a").Add(from),
					jen.If(jen.Qual(decodePath, "Unmarshal").Call(jen.Id("raw"), jen.Op("&").Id("a")).Op("!=").Nil()).Block(
						jen.Id("put").Call(jen.Lit(toKey), jen.Id("raw")),
					).Else().Block(
						jen.Var().Id("b").Add(to),
						jen.Id(conv).Call(jen.Op("&").Id("a"), jen.Op("&").Id("b")),
						jen.If(jen.List(jen.Id("enc"), jen.Err()).Op(":=").Qual(jsonPath, "Marshal").Call(jen.Op("&").Id("b")), jen.Err().Op("==").Nil()).Block(
							jen.Id("put").Call(jen.Lit(toKey), jen.Id("enc"))),
					)}
			default:
				// The key keeps its spelling: a value the conversion leaves
				// as it is (one already in this side's shape) is not copied
				// into a new map, and an empty object, which converts to
				// itself, is not decoded.
				if emptyToEmpty(mc.h, mc.w) {
					cond = cond.Op("&&").String().Call(jen.Id("raw")).Op("!=").Lit("{}")
				}
				inner = []jen.Code{
					jen.Var().Id("a").Add(from),
					jen.If(jen.Qual(decodePath, "Unmarshal").Call(jen.Id("raw"), jen.Op("&").Id("a")).Op("==").Nil()).Block(
						jen.Var().Id("b").Add(to),
						jen.Id(conv).Call(jen.Op("&").Id("a"), jen.Op("&").Id("b")),
						jen.If(jen.List(jen.Id("enc"), jen.Err()).Op(":=").Qual(jsonPath, "Marshal").Call(jen.Op("&").Id("b")), jen.Err().Op("!=").Nil()).Block(
							jen.Id("drop").Op("=").Append(jen.Id("drop"), jen.Lit(fromKey)),
						).Else().If(jen.Op("!").Qual("bytes", "Equal").Call(jen.Id("enc"), jen.Id("raw"))).Block(
							jen.Id("put").Call(jen.Lit(toKey), jen.Id("enc"))),
					)}
			}
			body = append(body, jen.If(jen.List(jen.Id("raw"), jen.Id("ok")).Op(":=").Id(src).Index(jen.Lit(fromKey)), cond).Block(inner...))
		}
		body = append(body, jen.Return(jen.Id(src).Dot("Replace").Call(jen.Id("set"), jen.Id("drop").Op("..."))))
		if dir == "down" {
			c.f.Comment(fmt.Sprintf("downMeta is a _meta on its way to %s: the reserved keys it lacks removed,", c.rev))
			c.f.Comment("and the values and spellings of those it has whose shape or name differ")
			c.f.Comment("from the hub's converted, so a reserved key converts like any member.")
		} else {
			c.f.Comment(fmt.Sprintf("upMeta is a %s _meta on its way to the hub: the reserved keys whose", c.rev))
			c.f.Comment("values or spellings differ from the hub's converted.")
		}
		c.f.Func().Id(dir+"Meta").Params(jen.Id("in").Qual(HubPath, "Meta")).Qual(HubPath, "Meta").Block(body...)
		c.f.Line()
	}
}
