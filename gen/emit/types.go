package emit

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/dave/jennifer/jen"
	"github.com/mcpx-dev/mcpx/gen/model"
)

// typeWriter writes the named types of the hub or of one spoke.
type typeWriter struct {
	f     *jen.File
	pkg   string   // import path of the package being written
	hub   bool     // writing the hub (else a spoke)
	rev   string   // spoke: its revision
	revs  []string // all revisions, newest first
	docs  docs     // renders descriptions; links to the types written
	need  struct{ list bool }
	lists map[string]bool // list variant types declared
}

// declared names the types write declares in the package: a spoke takes
// enums and constants from the hub.
func declared(types []*model.Type, hub bool) []string {
	var names []string
	for _, t := range types {
		switch t.Kind {
		case model.Object, model.Union:
			names = append(names, t.Name)
		case model.Enum, model.Const:
			if hub {
				names = append(names, t.Name)
			}
		}
	}
	return names
}

func (w *typeWriter) write(types []*model.Type) {
	w.lists = map[string]bool{}
	for _, t := range types {
		switch t.Kind {
		case model.Object:
			w.object(t)
		case model.Union:
			w.union(t)
		case model.Enum:
			if w.hub {
				w.enum(t)
			}
		case model.Const:
			if w.hub {
				w.constant(t)
			}
		}
	}
	if w.need.list {
		w.f.Comment("startsArray reports whether the JSON value b is an array.")
		w.f.Func().Id("startsArray").Params(jen.Id("b").Index().Byte()).Bool().Block(
			jen.For(jen.List(jen.Id("_"), jen.Id("c")).Op(":=").Range().Id("b")).Block(
				jen.Switch(jen.Id("c")).Block(
					jen.Case(jen.LitRune(' '), jen.LitRune('\t'), jen.LitRune('\r'), jen.LitRune('\n')).Block(jen.Continue()),
				),
				jen.Return(jen.Id("c").Op("==").LitRune('[')),
			),
			jen.Return(jen.False()),
		)
	}
}

func (w *typeWriter) typeDoc(t *model.Type) {
	if d := w.docs.doc(t.Name, t.Doc, t.Deprecated); d != "" {
		for _, line := range strings.Split(d, "\n") {
			w.f.Comment(line)
		}
		w.f.Comment("")
	}
	src := t.Source
	if src == "" {
		src = "(inline)"
	}
	if w.hub {
		w.f.Comment(strings.TrimSpace(fmt.Sprintf("Schema: %s. %s", src, sentence(span(w.revs, t.Revs)))))
	} else {
		w.f.Comment(fmt.Sprintf("Schema: %s %s.", w.rev, src))
	}
}

func (w *typeWriter) object(t *model.Type) {
	w.typeDoc(t)
	var fields []jen.Code
	for _, f := range t.Fields {
		var c []jen.Code
		if d := w.docs.doc(f.Name, f.Doc, f.Deprecated); d != "" {
			for _, line := range strings.Split(d, "\n") {
				c = append(c, jen.Comment(line))
			}
		}
		if w.hub {
			if note := fieldNote(w.revs, t.Revs, f); note != "" {
				if len(c) > 0 {
					c = append(c, jen.Comment(""))
				}
				c = append(c, jen.Comment(note))
			}
		}
		for _, x := range c {
			fields = append(fields, x)
		}
		fields = append(fields, jen.Id(f.Name).Add(memberType(f, w.pkg)).Tag(tag(f, f.Wire)))
	}
	w.f.Type().Id(t.Name).Struct(fields...)
	w.f.Line()
}

// fieldNote says where a hub member exists when that is not everywhere its
// type exists, and how it is spelled where the spelling differs.
func fieldNote(all []string, typeRevs model.RevSet, f *model.Field) string {
	var notes []string
	if len(f.Revs) < len(typeRevs) {
		notes = append(notes, span(all, f.Revs)+"; dropped when sent to others.")
	}
	for _, r := range f.Revs.Sorted() {
		if w, ok := f.Wires[r]; ok {
			notes = append(notes, fmt.Sprintf("Spelled %q in %s.", w, r))
		}
	}
	return strings.Join(notes, " ")
}

func (w *typeWriter) enum(t *model.Type) {
	w.typeDoc(t)
	w.f.Type().Id(t.Name).String()
	var defs []jen.Code
	for _, v := range t.Values {
		c := jen.Id(t.Name + model.GoName(v)).Id(t.Name).Op("=").Lit(v)
		if len(t.ValueRevs[v]) < len(t.Revs) {
			c.Comment(sentence(span(w.revs, t.ValueRevs[v])))
		}
		defs = append(defs, c)
	}
	w.f.Const().Defs(defs...)
	w.f.Line()
}

func (w *typeWriter) constant(t *model.Type) {
	v := t.Values[0]
	lit := strconv.Quote(v)
	w.f.Comment(fmt.Sprintf("%s is the constant %s. Its zero value is that constant on the wire,", t.Name, lit))
	w.f.Comment("so a discriminator can never be left unset.")
	w.f.Type().Id(t.Name).Struct()
	w.f.Line()
	w.f.Comment("MarshalJSON writes " + lit + ".")
	w.f.Func().Params(jen.Id(t.Name)).Id("MarshalJSON").Params().Params(jen.Index().Byte(), jen.Error()).Block(
		jen.Return(jen.Index().Byte().Parens(jen.Lit(lit)), jen.Nil()),
	)
	w.f.Line()
	w.f.Comment("UnmarshalJSON accepts only " + lit + ".")
	plain, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	w.f.Func().Params(jen.Op("*").Id(t.Name)).Id("UnmarshalJSON").Params(jen.Id("b").Index().Byte()).Error().Block(
		jen.If(jen.String().Parens(jen.Id("b")).Op("==").Lit(string(plain))).Block(jen.Return(jen.Nil())), // as sent, read on every message
		jen.Var().Id("s").String(),
		jen.If(jen.Err().Op(":=").Qual(decodePath, "Unmarshal").Call(jen.Id("b"), jen.Op("&").Id("s")), jen.Err().Op("!=").Nil().Op("||").Id("s").Op("!=").Lit(v)).Block(
			jen.Return(jen.Qual("fmt", "Errorf").Call(jen.Lit("want "+lit+", got %s"), jen.Id("b"))),
		),
		jen.Return(jen.Nil()),
	)
	w.f.Line()
}

func (w *typeWriter) union(t *model.Type) {
	iface := t.Name + "Value"
	w.typeDoc(t)
	var names []string
	for _, v := range t.Variants {
		if v.Type.Kind == model.Array {
			names = append(names, listName(v.Type))
		} else {
			names = append(names, "*"+v.Type.Name)
		}
	}
	how := "by shape"
	if t.Disc != "" {
		how = fmt.Sprintf("by %q", t.Disc)
	}
	w.f.Comment(fmt.Sprintf("Its variants, told apart %s: %s.", how, strings.Join(names, ", ")))
	fields := []jen.Code{jen.Id("Value").Id(iface)}
	if !w.hub {
		fields = append(fields, jen.Line().Comment("missing names the hub variant that has no form in this revision, when").Line().Comment("a downgrade met one; MarshalJSON then fails with it."), jen.Id("missing").String())
	}
	w.f.Type().Id(t.Name).Struct(fields...)
	w.f.Line()
	w.f.Comment(fmt.Sprintf("%s is implemented by the variants of %s.", iface, t.Name))
	w.f.Type().Id(iface).Interface(jen.Id("is" + t.Name).Params())
	w.f.Line()
	for _, v := range t.Variants {
		if v.Type.Kind == model.Array {
			w.need.list = true
			ln := listName(v.Type)
			if !w.lists[ln] {
				w.lists[ln] = true
				w.f.Comment(fmt.Sprintf("%s is the list variant of the unions that allow a list of %s.", ln, v.Type.Elem.Name))
				w.f.Type().Id(ln).Add(goType(v.Type, w.pkg))
			}
			w.f.Func().Params(jen.Id(ln)).Id("is" + t.Name).Params().Block()
		} else {
			w.f.Func().Params(jen.Op("*").Id(v.Type.Name)).Id("is" + t.Name).Params().Block()
		}
	}
	w.f.Line()
	// MarshalJSON
	var check jen.Code = jen.Null()
	if !w.hub {
		check = jen.If(jen.Id("u").Dot("missing").Op("!=").Lit("")).Block(
			jen.Return(jen.Nil(), jen.Qual("fmt", "Errorf").Call(jen.Lit(fmt.Sprintf("%s.%s: %%s has no %s form", WirePkg(w.rev), t.Name, w.rev)), jen.Id("u").Dot("missing"))),
		)
	}
	pkgName := "mcp"
	if !w.hub {
		pkgName = WirePkg(w.rev)
	}
	w.f.Comment("MarshalJSON writes the variant held in Value.")
	w.f.Func().Params(jen.Id("u").Id(t.Name)).Id("MarshalJSON").Params().Params(jen.Index().Byte(), jen.Error()).Block(
		check,
		jen.If(jen.Id("u").Dot("Value").Op("==").Nil()).Block(
			jen.Return(jen.Nil(), jen.Qual("errors", "New").Call(jen.Lit(pkgName+"."+t.Name+": no variant set"))),
		),
		jen.Return(jen.Qual(jsonPath, "Marshal").Call(jen.Id("u").Dot("Value"))),
	)
	w.f.Line()
	// MarshalJSONTo: the same through mcpjson.Marshal, the variant written
	// into the caller's encoder instead of returned and scanned again.
	var checkTo jen.Code = jen.Null()
	if !w.hub {
		checkTo = jen.If(jen.Id("u").Dot("missing").Op("!=").Lit("")).Block(
			jen.Return(jen.Qual("fmt", "Errorf").Call(jen.Lit(fmt.Sprintf("%s.%s: %%s has no %s form", WirePkg(w.rev), t.Name, w.rev)), jen.Id("u").Dot("missing"))),
		)
	}
	w.f.Comment("MarshalJSONTo writes the variant held in Value into enc (mcpjson.Marshal).")
	w.f.Func().Params(jen.Id("u").Id(t.Name)).Id("MarshalJSONTo").Params(jen.Id("enc").Op("*").Qual(decodePath, "Encoder")).Error().Block(
		checkTo,
		jen.If(jen.Id("u").Dot("Value").Op("==").Nil()).Block(
			jen.Return(jen.Qual("errors", "New").Call(jen.Lit(pkgName+"."+t.Name+": no variant set"))),
		),
		jen.Return(jen.Qual(decodePath, "MarshalEncode").Call(jen.Id("enc"), jen.Id("u").Dot("Value"))),
	)
	w.f.Line()
	w.unmarshal(t, iface, pkgName)
}

func (w *typeWriter) unmarshal(t *model.Type, iface, pkgName string) {
	var body []jen.Code
	var objs []*model.Variant
	for _, v := range t.Variants {
		if v.Type.Kind == model.Array {
			ln := listName(v.Type)
			body = append(body, jen.If(jen.Id("startsArray").Call(jen.Id("b"))).Block(
				jen.Var().Id("l").Id(ln),
				jen.If(jen.Err().Op(":=").Qual(decodePath, "Unmarshal").Call(jen.Id("b"), jen.Op("&").Id("l")), jen.Err().Op("!=").Nil()).Block(
					jen.Return(jen.Qual("fmt", "Errorf").Call(jen.Lit(pkgName+"."+t.Name+": %w"), jen.Err())),
				),
				jen.Id("u").Dot("Value").Op("=").Id("l"),
				jen.Return(jen.Nil()),
			))
			continue
		}
		objs = append(objs, v)
	}
	body = append(body, jen.Var().Id("v").Id(iface))
	switch {
	case len(objs) == 1:
		body = append(body, jen.Id("v").Op("=").New(jen.Id(objs[0].Type.Name)))
	case t.Disc != "":
		var cases []jen.Code
		var def jen.Code = jen.Return(jen.Qual("fmt", "Errorf").Call(jen.Lit(fmt.Sprintf("%s.%s: no %q member", pkgName, t.Name, t.Disc))))
		for _, v := range objs {
			if v.Default {
				def = jen.Id("v").Op("=").New(jen.Id(v.Type.Name))
			}
			cases = append(cases, jen.Case(jen.Op("*").Id("probe").Dot("Disc").Op("==").Lit(v.Tag)).Block(jen.Id("v").Op("=").New(jen.Id(v.Type.Name))))
		}
		cases = append([]jen.Code{jen.Case(jen.Id("probe").Dot("Disc").Op("==").Nil()).Block(def)}, cases...)
		cases = append(cases, jen.Default().Block(jen.Return(jen.Qual("fmt", "Errorf").Call(jen.Lit(fmt.Sprintf("%s.%s: unknown %s %%q", pkgName, t.Name, t.Disc)), jen.Op("*").Id("probe").Dot("Disc")))))
		body = append(body,
			jen.Var().Id("probe").Struct(jen.Id("Disc").Op("*").String().Tag(map[string]string{"json": t.Disc})),
			jen.If(jen.Err().Op(":=").Qual(decodePath, "Unmarshal").Call(jen.Id("b"), jen.Op("&").Id("probe")), jen.Err().Op("!=").Nil()).Block(
				jen.Return(jen.Qual("fmt", "Errorf").Call(jen.Lit(pkgName+"."+t.Name+": %w"), jen.Err())),
			),
			jen.Switch().Block(cases...),
		)
	default:
		var probe, cases []jen.Code
		for i, v := range objs {
			id := fmt.Sprintf("K%d", i)
			probe = append(probe, jen.Id(id).Qual(jsonPath, "RawMessage").Tag(map[string]string{"json": v.Tag}))
			cases = append(cases, jen.Case(jen.Id("probe").Dot(id).Op("!=").Nil()).Block(jen.Id("v").Op("=").New(jen.Id(v.Type.Name))))
		}
		cases = append(cases, jen.Default().Block(jen.Return(jen.Qual("fmt", "Errorf").Call(jen.Lit(fmt.Sprintf("%s.%s: matches no variant", pkgName, t.Name))))))
		body = append(body,
			jen.Var().Id("probe").Struct(probe...),
			jen.If(jen.Err().Op(":=").Qual(decodePath, "Unmarshal").Call(jen.Id("b"), jen.Op("&").Id("probe")), jen.Err().Op("!=").Nil()).Block(
				jen.Return(jen.Qual("fmt", "Errorf").Call(jen.Lit(pkgName+"."+t.Name+": %w"), jen.Err())),
			),
			jen.Switch().Block(cases...),
		)
	}
	body = append(body,
		jen.If(jen.Err().Op(":=").Qual(decodePath, "Unmarshal").Call(jen.Id("b"), jen.Id("v")), jen.Err().Op("!=").Nil()).Block(
			jen.Return(jen.Qual("fmt", "Errorf").Call(jen.Lit(pkgName+"."+t.Name+": %w"), jen.Err())),
		),
		jen.Id("u").Dot("Value").Op("=").Id("v"),
		jen.Return(jen.Nil()),
	)
	w.f.Comment("UnmarshalJSON decodes whichever variant b holds.")
	w.f.Func().Params(jen.Id("u").Op("*").Id(t.Name)).Id("UnmarshalJSON").Params(jen.Id("b").Index().Byte()).Error().Block(body...)
	w.f.Line()
	w.unmarshalFrom(t, iface, pkgName, objs)
}

// unmarshalFrom writes UnmarshalJSONFrom, the one-pass decoding of an
// object variant (mcpjson.Unmarshal and UnmarshalShared call it before
// UnmarshalJSON): when the variant is certain from a look at the unread
// input (the only object variant; the discriminator, spelled plainly, of
// one of the variants), it is decoded by the caller's own decoder,
// instead of the value being read, probed and decoded again. Anything
// else (an array, no or an unknown discriminator, an escape in a name)
// returns errors.ErrUnsupported, which makes the decoder call
// UnmarshalJSON: the same value and the same errors as before.
func (w *typeWriter) unmarshalFrom(t *model.Type, iface, pkgName string, objs []*model.Variant) {
	unsupported := jen.Return(jen.Qual("errors", "ErrUnsupported"))
	var body []jen.Code
	switch {
	case len(objs) == 1:
		body = append(body,
			jen.If(jen.Id("dec").Dot("PeekKind").Call().Op("!=").LitRune('{')).Block(unsupported),
			jen.Id("v").Op(":=").New(jen.Id(objs[0].Type.Name)),
		)
	case t.Disc != "":
		var cases []jen.Code
		for _, v := range objs {
			tag, err := json.Marshal(v.Tag)
			if err != nil {
				panic(err)
			}
			cases = append(cases, jen.Case(jen.Lit(string(tag))).Block(jen.Id("v").Op("=").New(jen.Id(v.Type.Name))))
		}
		cases = append(cases, jen.Default().Block(unsupported))
		body = append(body,
			jen.Var().Id("v").Id(iface),
			jen.List(jen.Id("disc"), jen.Id("ok")).Op(":=").Qual(decodePath, "PeekMember").Call(jen.Id("dec"), jen.Lit(t.Disc)),
			jen.If(jen.Op("!").Id("ok")).Block(unsupported),
			jen.Switch(jen.String().Parens(jen.Id("disc"))).Block(cases...),
		)
	default:
		return
	}
	// The decoder's error as it is: it names the member's place in the
	// whole value ("/content/0/text: expected a string"), and a syntax
	// error stays one.
	body = append(body,
		jen.If(jen.Err().Op(":=").Qual(decodePath, "UnmarshalDecode").Call(jen.Id("dec"), jen.Id("v")), jen.Err().Op("!=").Nil()).Block(
			jen.Return(jen.Err()),
		),
		jen.Id("u").Dot("Value").Op("=").Id("v"),
		jen.Return(jen.Nil()),
	)
	w.f.Comment("UnmarshalJSONFrom decodes the variant in the caller's pass when it is certain")
	w.f.Comment("before reading; otherwise errors.ErrUnsupported makes the decoder call UnmarshalJSON.")
	w.f.Func().Params(jen.Id("u").Op("*").Id(t.Name)).Id("UnmarshalJSONFrom").Params(jen.Id("dec").Op("*").Qual(decodePath, "Decoder")).Error().Block(body...)
	w.f.Line()
}
