package emit

import (
	"fmt"
	"strings"

	"github.com/dave/jennifer/jen"
	"github.com/mcpx-dev/mcpx/gen/model"
)

// Methods writes generated/mcp/methods_gen.go: for every client-to-server
// request, its table entry (params, result, revisions, route), an optional
// handler interface, the generated Dispatch over them, and a client-side
// call over a Caller. It fails on a Go name that would collide with a hub
// type.
func Methods(h *model.Hub, routes []*model.Route, source string) (*File, error) {
	f := newFile(HubPath, "mcp", "generated/mcp/methods_gen.go", source)
	g := f.F
	taken := map[string]bool{"Caller": true, "ClientMethod": true, "ClientMethods": true, "LookupClientMethod": true,
		"Dispatch": true, "ErrNoHandler": true, "RouteBy": true, "RouteKey": true, "New": true, "Ptr": true, "Revisions": true, "TypeNames": true}
	for name := range h.Types {
		if taken[name] {
			return nil, fmt.Errorf("mcpx-gen: hub type %s collides with a name generated/mcp/methods_gen.go declares", name)
		}
	}
	bases := map[string]string{}
	for _, r := range routes {
		b := handlerName(r.Method)
		for _, n := range []string{b, b + "Handler"} {
			if h.Types[n] != nil {
				return nil, fmt.Errorf("mcpx-gen: method %s: its handler name %s is a hub type too", r.Method.Name, n)
			}
			if other, ok := bases[n]; ok {
				return nil, fmt.Errorf("mcpx-gen: methods %s and %s both have the handler name %s", other, r.Method.Name, n)
			}
			bases[n] = r.Method.Name
		}
	}

	g.Comment("RouteBy says how the gateway finds the upstream that answers a client")
	g.Comment("request (overlay kind \"route\"; gen/README.md).")
	g.Type().Id("RouteBy").String()
	g.Line()
	g.Const().Defs(
		jen.Id("RouteByName").Id("RouteBy").Op("=").Lit("name").Comment("a tool or prompt name in params"),
		jen.Id("RouteByURI").Id("RouteBy").Op("=").Lit("uri").Comment("a resource URI in params"),
		jen.Id("RouteByRef").Id("RouteBy").Op("=").Lit("ref").Comment("a reference in params: a prompt name or a URI"),
		jen.Id("RouteByTask").Id("RouteBy").Op("=").Lit("task").Comment("a task id in params"),
		jen.Id("RouteByMerge").Id("RouteBy").Op("=").Lit("merge").Comment("a list every upstream contributes to, merged by hand-written code"),
		jen.Id("RouteByLocal").Id("RouteBy").Op("=").Lit("local").Comment("answered by mcpx itself"),
	)
	g.Line()
	g.Comment("RouteKey is what a routed request names: a name in Space (\"tool\",")
	g.Comment("\"prompt\"), a URI (Space \"uri\") or a task id (Space \"task\").")
	g.Type().Id("RouteKey").Struct(jen.Id("Space").String(), jen.Id("Value").String())
	g.Line()
	g.Comment("ClientMethod is one request a client sends a server, as the tables have it.")
	g.Type().Id("ClientMethod").Struct(
		jen.Id("Name").String(),
		jen.Id("Params").String().Comment("hub params type; \"\" for none"),
		jen.Id("Result").String().Comment("hub result type"),
		jen.Id("Revisions").Index().Id("Revision").Comment("the revisions that have it, newest first"),
		jen.Id("By").Id("RouteBy"),
		jen.Id("Space").String().Comment("By name or ref: whose names; uri, task: \"uri\", \"task\""),
		jen.Id("Fallback").String().Comment("forwarded methods: \"refuse\" (-32601 naming the upstream) or \"empty\" (a zero result) for an upstream that lacks it"),
		jen.Comment("Key returns what params name, for a forwarded method; ok is false"),
		jen.Comment("when params name nothing it can route (a reference of another kind)."),
		jen.Id("Key").Func().Params(jen.Id("params").Any()).Params(jen.Id("RouteKey"), jen.Bool()),
		jen.Comment("WithKey returns a shallow copy of params naming value instead, for"),
		jen.Comment("params whose Key is ok."),
		jen.Id("WithKey").Func().Params(jen.Id("params").Any(), jen.Id("value").String()).Any(),
	)
	g.Line()

	var entries []jen.Code
	for _, r := range routes {
		entries = append(entries, methodEntry(h, r))
	}
	g.Comment("ClientMethods lists every client-to-server request, by name.")
	g.Var().Id("ClientMethods").Op("=").Index().Op("*").Id("ClientMethod").Values(entries...)
	g.Line()
	g.Comment("LookupClientMethod returns the client-to-server request called name, or nil.")
	g.Func().Id("LookupClientMethod").Params(jen.Id("name").String()).Op("*").Id("ClientMethod").Block(
		jen.For(jen.List(jen.Id("_"), jen.Id("m")).Op(":=").Range().Id("ClientMethods")).Block(
			jen.If(jen.Id("m").Dot("Name").Op("==").Id("name")).Block(jen.Return(jen.Id("m"))),
		),
		jen.Return(jen.Nil()),
	)
	g.Line()

	g.Comment("ErrNoHandler is Dispatch's answer for a handler that does not implement the")
	g.Comment("method's interface (or a method that is not a client request): the edge")
	g.Comment("answers it -32601.")
	g.Var().Id("ErrNoHandler").Op("=").Qual("errors", "New").Call(jen.Lit("no handler for the method"))
	g.Line()
	g.Comment("Caller sends a request in hub types and returns its hub result: an")
	g.Comment("upstream client. The functions named after each method call through it.")
	g.Type().Id("Caller").Interface(
		jen.Id("Call").Params(jen.Id("ctx").Qual("context", "Context"), jen.Id("method").String(), jen.Id("params").Any()).Params(jen.Any(), jen.Error()),
	)
	g.Line()

	var cases []jen.Code
	for _, r := range routes {
		m := r.Method
		b := handlerName(m)
		ctx := jen.Id("ctx").Qual("context", "Context")
		var sig []jen.Code
		sig = append(sig, ctx)
		if m.Params != nil {
			sig = append(sig, jen.Id("p").Op("*").Id(m.Params.Name))
		}
		res := jen.Params(jen.Op("*").Id(m.Result.Name), jen.Error())
		g.Commentf("%sHandler answers %s (%s). Revisions: %s.", b, m.Name, r.By, span(h.Revs, m.Revs))
		g.Type().Id(b + "Handler").Interface(jen.Id(b).Params(sig...).Add(res))
		g.Line()
		// The client-side call.
		csig := []jen.Code{jen.Id("ctx").Qual("context", "Context"), jen.Id("c").Id("Caller")}
		var body []jen.Code
		arg := jen.Nil()
		if m.Params != nil {
			csig = append(csig, jen.Id("p").Op("*").Id(m.Params.Name))
			body = append(body, jen.If(jen.Id("p").Op("==").Nil()).Block(jen.Id("p").Op("=").New(jen.Id(m.Params.Name))))
			arg = jen.Id("p")
		}
		body = append(body, jen.Return(jen.Id("callAs").Types(jen.Id(m.Result.Name)).Call(jen.Id("ctx"), jen.Id("c"), jen.Lit(m.Name), arg)))
		g.Commentf("%s sends %s through c.", b, m.Name)
		g.Func().Id(b).Params(csig...).Add(res.Clone()).Block(body...)
		g.Line()
		// The dispatch case.
		call := []jen.Code{jen.Id("ctx")}
		cb := []jen.Code{
			jen.List(jen.Id("x"), jen.Id("ok")).Op(":=").Id("h").Assert(jen.Id(b + "Handler")),
			jen.If(jen.Op("!").Id("ok")).Block(jen.Return(jen.Nil(), jen.Id("ErrNoHandler"))),
		}
		if m.Params != nil {
			cb = append(cb,
				jen.List(jen.Id("p"), jen.Id("err")).Op(":=").Id("paramsAs").Types(jen.Id(m.Params.Name)).Call(jen.Id("method"), jen.Id("params")),
				jen.If(jen.Id("err").Op("!=").Nil()).Block(jen.Return(jen.Nil(), jen.Id("err"))))
			call = append(call, jen.Id("p"))
		}
		cb = append(cb, jen.Return(jen.Id("resultOf").Call(jen.Id("x").Dot(b).Call(call...))))
		cases = append(cases, jen.Case(jen.Lit(m.Name)).Block(cb...))
	}
	g.Comment("Dispatch calls h's handler for method (h's " + "<Method>Handler interface) with")
	g.Comment("params, a pointer to the method's hub params type (nil: the zero value).")
	g.Comment("A handler without that interface gets ErrNoHandler.")
	g.Func().Id("Dispatch").Params(jen.Id("ctx").Qual("context", "Context"), jen.Id("h").Any(), jen.Id("method").String(), jen.Id("params").Any()).Params(jen.Any(), jen.Error()).Block(
		jen.Switch(jen.Id("method")).Block(cases...),
		jen.Return(jen.Nil(), jen.Id("ErrNoHandler")),
	)
	g.Line()
	g.Comment("paramsAs is params as a *P: nil is a new zero value.")
	g.Func().Id("paramsAs").Types(jen.Id("P").Any()).Params(jen.Id("method").String(), jen.Id("params").Any()).Params(jen.Op("*").Id("P"), jen.Error()).Block(
		jen.Switch(jen.Id("p").Op(":=").Id("params").Assert(jen.Type())).Block(
			jen.Case(jen.Nil()).Block(jen.Return(jen.New(jen.Id("P")), jen.Nil())),
			jen.Case(jen.Op("*").Id("P")).Block(
				jen.If(jen.Id("p").Op("==").Nil()).Block(jen.Return(jen.New(jen.Id("P")), jen.Nil())),
				jen.Return(jen.Id("p"), jen.Nil()),
			),
		),
		jen.Return(jen.Nil(), jen.Qual("fmt", "Errorf").Call(jen.Lit("%s: params are a %T, want a %T"), jen.Id("method"), jen.Id("params"), jen.New(jen.Id("P")))),
	)
	g.Line()
	g.Comment("resultOf returns a handler's answer as a Dispatch result: never a typed nil.")
	g.Func().Id("resultOf").Types(jen.Id("R").Any()).Params(jen.Id("r").Op("*").Id("R"), jen.Id("err").Error()).Params(jen.Any(), jen.Error()).Block(
		jen.If(jen.Id("err").Op("!=").Nil().Op("||").Id("r").Op("==").Nil()).Block(jen.Return(jen.Nil(), jen.Id("err"))),
		jen.Return(jen.Id("r"), jen.Nil()),
	)
	g.Line()
	g.Comment("callAs sends method through c and checks the result's type.")
	g.Func().Id("callAs").Types(jen.Id("R").Any()).Params(jen.Id("ctx").Qual("context", "Context"), jen.Id("c").Id("Caller"), jen.Id("method").String(), jen.Id("params").Any()).Params(jen.Op("*").Id("R"), jen.Error()).Block(
		jen.List(jen.Id("v"), jen.Id("err")).Op(":=").Id("c").Dot("Call").Call(jen.Id("ctx"), jen.Id("method"), jen.Id("params")),
		jen.If(jen.Id("err").Op("!=").Nil()).Block(jen.Return(jen.Nil(), jen.Id("err"))),
		jen.List(jen.Id("r"), jen.Id("ok")).Op(":=").Id("v").Assert(jen.Op("*").Id("R")),
		jen.If(jen.Op("!").Id("ok").Op("||").Id("r").Op("==").Nil()).Block(
			jen.Return(jen.Nil(), jen.Qual("fmt", "Errorf").Call(jen.Lit("%s answered a %T, want a %T"), jen.Id("method"), jen.Id("v"), jen.Id("r")))),
		jen.Return(jen.Id("r"), jen.Nil()),
	)
	return f, nil
}

// handlerName is the Go name of a method's handler: its request definition
// without "Request" (CallToolRequest: CallTool), so the server's methods
// (ListTools, CallTool, ...) are the handlers.
func handlerName(m *model.HubMethod) string {
	if b := strings.TrimSuffix(m.Def, "Request"); b != "" && b != m.Def {
		return b
	}
	return model.GoName(strings.ReplaceAll(m.Name, "/", "_"))
}

// methodEntry is the ClientMethods entry of r.
func methodEntry(h *model.Hub, r *model.Route) jen.Code {
	m := r.Method
	d := jen.Dict{jen.Id("Name"): jen.Lit(m.Name), jen.Id("Result"): jen.Lit(m.Result.Name)}
	if m.Params != nil {
		d[jen.Id("Params")] = jen.Lit(m.Params.Name)
	}
	var revs []jen.Code
	for _, rev := range h.Revs {
		if m.Revs[rev] {
			revs = append(revs, jen.Id(RevConst(rev)))
		}
	}
	d[jen.Id("Revisions")] = jen.Index().Id("Revision").Values(revs...)
	d[jen.Id("By")] = jen.Id(map[string]string{"name": "RouteByName", "uri": "RouteByURI", "ref": "RouteByRef", "task": "RouteByTask", "merge": "RouteByMerge", "local": "RouteByLocal"}[r.By])
	if !r.Forwarded() {
		return jen.Values(d)
	}
	d[jen.Id("Space")] = jen.Lit(r.Space)
	d[jen.Id("Fallback")] = jen.Lit(r.Fallback)
	pt := m.Params.Name
	get := []jen.Code{
		jen.List(jen.Id("p"), jen.Id("ok")).Op(":=").Id("params").Assert(jen.Op("*").Id(pt)),
		jen.If(jen.Op("!").Id("ok").Op("||").Id("p").Op("==").Nil()).Block(jen.Return(jen.Id("RouteKey").Values(), jen.False())),
	}
	set := []jen.Code{jen.Id("q").Op(":=").Op("*").Id("params").Assert(jen.Op("*").Id(pt))}
	if r.By != "ref" {
		get = append(get, jen.Return(jen.Id("RouteKey").Values(jen.Dict{jen.Id("Space"): jen.Lit(r.Space), jen.Id("Value"): jen.Id("p").Dot(r.Field.Name)}), jen.True()))
		set = append(set, jen.Id("q").Dot(r.Field.Name).Op("=").Id("value"))
	} else {
		var gc, sc []jen.Code
		for _, v := range r.Field.Type.Variants {
			k := model.RefKey(v)
			space := r.Space
			if k.Wire == "uri" {
				space = "uri"
			}
			vt := variantGo(v, HubPath)
			gc = append(gc, jen.Case(vt).Block(
				jen.If(jen.Id("v").Op("!=").Nil()).Block(jen.Return(jen.Id("RouteKey").Values(jen.Dict{jen.Id("Space"): jen.Lit(space), jen.Id("Value"): jen.Id("v").Dot(k.Name)}), jen.True()))))
			sc = append(sc, jen.Case(vt.Clone()).Block(
				jen.If(jen.Id("v").Op("!=").Nil()).Block(
					jen.Id("c").Op(":=").Op("*").Id("v"),
					jen.Id("c").Dot(k.Name).Op("=").Id("value"),
					jen.Id("q").Dot(r.Field.Name).Op("=").Id(r.Field.Type.Name).Values(jen.Dict{jen.Id("Value"): jen.Op("&").Id("c")}),
				)))
		}
		get = append(get, jen.Switch(jen.Id("v").Op(":=").Id("p").Dot(r.Field.Name).Dot("Value").Assert(jen.Type())).Block(gc...), jen.Return(jen.Id("RouteKey").Values(), jen.False()))
		set = append(set, jen.Switch(jen.Id("v").Op(":=").Id("q").Dot(r.Field.Name).Dot("Value").Assert(jen.Type())).Block(sc...))
	}
	set = append(set, jen.Return(jen.Op("&").Id("q")))
	d[jen.Id("Key")] = jen.Func().Params(jen.Id("params").Any()).Params(jen.Id("RouteKey"), jen.Bool()).Block(get...)
	d[jen.Id("WithKey")] = jen.Func().Params(jen.Id("params").Any(), jen.Id("value").String()).Any().Block(set...)
	return jen.Values(d)
}
