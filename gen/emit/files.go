package emit

import (
	"fmt"
	"sort"
	"strings"

	"github.com/dave/jennifer/jen"
	"github.com/mcpx-dev/mcpx/gen/model"
)

// Files returns every generated file for the hub. source is the provenance
// line for the headers.
func Files(h *model.Hub, source string) []*File {
	var out []*File
	out = append(out, hubDoc(), hubConstants(h, source), hubTypes(h, source))
	for _, w := range h.Wires {
		out = append(out, wireTypes(h, w, wireSource(w)), wireConvert(h, w, wireSource(w)))
	}
	out = append(out, dispatch(h, "schemas/manifest.json (revisions "+strings.Join(h.Revs, ", ")+")"), tables(h, source))
	return out
}

// hubDoc writes the hub's package doc: the model every generated package
// follows, in one place. It is read from no schema.
func hubDoc() *File {
	f := newFile(HubPath, "mcp", "generated/mcp/doc_gen.go", "gen/emit (the model's description; no schema)")
	for _, l := range strings.Split(strings.TrimSpace(hubPackageDoc), "\n") {
		f.F.PackageComment(l)
	}
	return f
}

const hubPackageDoc = `
Package mcp holds the hub types: every MCP message mcpx handles is built in
this shape, and converted only at the edge (runtime/edge), to or from the
revision its peer speaks. The generator (gen/, ` + "`make generate`" + `) writes
it and the packages listed below from schemas/:

 1. The hub, this package. Each type has the newest revision's shape and is
    a superset of every revision's: the schemas are merged newest first, and
    a member or union variant only older revisions have is added. A type's
    doc names its schema and, unless every revision has it, the revisions
    that do ("Since 2025-06-18.", "Revisions: 2024-11-05 to 2025-11-25.");
    [Revisions] lists them, newest first.
 2. One package per revision, generated/wire/vYYYYMMDD: that revision's types
    exactly as its schema has them, and the converters to and from the hub.
    A downgrade copies only what the revision has, drops the reserved _meta
    keys it does not define ([Meta.Without]) and converts the values of those
    it has like members; an upgrade fills the hub.
 3. [github.com/mcpx-dev/mcpx/generated/convert] dispatches Downgrade,
    Upgrade and New by [Revision]; the edge calls it.
    [github.com/mcpx-dev/mcpx/generated/revision] holds the tables of what
    each revision has: methods, members, variants, enum values, capabilities
    and _meta keys.
 4. The overlay, schemas/overlay.json, states the facts the schemas cannot:
    renames, reshapes, fallbacks for a variant a revision lacks, members kept
    as raw JSON. The few conversion steps that need code are hand-written in
    [github.com/mcpx-dev/mcpx/override], each named by its overlay entry and
    called by the generated converters.
`

func hubTypes(h *model.Hub, source string) *File {
	f := newFile(HubPath, "mcp", "generated/mcp/types_gen.go", source)
	types := h.SortedTypes()
	tw := &typeWriter{f: f.F, pkg: HubPath, hub: true, revs: h.Revs, docs: newDocs(declared(types, true), h.Methods)}
	tw.write(types)
	return f
}

func hubConstants(h *model.Hub, source string) *File {
	f := newFile(HubPath, "mcp", "generated/mcp/constants_gen.go", source)
	g := f.F
	g.Comment("Revision is a protocol revision, named by its date.")
	g.Type().Id("Revision").String()
	g.Line()
	var defs, list []jen.Code
	for i, r := range h.Revs {
		c := jen.Id(RevConst(r)).Id("Revision").Op("=").Lit(r)
		c.Comment(fmt.Sprintf("%s era", h.Wires[i].Era))
		defs = append(defs, c)
		list = append(list, jen.Id(RevConst(r)))
	}
	g.Comment("The revisions mcpx is generated from, newest first.")
	g.Const().Defs(defs...)
	g.Line()
	g.Comment("Revisions lists every revision, newest first.")
	g.Var().Id("Revisions").Op("=").Index().Id("Revision").Values(list...)
	g.Line()
	var mdefs []jen.Code
	for _, m := range h.Methods {
		name := "Method" + model.GoName(m.Name)
		c := jen.Id(name).Op("=").Lit(m.Name)
		if s := span(h.Revs, m.Revs); s != "" {
			c.Comment(s + ".")
		}
		mdefs = append(mdefs, c)
	}
	g.Comment("Method and notification names, from every revision's schema.")
	g.Const().Defs(mdefs...)
	g.Line()
	var keys []string
	for k := range h.MetaKeys {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var kdefs []jen.Code
	for _, k := range keys {
		_, after, _ := strings.Cut(k, "/")
		name := "MetaKey" + model.GoName(after)
		for _, e := range h.Overlay.Entries {
			if e.Kind == "rename" && e.Key == k && e.GoName != "" {
				name = e.GoName // the constant outlives a respelling
			}
		}
		c := jen.Id(name).Op("=").Lit(k)
		if s := span(h.Revs, h.MetaKeys[k]); s != "" {
			c.Comment(s + ".")
		}
		kdefs = append(kdefs, c)
	}
	g.Comment("Reserved _meta keys, from every revision's schema and the overlay.")
	g.Const().Defs(kdefs...)
	g.Line()
	g.Comment("Meta is a _meta object. Values stay raw JSON, so nothing a peer sends is")
	g.Comment("lost; the edge removes the reserved keys a revision does not define.")
	g.Type().Id("Meta").Map(jen.String()).Qual(jsonPath, "RawMessage")
	g.Line()
	g.Comment("Without returns m without keys: m itself when it has none of them, else a")
	g.Comment("copy, so m is never changed. A downgrade removes the reserved keys its")
	g.Comment("revision does not define with it.")
	g.Func().Params(jen.Id("m").Id("Meta")).Id("Without").Params(jen.Id("keys").Op("...").String()).Id("Meta").Block(
		jen.For(jen.List(jen.Id("_"), jen.Id("k")).Op(":=").Range().Id("keys")).Block(
			jen.If(jen.List(jen.Id("_"), jen.Id("ok")).Op(":=").Id("m").Index(jen.Id("k")), jen.Id("ok")).Block(
				jen.Id("out").Op(":=").Qual("maps", "Clone").Call(jen.Id("m")),
				jen.For(jen.List(jen.Id("_"), jen.Id("k")).Op(":=").Range().Id("keys")).Block(jen.Delete(jen.Id("out"), jen.Id("k"))),
				jen.Return(jen.Id("out")),
			),
		),
		jen.Return(jen.Id("m")),
	)
	g.Line()
	g.Comment("Replace returns m with the keys drop removed and the values of set added:")
	g.Comment("m itself when set is empty and m has none of drop, else a copy, so m is")
	g.Comment("never changed. The converters convert and respell reserved keys with it.")
	g.Func().Params(jen.Id("m").Id("Meta")).Id("Replace").Params(jen.Id("set").Id("Meta"), jen.Id("drop").Op("...").String()).Id("Meta").Block(
		jen.If(jen.Len(jen.Id("set")).Op("==").Lit(0)).Block(jen.Return(jen.Id("m").Dot("Without").Call(jen.Id("drop").Op("...")))),
		jen.Id("out").Op(":=").Make(jen.Id("Meta"), jen.Len(jen.Id("m")).Op("+").Len(jen.Id("set"))),
		jen.For(jen.List(jen.Id("k"), jen.Id("v")).Op(":=").Range().Id("m")).Block(jen.Id("out").Index(jen.Id("k")).Op("=").Id("v")),
		jen.For(jen.List(jen.Id("_"), jen.Id("k")).Op(":=").Range().Id("drop")).Block(jen.Delete(jen.Id("out"), jen.Id("k"))),
		jen.For(jen.List(jen.Id("k"), jen.Id("v")).Op(":=").Range().Id("set")).Block(jen.Id("out").Index(jen.Id("k")).Op("=").Id("v")),
		jen.Return(jen.Id("out")),
	)
	g.Line()
	// MarshalJSONTo: the map written by hand, as encoding/json writes it
	// (keys sorted, each raw value as it is, null for nil), without the
	// reflective map encoding that cost every message's _meta about two
	// allocations a member.
	tok := func(name string) *jen.Statement { return jen.Qual(jsontextPath, name) }
	check := func(call jen.Code) jen.Code {
		return jen.If(jen.Id("err").Op(":=").Add(call), jen.Id("err").Op("!=").Nil()).Block(jen.Return(jen.Id("err")))
	}
	g.Comment("MarshalJSONTo writes m into enc (mcpjson.Marshal) as encoding/json writes")
	g.Comment("it: keys sorted, each value as it is (null for nil); every message mcpx")
	g.Comment("sends carries a _meta, which reflection would encode member by member.")
	g.Func().Params(jen.Id("m").Id("Meta")).Id("MarshalJSONTo").Params(jen.Id("enc").Op("*").Qual(decodePath, "Encoder")).Error().Block(
		jen.If(jen.Id("m").Op("==").Nil()).Block(jen.Return(jen.Id("enc").Dot("WriteToken").Call(tok("Null")))),
		jen.Var().Id("arr").Index(jen.Lit(8)).String(),
		jen.Id("keys").Op(":=").Id("arr").Index(jen.Empty(), jen.Lit(0)),
		jen.For(jen.Id("k").Op(":=").Range().Id("m")).Block(jen.Id("keys").Op("=").Append(jen.Id("keys"), jen.Id("k"))),
		jen.Qual("slices", "Sort").Call(jen.Id("keys")),
		check(jen.Id("enc").Dot("WriteToken").Call(tok("BeginObject"))),
		jen.For(jen.List(jen.Id("_"), jen.Id("k")).Op(":=").Range().Id("keys")).Block(
			check(jen.Id("enc").Dot("WriteToken").Call(tok("String").Call(jen.Id("k")))),
			jen.Id("v").Op(":=").Id("m").Index(jen.Id("k")),
			jen.If(jen.Id("v").Op("==").Nil()).Block(jen.Id("v").Op("=").Qual(jsonPath, "RawMessage").Call(jen.Lit("null"))),
			check(jen.Id("enc").Dot("WriteValue").Call(tok("Value").Call(jen.Id("v")))),
		),
		jen.Return(jen.Id("enc").Dot("WriteToken").Call(tok("EndObject"))),
	)
	g.Line()
	var cases, names []jen.Code
	for _, t := range h.SortedTypes() {
		if t.Kind == model.Object || t.Kind == model.Union {
			cases = append(cases, jen.Case(jen.Lit(t.Name)).Block(jen.Return(jen.New(jen.Id(t.Name)))))
			names = append(names, jen.Lit(t.Name))
		}
	}
	cases = append(cases, jen.Default().Block(jen.Return(jen.Nil())))
	g.Comment("TypeNames lists the hub's object and union types, by name.")
	g.Var().Id("TypeNames").Op("=").Index().String().Values(names...)
	g.Line()
	g.Comment("New returns a pointer to a new zero value of the hub type name, or nil.")
	g.Func().Id("New").Params(jen.Id("name").String()).Any().Block(jen.Switch(jen.Id("name")).Block(cases...))
	g.Line()
	g.Comment("Envelope points at the members a result may carry besides its own: the edge")
	g.Comment("fills them for 2026-07-28 (resultType, ttlMs, cacheScope, serverInfo in _meta).")
	g.Comment("A nil pointer is a member the type does not have.")
	g.Type().Id("Envelope").Struct(
		jen.Id("Meta").Op("*").Id("Meta"),
		jen.Id("ResultType").Op("*").String(),
		jen.Id("TTLMs").Op("*").Int64(),
		jen.Id("CacheScope").Op("*").Id("CacheScope"),
	)
	g.Line()
	g.Comment("Enveloped is implemented by every hub type with a _meta.")
	g.Type().Id("Enveloped").Interface(jen.Id("Envelope").Params().Id("Envelope"))
	g.Line()
	for _, t := range h.SortedTypes() {
		if t.Kind != model.Object || t.Field("_meta") == nil {
			continue
		}
		d := jen.Dict{jen.Id("Meta"): jen.Op("&").Id("t").Dot("Meta")}
		if f := t.Field("resultType"); f != nil && f.Type.Kind == model.String && f.Required {
			d[jen.Id("ResultType")] = jen.Op("&").Id("t").Dot(f.Name)
		}
		if f := t.Field("ttlMs"); f != nil && f.Type.Kind == model.Integer && f.Required {
			d[jen.Id("TTLMs")] = jen.Op("&").Id("t").Dot(f.Name)
		}
		if f := t.Field("cacheScope"); f != nil && f.Type.Kind == model.Enum && f.Type.Name == "CacheScope" && f.Required {
			d[jen.Id("CacheScope")] = jen.Op("&").Id("t").Dot(f.Name)
		}
		g.Func().Params(jen.Id("t").Op("*").Id(t.Name)).Id("Envelope").Params().Id("Envelope").Block(jen.Return(jen.Id("Envelope").Values(d)))
	}
	g.Line()
	g.Comment("Ptr returns a pointer to v, for optional members.")
	g.Func().Id("Ptr").Types(jen.Id("T").Any()).Params(jen.Id("v").Id("T")).Op("*").Id("T").Block(jen.Return(jen.Op("&").Id("v")))
	return f
}

func wireTypes(h *model.Hub, w *model.Wire, source string) *File {
	path := WirePath(w.Rev)
	f := newFile(path, WirePkg(w.Rev), "generated/wire/"+WirePkg(w.Rev)+"/types_gen.go", source)
	f.F.PackageComment(fmt.Sprintf("Package %s holds the types of protocol revision %s (%s era) exactly as", WirePkg(w.Rev), w.Rev, w.Era))
	f.F.PackageComment("its schema declares them, and their conversions to and from the hub types")
	f.F.PackageComment("in package mcp. A value of these types can only carry what " + w.Rev + " has.")
	var types []*model.Type
	for _, t := range w.SortedTypes() {
		if t.Kind == model.Object || t.Kind == model.Union {
			types = append(types, t)
		}
	}
	tw := &typeWriter{f: f.F, pkg: path, rev: w.Rev, revs: h.Revs, docs: newDocs(declared(types, false), h.Methods)}
	tw.write(types)
	return f
}

func wireConvert(h *model.Hub, w *model.Wire, source string) *File {
	path := WirePath(w.Rev)
	f := newFile(path, WirePkg(w.Rev), "generated/wire/"+WirePkg(w.Rev)+"/convert_gen.go", source)
	cw := &convWriter{f: f.F, hub: h, w: w, rev: w.Rev, pkg: path}
	cw.write()
	return f
}

// dispatch writes package convert: Downgrade and Upgrade by revision.
func dispatch(h *model.Hub, source string) *File {
	f := newFile(ConvertPath, "convert", "generated/convert/convert_gen.go", source)
	g := f.F
	g.PackageComment("Package convert is the edge's entry point to the generated conversions:")
	g.PackageComment("hub values down to any revision's shape and back.")
	var down, up, news []jen.Code
	for _, r := range h.Revs {
		c := jen.Qual(HubPath, RevConst(r))
		down = append(down, jen.Case(c).Block(jen.List(jen.Id("out"), jen.Id("ok")).Op("=").Qual(WirePath(r), "Downgrade").Call(jen.Id("v"))))
		up = append(up, jen.Case(c.Clone()).Block(jen.List(jen.Id("out"), jen.Id("ok")).Op("=").Qual(WirePath(r), "Upgrade").Call(jen.Id("v"))))
		news = append(news, jen.Case(c.Clone()).Block(jen.Return(jen.Qual(WirePath(r), "New").Call(jen.Id("hubName")))))
	}
	fail := func(verb string) jen.Code {
		return jen.If(jen.Op("!").Id("ok")).Block(jen.Return(jen.Nil(), jen.Qual("fmt", "Errorf").Call(jen.Lit(verb+" %T to %s: the revision has no such type"), jen.Id("v"), jen.Id("rev"))))
	}
	g.Comment("Downgrade converts v, a pointer to a hub type, to rev's shape.")
	g.Func().Id("Downgrade").Params(jen.Id("rev").Qual(HubPath, "Revision"), jen.Id("v").Any()).Params(jen.Any(), jen.Error()).Block(
		jen.Var().Id("out").Any(), jen.Var().Id("ok").Bool(),
		jen.Switch(jen.Id("rev")).Block(down...), fail("downgrade"), jen.Return(jen.Id("out"), jen.Nil()))
	g.Line()
	g.Comment("Upgrade converts v, a pointer to one of rev's types, to the hub shape.")
	g.Func().Id("Upgrade").Params(jen.Id("rev").Qual(HubPath, "Revision"), jen.Id("v").Any()).Params(jen.Any(), jen.Error()).Block(
		jen.Var().Id("out").Any(), jen.Var().Id("ok").Bool(),
		jen.Switch(jen.Id("rev")).Block(up...), fail("upgrade"), jen.Return(jen.Id("out"), jen.Nil()))
	g.Line()
	news = append(news, jen.Default().Block(jen.Return(jen.Nil())))
	g.Comment("New returns a new zero value of rev's form of the hub type hubName, or nil.")
	g.Func().Id("New").Params(jen.Id("rev").Qual(HubPath, "Revision"), jen.Id("hubName").String()).Any().Block(jen.Switch(jen.Id("rev")).Block(news...))
	return f
}
