package emit

import (
	"github.com/dave/jennifer/jen"
	"github.com/mcpx-dev/mcpx/gen/model"
)

// tables writes package revision: what exists in each revision, by hub name.
func tables(h *model.Hub, source string) *File {
	f := newFile(TablesPath, "revision", "generated/revision/tables_gen.go", source)
	g := f.F
	var tabs []jen.Code
	for i, rev := range h.Revs {
		w := h.Wires[i]
		var methods []jen.Code
		for _, m := range h.Methods {
			if !m.Revs[rev] {
				continue
			}
			var wm *model.Method
			for _, x := range w.Methods {
				if x.Name == m.Name {
					wm = x
				}
			}
			d := jen.Dict{jen.Id("Name"): jen.Lit(m.Name)}
			if m.Notification {
				d[jen.Id("Notification")] = jen.True()
			}
			if wm != nil && wm.FromClient {
				d[jen.Id("FromClient")] = jen.True()
			}
			if wm != nil && wm.FromServer {
				d[jen.Id("FromServer")] = jen.True()
			}
			if m.Params != nil {
				d[jen.Id("Params")] = jen.Lit(m.Params.Name)
			}
			if m.Result != nil {
				d[jen.Id("Result")] = jen.Lit(m.Result.Name)
			}
			methods = append(methods, jen.Values(d))
		}
		var types []jen.Code
		for _, t := range h.SortedTypes() {
			if !t.Revs[rev] || (t.Kind != model.Object && t.Kind != model.Union && t.Kind != model.Enum) {
				continue
			}
			d := jen.Dict{jen.Id("Name"): jen.Lit(t.Name)}
			var have, dropped, vals []jen.Code
			renamed := jen.Dict{}
			for _, fl := range t.Fields {
				if fl.Revs[rev] {
					name := fl.Wire
					if alt, ok := fl.Wires[rev]; ok {
						name = alt
						renamed[jen.Lit(alt)] = jen.Lit(fl.Wire)
					}
					have = append(have, jen.Lit(name))
				} else {
					dropped = append(dropped, jen.Lit(fl.Wire))
				}
			}
			for _, v := range t.Variants {
				if v.Revs[rev] {
					vals = append(vals, jen.Lit(v.Tag))
				}
			}
			for _, v := range t.Values {
				if t.ValueRevs[v][rev] {
					vals = append(vals, jen.Lit(v))
				}
			}
			if len(have) > 0 {
				d[jen.Id("Fields")] = jen.Index().String().Values(have...)
			}
			if len(dropped) > 0 {
				d[jen.Id("Dropped")] = jen.Index().String().Values(dropped...)
			}
			if len(renamed) > 0 {
				d[jen.Id("Renamed")] = jen.Map(jen.String()).String().Values(renamed)
			}
			switch t.Kind {
			case model.Union:
				d[jen.Id("Variants")] = jen.Index().String().Values(vals...)
			case model.Enum:
				d[jen.Id("Values")] = jen.Index().String().Values(vals...)
			}
			types = append(types, jen.Values(d))
		}
		var metaKeys []jen.Code
		metaRenamed := jen.Dict{}
		for _, k := range sortedKeys(h.MetaKeys) {
			if h.MetaKeys[k][rev] {
				metaKeys = append(metaKeys, jen.Lit(h.MetaWire(k, rev)))
				if w := h.MetaWire(k, rev); w != k {
					metaRenamed[jen.Lit(w)] = jen.Lit(k)
				}
			}
		}
		d := jen.Dict{
			jen.Id("Revision"):           jen.Qual(HubPath, RevConst(rev)),
			jen.Id("Era"):                jen.Lit(w.Era),
			jen.Id("Methods"):            jen.Index().Id("Method").Values(methods...),
			jen.Id("Types"):              jen.Index().Id("Type").Values(types...),
			jen.Id("ServerCapabilities"): capPaths(h.Types["ServerCapabilities"], rev),
			jen.Id("ClientCapabilities"): capPaths(h.Types["ClientCapabilities"], rev),
			jen.Id("MetaKeys"):           jen.Index().String().Values(metaKeys...),
		}
		if w.Batches {
			d[jen.Id("Batches")] = jen.True()
		}
		if len(metaRenamed) > 0 {
			d[jen.Id("MetaRenamed")] = jen.Map(jen.String()).String().Values(metaRenamed)
		}
		tabs = append(tabs, jen.Values(d))
	}
	g.PackageComment("Package revision holds what the generator learnt from each revision's schema:")
	g.PackageComment("which methods, members, union variants, enum values, capabilities and")
	g.PackageComment("reserved _meta keys exist, by hub name. The converters in package wire are")
	g.PackageComment("generated from the same model; `mcpx revisions` prints these tables.")
	g.Comment("Table is what one revision has.")
	g.Type().Id("Table").Struct(
		jen.Id("Revision").Qual(HubPath, "Revision"),
		jen.Id("Era").String().Comment(`"legacy" (initialize) or "modern" (per-request _meta)`),
		jen.Id("Methods").Index().Id("Method").Comment("by name"),
		jen.Id("Types").Index().Id("Type").Comment("by hub name; only types this revision has"),
		jen.Id("ServerCapabilities").Index().String().Comment("dotted member paths"),
		jen.Id("ClientCapabilities").Index().String().Comment("dotted member paths"),
		jen.Id("MetaKeys").Index().String().Comment("reserved _meta keys defined, as this revision spells them"),
		jen.Id("MetaRenamed").Map(jen.String()).String().Comment("this revision's spelling of a reserved key -> the hub's, where they differ"),
		jen.Id("Batches").Bool().Comment("JSON-RPC batches exist (JSONRPCBatchRequest)"),
	)
	g.Line()
	g.Comment("Method is a request or notification and its hub params and result types.")
	g.Type().Id("Method").Struct(
		jen.Id("Name").String(),
		jen.Id("Notification").Bool(),
		jen.Id("FromClient").Bool().Comment("sent by the client"),
		jen.Id("FromServer").Bool().Comment("sent by the server; some methods go both ways"),
		jen.Id("Params").String().Comment(`hub type of params; "" when it takes none`),
		jen.Id("Result").String().Comment(`hub type of the result; "" for notifications`),
	)
	g.Line()
	g.Comment("Type is what one revision has of a hub type.")
	g.Type().Id("Type").Struct(
		jen.Id("Name").String(),
		jen.Id("Fields").Index().String().Comment("members, as this revision spells them"),
		jen.Id("Dropped").Index().String().Comment("hub members this revision lacks: a downgrade drops them"),
		jen.Id("Renamed").Map(jen.String()).String().Comment("this revision's spelling of a member -> the hub's, where they differ (overlay rename)"),
		jen.Id("Variants").Index().String().Comment("union variants by tag"),
		jen.Id("Values").Index().String().Comment("enum values"),
	)
	g.Line()
	g.Comment("Lookup returns the table of rev, or nil.")
	g.Func().Id("Lookup").Params(jen.Id("rev").Qual(HubPath, "Revision")).Op("*").Id("Table").Block(
		jen.For(jen.List(jen.Id("_"), jen.Id("t")).Op(":=").Range().Id("Tables")).Block(
			jen.If(jen.Id("t").Dot("Revision").Op("==").Id("rev")).Block(jen.Return(jen.Id("t")))),
		jen.Return(jen.Nil()))
	g.Line()
	g.Comment("Type returns what the revision has of the hub type name; ok is false when it has none.")
	g.Func().Params(jen.Id("t").Op("*").Id("Table")).Id("Type").Params(jen.Id("name").String()).Params(jen.Id("Type"), jen.Bool()).Block(
		jen.For(jen.List(jen.Id("_"), jen.Id("x")).Op(":=").Range().Id("t").Dot("Types")).Block(
			jen.If(jen.Id("x").Dot("Name").Op("==").Id("name")).Block(jen.Return(jen.Id("x"), jen.True()))),
		jen.Return(jen.Id("Type").Values(), jen.False()))
	g.Line()
	g.Comment("HubName returns the hub's name of the member this revision spells wire.")
	g.Func().Params(jen.Id("t").Id("Type")).Id("HubName").Params(jen.Id("wire").String()).String().Block(
		jen.If(jen.List(jen.Id("h"), jen.Id("ok")).Op(":=").Id("t").Dot("Renamed").Index(jen.Id("wire")), jen.Id("ok")).Block(jen.Return(jen.Id("h"))),
		jen.Return(jen.Id("wire")))
	g.Line()
	g.Comment("MetaKey returns how the revision spells the reserved _meta key the hub")
	g.Comment("calls hub (an mcp.MetaKey constant), for code that reads a _meta before")
	g.Comment("it is converted.")
	g.Func().Params(jen.Id("t").Op("*").Id("Table")).Id("MetaKey").Params(jen.Id("hub").String()).String().Block(
		jen.For(jen.List(jen.Id("w"), jen.Id("h")).Op(":=").Range().Id("t").Dot("MetaRenamed")).Block(
			jen.If(jen.Id("h").Op("==").Id("hub")).Block(jen.Return(jen.Id("w")))),
		jen.Return(jen.Id("hub")))
	g.Line()
	g.Comment("Method returns the revision's method name; ok is false when it has none.")
	g.Func().Params(jen.Id("t").Op("*").Id("Table")).Id("Method").Params(jen.Id("name").String()).Params(jen.Id("Method"), jen.Bool()).Block(
		jen.For(jen.List(jen.Id("_"), jen.Id("x")).Op(":=").Range().Id("t").Dot("Methods")).Block(
			jen.If(jen.Id("x").Dot("Name").Op("==").Id("name")).Block(jen.Return(jen.Id("x"), jen.True()))),
		jen.Return(jen.Id("Method").Values(), jen.False()))
	g.Line()
	g.Comment("Tables holds one table per revision, newest first.")
	g.Var().Id("Tables").Op("=").Index().Op("*").Id("Table").Values(tabs...)
	return f
}

func sortedKeys(m map[string]model.RevSet) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sortStrings(out)
	return out
}

// capPaths lists the dotted member paths of a capabilities object in rev.
func capPaths(t *model.Type, rev string) jen.Code {
	var paths []jen.Code
	var walk func(t *model.Type, prefix string, depth int)
	walk = func(t *model.Type, prefix string, depth int) {
		if t == nil || t.Kind != model.Object || depth > 6 {
			return
		}
		for _, f := range t.Fields {
			if !f.Revs[rev] || f.Wire == "_meta" {
				continue
			}
			paths = append(paths, jen.Lit(prefix+f.Wire))
			walk(f.Type, prefix+f.Wire+".", depth+1)
		}
	}
	walk(t, "", 0)
	return jen.Index().String().Values(paths...)
}
