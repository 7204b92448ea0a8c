package emit

import (
	"cmp"
	"fmt"
	"sort"

	"github.com/dave/jennifer/jen"
	"github.com/mcpx-dev/mcpx/gen/model"
)

// convWriter writes one spoke's converters: for every pair of a wire type
// and the hub type it stands for, down (hub to wire) beside up (wire to hub).
type convWriter struct {
	f   *jen.File
	hub *model.Hub
	w   *model.Wire
	rev string
	pkg string

	usesMeta bool        // foreignMetaKeys is needed
	plan     *[]metaConv // reserved keys converted, once computed
}

type pair struct{ w, h *model.Type }

func (c *convWriter) pairs() []pair {
	var out []pair
	for _, wt := range c.w.SortedTypes() {
		if wt.Kind != model.Object && wt.Kind != model.Union {
			continue
		}
		seen := map[*model.Type]bool{}
		hs := append([]*model.Type(nil), c.w.Pairs[wt]...)
		sort.SliceStable(hs, func(i, j int) bool { return hs[i].Name < hs[j].Name })
		for _, h := range hs {
			if !seen[h] && h.Kind == wt.Kind {
				seen[h] = true
				out = append(out, pair{wt, h})
			}
		}
	}
	return out
}

// fn names the converter of a pair in one direction.
func fn(dir string, w, h *model.Type) string {
	if w.Name == h.Name {
		return dir + w.Name
	}
	return dir + w.Name + "From" + h.Name
}

func (c *convWriter) write() {
	for _, p := range c.pairs() {
		if p.w.Kind == model.Object {
			c.object(p)
		} else {
			c.union(p)
		}
	}
	c.metaKeys()
	if c.usesMeta {
		c.metaFuncs()
	}
	c.dispatch()
}

func (c *convWriter) object(p pair) {
	var down, up []jen.Code
	for _, wf := range p.w.Fields {
		if wf.Nested {
			down = append(down, c.convert("down", wf.Type, p.h, true, ptr(wf.Type, wf.Required), jen.Id("in"), jen.Id("out").Dot(wf.Name), wf)...)
			up = append(up, jen.Id(fn("up", wf.Type, p.h)).Call(jen.Op("&").Id("in").Dot(wf.Name), jen.Id("out")))
			continue
		}
		hf := c.hubField(p, wf)
		if hf == nil {
			down = append(down, jen.Comment(fmt.Sprintf("%s: no hub member", wf.Wire)))
			continue
		}
		d := c.convertField("down", hf, wf, jen.Id("in").Dot(hf.Name), jen.Id("out").Dot(wf.Name))
		if e := c.hub.Overlay.Lookup("keep-if", p.h.Name+"."+hf.Wire, c.rev); e != nil {
			d = []jen.Code{jen.If(jen.Qual(OverridePath, e.Func).Call(jen.Id("in").Dot(hf.Name))).Block(d...)}
		}
		down = append(down, d...)
		up = append(up, c.convertField("up", hf, wf, jen.Id("in").Dot(wf.Name), jen.Id("out").Dot(hf.Name))...)
	}
	dn, un := fn("down", p.w, p.h), fn("up", p.w, p.h)
	c.f.Func().Id(dn).Params(jen.Id("in").Op("*").Qual(HubPath, p.h.Name), jen.Id("out").Op("*").Id(p.w.Name)).Block(down...)
	c.f.Line()
	c.f.Func().Id(un).Params(jen.Id("in").Op("*").Id(p.w.Name), jen.Id("out").Op("*").Qual(HubPath, p.h.Name)).Block(up...)
	c.f.Line()
}

// hubField finds the hub member a wire member stands for.
func (c *convWriter) hubField(p pair, wf *model.Field) *model.Field {
	for _, hf := range p.h.Fields {
		wire := hf.Wire
		if alt, ok := hf.Wires[c.rev]; ok {
			wire = alt
		}
		if wire == wf.Wire && hf.Revs[c.rev] {
			return hf
		}
	}
	return p.h.Field(wf.Wire)
}

func (c *convWriter) convertField(dir string, hf, wf *model.Field, src, dst *jen.Statement) []jen.Code {
	if dir == "down" {
		return c.convert(dir, wf.Type, hf.Type, ptr(hf.Type, hf.Required), ptr(wf.Type, wf.Required), src, dst, wf)
	}
	return c.convert(dir, wf.Type, hf.Type, ptr(wf.Type, wf.Required), ptr(hf.Type, hf.Required), src, dst, wf)
}

// convert writes statements converting src to dst. wt and ht are the wire
// and hub types; srcPtr and dstPtr say whether src and dst are pointers.
// required (from wf) decides whether a nil list becomes [] on the way down.
func (c *convWriter) convert(dir string, wt, ht *model.Type, srcPtr, dstPtr bool, src, dst *jen.Statement, wf *model.Field) []jen.Code {
	from, to := ht, wt
	toPkg := c.pkg
	if dir == "up" {
		from, to = wt, ht
		toPkg = HubPath
	}
	cp := func(s *jen.Statement) *jen.Statement { return s.Clone() }
	switch {
	case to.Kind == model.Const && (from.Kind != model.Const || !dstPtr):
		return nil // a required constant's zero value is the constant
	case to.Kind == model.Const && !srcPtr:
		return []jen.Code{cp(dst).Op("=").New(goType(to, toPkg))}
	case from.Kind == model.Const && to.Kind != model.Const: // into an enum or a string
		val := jen.Lit(from.Values[0])
		if to.Kind == model.Enum {
			val = jen.Qual(HubPath, to.Name).Call(val)
		}
		return []jen.Code{cp(dst).Op("=").Add(val)}
	case to.Kind == model.Meta && dir == "down":
		c.usesMeta = true
		if len(c.metaIn("down")) > 0 {
			return []jen.Code{cp(dst).Op("=").Id("downMeta").Call(cp(src))}
		}
		return []jen.Code{cp(dst).Op("=").Add(cp(src)).Dot("Without").Call(jen.Id("foreignMetaKeys").Op("..."))}
	case to.Kind == model.Meta && from.Kind == model.Meta && len(c.metaIn("up")) > 0:
		return []jen.Code{cp(dst).Op("=").Id("upMeta").Call(cp(src))}
	case to.Kind == model.Raw && from.Kind != model.Raw:
		// A place this revision leaves open: the hub value as JSON. A value
		// that does not encode (a union with no variant set) leaves it absent.
		enc := jen.List(cp(dst), jen.Id("_")).Op("=").Qual(jsonPath, "Marshal").Call(cp(src))
		if srcPtr {
			return []jen.Code{jen.If(cp(src).Op("!=").Nil()).Block(enc)}
		}
		return []jen.Code{enc}
	case from.Kind == model.Raw && to.Kind != model.Raw:
		// What this revision leaves open, into the hub's shape; JSON that
		// does not fit it is not an error.
		if dstPtr {
			return []jen.Code{jen.If(jen.Len(src).Op(">").Lit(0)).Block(
				cp(dst).Op("=").New(goType(to, toPkg)),
				jen.Id("_").Op("=").Qual(decodePath, "Unmarshal").Call(cp(src), cp(dst)))}
		}
		return []jen.Code{jen.If(jen.Len(src).Op(">").Lit(0)).Block(
			jen.Id("_").Op("=").Qual(decodePath, "Unmarshal").Call(cp(src), jen.Op("&").Add(cp(dst))))}
	case to.Kind == model.Object || to.Kind == model.Union:
		var conv string
		if dir == "down" {
			conv = fn("down", wt, ht)
		} else {
			conv = fn("up", wt, ht)
		}
		s := src
		if !srcPtr {
			s = jen.Op("&").Add(cp(src))
		}
		switch {
		case srcPtr && dstPtr:
			return []jen.Code{jen.If(cp(src).Op("!=").Nil()).Block(cp(dst).Op("=").New(goType(to, toPkg)), jen.Id(conv).Call(s, cp(dst)))}
		case srcPtr:
			return []jen.Code{jen.If(cp(src).Op("!=").Nil()).Block(jen.Id(conv).Call(s, jen.Op("&").Add(cp(dst))))}
		case dstPtr:
			return []jen.Code{cp(dst).Op("=").New(goType(to, toPkg)), jen.Id(conv).Call(s, cp(dst))}
		}
		return []jen.Code{jen.Id(conv).Call(s, jen.Op("&").Add(cp(dst)))}
	case to.Kind == model.Array || to.Kind == model.Map:
		elemW, elemH := wt.Elem, ht.Elem
		make_ := jen.Make(goType(to, toPkg), jen.Len(src))
		var loop jen.Code
		if to.Kind == model.Array {
			loop = jen.For(jen.Id("i").Op(":=").Range().Add(cp(src))).Block(
				c.convert(dir, elemW, elemH, false, false, cp(src).Index(jen.Id("i")), cp(dst).Index(jen.Id("i")), nil)...)
		} else {
			loop = jen.For(jen.List(jen.Id("k"), jen.Id("v")).Op(":=").Range().Add(cp(src))).Block(
				append([]jen.Code{jen.Var().Id("e").Add(goType(to.Elem, toPkg))},
					append(c.convert(dir, elemW, elemH, false, false, jen.Id("v"), jen.Id("e"), nil),
						cp(dst).Index(jen.Id("k")).Op("=").Id("e"))...)...)
		}
		if to.Kind == model.Array && (to.Elem.Kind == model.String || to.Elem.Kind == model.Raw || to.Elem.Kind == model.Enum) && from.Elem.Kind == to.Elem.Kind {
			loop = jen.Copy(cp(dst), src)
		}
		body := []jen.Code{cp(dst).Op("=").Add(make_), loop}
		if dir == "down" && wf != nil && wf.Required && to.Kind == model.Array {
			return body // a required list is [] even when the hub has none
		}
		return []jen.Code{jen.If(cp(src).Op("!=").Nil()).Block(body...)}
	}
	// Scalars, enums, raw JSON, _meta going up.
	val := func(s *jen.Statement) *jen.Statement {
		switch {
		case from.Kind != to.Kind && (to.Kind == model.Integer || to.Kind == model.Number):
			return goType(to, toPkg).Call(s)
		case from.Kind == model.Enum && to.Kind == model.String:
			return jen.String().Call(s)
		case from.Kind == model.String && to.Kind == model.Enum:
			return jen.Qual(HubPath, to.Name).Call(s)
		}
		return s
	}
	same := from.Kind == to.Kind
	switch {
	case srcPtr && dstPtr && same:
		return []jen.Code{cp(dst).Op("=").Add(src)}
	case srcPtr && dstPtr:
		return []jen.Code{jen.If(cp(src).Op("!=").Nil()).Block(jen.Id("v").Op(":=").Add(val(jen.Op("*").Add(cp(src)))), cp(dst).Op("=").Op("&").Id("v"))}
	case srcPtr:
		return []jen.Code{jen.If(cp(src).Op("!=").Nil()).Block(cp(dst).Op("=").Add(val(jen.Op("*").Add(cp(src)))))}
	case dstPtr:
		return []jen.Code{jen.Id("v").Op(":=").Add(val(src)), cp(dst).Op("=").Op("&").Id("v")}
	}
	return []jen.Code{cp(dst).Op("=").Add(val(src))}
}

func (c *convWriter) union(p pair) {
	var down, up []jen.Code
	for _, hv := range p.h.Variants {
		wv := p.w.Variant(hv.Tag)
		target := wv
		var pre *jen.Statement
		if wv == nil {
			// A fallback for this variant, else the union's "*" one: any
			// object variant the revision lacks (one a newer revision adds)
			// that no specific entry covers, so it needs no entry of its own.
			var specific, star *model.Entry
			for _, e := range c.hub.Overlay.Find("fallback", p.h.Name, c.rev) {
				switch {
				case e.Variant == hv.Tag:
					specific = e
				case e.Variant == "*" && hv.Type.Kind == model.Object:
					star = e
				}
			}
			if e := cmp.Or(specific, star); e != nil {
				target = p.w.Variant(e.As)
				pre = jen.Qual(OverridePath, e.Func).Call(jen.Id("x"))
			}
		}
		if target == nil {
			down = append(down, jen.Case(variantGo(hv, HubPath)).Block(
				jen.Id("out").Dot("missing").Op("=").Lit(hubVariantName(hv))))
			continue
		}
		src := jen.Id("x")
		if pre != nil {
			src = pre
		}
		down = append(down, jen.Case(variantGo(hv, HubPath)).Block(c.variantConv("down", target, c.variantHub(target, hv, pre != nil), src)...))
	}
	down = append(down, jen.Default().Block(jen.Id("out").Dot("missing").Op("=").Qual("fmt", "Sprintf").Call(jen.Lit("%T"), jen.Id("in").Dot("Value"))))
	for _, wv := range p.w.Variants {
		hv := p.h.Variant(wv.Tag)
		if hv == nil {
			continue
		}
		up = append(up, jen.Case(variantGo(wv, c.pkg)).Block(c.variantConv("up", wv, hv, jen.Id("x"))...))
	}
	dn, un := fn("down", p.w, p.h), fn("up", p.w, p.h)
	c.f.Func().Id(dn).Params(jen.Id("in").Op("*").Qual(HubPath, p.h.Name), jen.Id("out").Op("*").Id(p.w.Name)).Block(
		jen.Switch(jen.Id("x").Op(":=").Id("in").Dot("Value").Assert(jen.Type())).Block(down...),
	)
	c.f.Line()
	c.f.Func().Id(un).Params(jen.Id("in").Op("*").Id(p.w.Name), jen.Id("out").Op("*").Qual(HubPath, p.h.Name)).Block(
		jen.Switch(jen.Id("x").Op(":=").Id("in").Dot("Value").Assert(jen.Type())).Block(up...),
	)
	c.f.Line()
}

func hubVariantName(v *model.Variant) string {
	if v.Type.Kind == model.Array {
		return listName(v.Type)
	}
	return v.Type.Name
}

// variantHub is the hub variant a wire variant converts from: the one with
// the same tag, or after a fallback, the variant the fallback produces.
func (c *convWriter) variantHub(wv, hv *model.Variant, fallback bool) *model.Variant {
	if !fallback {
		return hv
	}
	for _, h := range c.hubUnionOf(hv) {
		if v := h.Variant(wv.Tag); v != nil {
			return v
		}
	}
	return hv
}

func (c *convWriter) hubUnionOf(v *model.Variant) []*model.Type {
	var out []*model.Type
	for _, t := range c.hub.SortedTypes() {
		for _, x := range t.Variants {
			if x == v {
				out = append(out, t)
			}
		}
	}
	return out
}

func (c *convWriter) variantConv(dir string, wv, hv *model.Variant, src *jen.Statement) []jen.Code {
	if wv.Type.Kind == model.Array {
		var elemConv string
		to, toPkg := listName(wv.Type), c.pkg
		if dir == "down" {
			elemConv = fn("down", wv.Type.Elem, hv.Type.Elem)
		} else {
			elemConv = fn("up", wv.Type.Elem, hv.Type.Elem)
			toPkg = HubPath
		}
		return []jen.Code{
			jen.Id("l").Op(":=").Make(jen.Qual(toPkg, to), jen.Len(src)),
			jen.For(jen.Id("i").Op(":=").Range().Add(src.Clone())).Block(jen.Id(elemConv).Call(jen.Op("&").Add(src.Clone()).Index(jen.Id("i")), jen.Op("&").Id("l").Index(jen.Id("i")))),
			jen.Id("out").Dot("Value").Op("=").Id("l"),
		}
	}
	if dir == "down" {
		return []jen.Code{
			jen.Id("v").Op(":=").New(jen.Id(wv.Type.Name)),
			jen.Id(fn("down", wv.Type, hv.Type)).Call(src, jen.Id("v")),
			jen.Id("out").Dot("Value").Op("=").Id("v"),
		}
	}
	return []jen.Code{
		jen.Id("v").Op(":=").New(jen.Qual(HubPath, hv.Type.Name)),
		jen.Id(fn("up", wv.Type, hv.Type)).Call(src, jen.Id("v")),
		jen.Id("out").Dot("Value").Op("=").Id("v"),
	}
}

// metaKeys writes foreignMetaKeys, the keys every downgrade of a _meta
// removes with mcp.Meta.Without, if a downgrade has a _meta.
func (c *convWriter) metaKeys() {
	if !c.usesMeta {
		return
	}
	var foreign []string
	for k, revs := range c.hub.MetaKeys {
		if !revs[c.rev] {
			foreign = append(foreign, k)
		}
	}
	sort.Strings(foreign)
	var lits []jen.Code
	for _, k := range foreign {
		lits = append(lits, jen.Lit(k))
	}
	c.f.Comment("foreignMetaKeys are the reserved _meta keys that other revisions define and")
	c.f.Comment(c.rev + " does not: every downgrade removes them, so they never reach a " + c.rev + " peer.")
	c.f.Var().Id("foreignMetaKeys").Op("=").Index().String().Values(lits...)
	c.f.Line()
}

// dispatch writes Downgrade, Upgrade and New, the only exported way to the
// converters, each a type switch over the pairs.
func (c *convWriter) dispatch() {
	var down, up, news []jen.Code
	hubDone, wireDone := map[string]bool{}, map[string]bool{}
	for _, p := range c.primaryPairs() {
		if !hubDone[p.h.Name] {
			hubDone[p.h.Name] = true
			down = append(down, jen.Case(jen.Op("*").Qual(HubPath, p.h.Name)).Block(
				jen.Id("out").Op(":=").New(jen.Id(p.w.Name)), jen.Id(fn("down", p.w, p.h)).Call(jen.Id("x"), jen.Id("out")), jen.Return(jen.Id("out"), jen.True())))
			news = append(news, jen.Case(jen.Lit(p.h.Name)).Block(jen.Return(jen.New(jen.Id(p.w.Name)))))
		}
		if !wireDone[p.w.Name] {
			wireDone[p.w.Name] = true
			up = append(up, jen.Case(jen.Op("*").Id(p.w.Name)).Block(
				jen.Id("out").Op(":=").New(jen.Qual(HubPath, p.h.Name)), jen.Id(fn("up", p.w, p.h)).Call(jen.Id("x"), jen.Id("out")), jen.Return(jen.Id("out"), jen.True())))
		}
	}
	down = append(down, jen.Default().Block(jen.Return(jen.Nil(), jen.False())))
	up = append(up, jen.Default().Block(jen.Return(jen.Nil(), jen.False())))
	c.f.Comment(fmt.Sprintf("Downgrade converts v, a pointer to a hub type, to its %s shape; ok is", c.rev))
	c.f.Comment("false when this revision has no such type.")
	c.f.Func().Id("Downgrade").Params(jen.Id("v").Any()).Params(jen.Id("out").Any(), jen.Id("ok").Bool()).Block(
		jen.Switch(jen.Id("x").Op(":=").Id("v").Assert(jen.Type())).Block(down...),
	)
	c.f.Line()
	c.f.Comment(fmt.Sprintf("Upgrade converts v, a pointer to a %s type, to the hub shape; ok is", c.rev))
	c.f.Comment("false when v is not one of this package's types.")
	c.f.Func().Id("Upgrade").Params(jen.Id("v").Any()).Params(jen.Id("out").Any(), jen.Id("ok").Bool()).Block(
		jen.Switch(jen.Id("x").Op(":=").Id("v").Assert(jen.Type())).Block(up...),
	)
	c.f.Line()
	news = append(news, jen.Default().Block(jen.Return(jen.Nil())))
	c.f.Comment("New returns a new zero value of the type named hubName in this revision, or")
	c.f.Comment("nil when it has none; decode into it, then Upgrade.")
	c.f.Func().Id("New").Params(jen.Id("hubName").String()).Any().Block(jen.Switch(jen.Id("hubName")).Block(news...))
}

// primaryPairs orders the pairs so that a same-named pair comes first: it is
// the one Downgrade, Upgrade and New use for its hub type.
func (c *convWriter) primaryPairs() []pair {
	ps := c.pairs()
	sort.SliceStable(ps, func(i, j int) bool {
		return (ps[i].w.Name == ps[i].h.Name) && (ps[j].w.Name != ps[j].h.Name)
	})
	return ps
}
