package convtest

import (
	"encoding/json"
	"reflect"
	"strings"

	"github.com/mcpx-dev/mcpx/generated/mcp"
	"github.com/mcpx-dev/mcpx/generated/revision"
)

// A filler builds fully populated hub values: every optional member set,
// enums from the revision tables, strings shaped by the formats the schemas
// assert. Variant k picks the k-th variant of every single-valued union; a
// list of unions gets one element per variant.
type filler struct {
	variant int
	depth   int
}

var (
	metaType    = reflect.TypeOf(mcp.Meta{})
	rawType     = reflect.TypeOf(json.RawMessage{})
	enumValues  = map[string][]string{} // hub enum name -> values, from every table
	unionImpls  = map[reflect.Type][]reflect.Type{}
	allHubTypes []reflect.Type
)

func init() {
	for _, t := range revision.Tables {
		for _, ty := range t.Types {
			for _, v := range ty.Values {
				if !contains(enumValues[ty.Name], v) {
					enumValues[ty.Name] = append(enumValues[ty.Name], v)
				}
			}
		}
	}
	for _, n := range mcp.TypeNames {
		allHubTypes = append(allHubTypes, reflect.TypeOf(mcp.New(n)))
	}
	// Union variants: the hub types whose pointer implements the union's
	// interface. (List variants such as SamplingMessageContentBlockList are
	// not in TypeNames, so fills never pick them.)
	for _, pt := range allHubTypes {
		st := pt.Elem()
		if st.NumField() != 1 || st.Field(0).Name != "Value" {
			continue
		}
		iface := st.Field(0).Type
		for _, c := range allHubTypes {
			if c.Implements(iface) {
				unionImpls[st] = append(unionImpls[st], c)
			}
		}
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

// isUnion reports whether st is a generated union wrapper.
func isUnion(st reflect.Type) bool {
	return st.Kind() == reflect.Struct && st.NumField() == 1 && st.Field(0).Name == "Value" && st.Field(0).Type.Kind() == reflect.Interface
}

func (f *filler) fill(v reflect.Value, member string) {
	f.depth++
	defer func() { f.depth-- }()
	t := v.Type()
	switch {
	case t == metaType:
		v.Set(reflect.ValueOf(mcp.Meta{
			"com.example/trace":               json.RawMessage(`"abc"`),
			mcp.MetaKeyServerInfo:             json.RawMessage(`{"name":"mcpx","version":"1.0.0"}`),
			mcp.MetaKeyRelatedTask:            json.RawMessage(`{"taskId":"t1"}`),
			mcp.MetaKeyModelImmediateResponse: json.RawMessage(`"working on it"`),
			mcp.MetaKeySubscriptionID:         json.RawMessage(`7`),
		}))
		return
	case t == rawType:
		v.Set(reflect.ValueOf(rawFor(member)))
		return
	}
	switch t.Kind() {
	case reflect.Pointer:
		if f.depth > 12 {
			return
		}
		p := reflect.New(t.Elem())
		f.fill(p.Elem(), member)
		v.Set(p)
	case reflect.String:
		if vals := enumValues[t.Name()]; t.Name() != "string" && len(vals) > 0 {
			v.SetString(vals[f.variant%len(vals)])
			return
		}
		v.SetString(stringFor(member))
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int64:
		v.SetInt(3)
	case reflect.Float64:
		v.SetFloat(floatFor(member))
	case reflect.Slice:
		if isUnion(t.Elem()) {
			impls := unionImpls[t.Elem()]
			s := reflect.MakeSlice(t, len(impls), len(impls))
			for i := range impls {
				g := &filler{variant: i, depth: f.depth}
				g.fillUnion(s.Index(i), member)
			}
			v.Set(s)
			return
		}
		s := reflect.MakeSlice(t, 1, 1)
		f.fill(s.Index(0), member)
		v.Set(s)
	case reflect.Map:
		m := reflect.MakeMap(t)
		e := reflect.New(t.Elem()).Elem()
		f.fill(e, member)
		m.SetMapIndex(reflect.ValueOf("k1"), e)
		v.Set(m)
	case reflect.Struct:
		if isUnion(t) {
			f.fillUnion(v, member)
			return
		}
		for i := 0; i < t.NumField(); i++ {
			if !t.Field(i).IsExported() {
				continue
			}
			wire := strings.Split(t.Field(i).Tag.Get("json"), ",")[0]
			f.fill(v.Field(i), wire)
		}
	}
}

func (f *filler) fillUnion(v reflect.Value, member string) {
	impls := unionImpls[v.Type()]
	if len(impls) == 0 || f.depth > 12 {
		return
	}
	c := impls[f.variant%len(impls)]
	p := reflect.New(c.Elem())
	f.fill(p.Elem(), member)
	v.Field(0).Set(p)
}

func rawFor(member string) json.RawMessage {
	switch member {
	case "inputSchema", "outputSchema", "requestedSchema":
		return json.RawMessage(`{"type":"object","properties":{"q":{"type":"string"}},"required":["q"]}`)
	case "requestId", "progressToken":
		return json.RawMessage(`42`)
	case "content":
		return json.RawMessage(`{"answer":"yes"}`)
	}
	return json.RawMessage(`{}`)
}

// floatFor is 0.5 for a priority (the schemas bound those to 0..1) and a
// whole number otherwise, so that a member an older revision types as an
// integer (a task's ttl and pollInterval up to 2025-11-25) keeps its value.
func floatFor(member string) float64 {
	if strings.HasSuffix(strings.ToLower(member), "priority") {
		return 0.5
	}
	return 3
}

func stringFor(member string) string {
	switch member {
	case "uri", "url", "src", "websiteUrl":
		return "https://example.com/a"
	case "uriTemplate":
		return "https://example.com/{id}"
	case "blob", "data":
		return "aGVsbG8="
	case "createdAt", "lastUpdatedAt":
		return "2026-01-01T00:00:00Z"
	case "mimeType":
		return "text/plain"
	case "protocolVersion":
		return "2025-06-18"
	}
	return "x-" + member
}

// filled returns the variants of a fully populated hub value of type name.
func filled(name string) []any {
	n := 1
	for _, impls := range unionImpls {
		if len(impls) > n {
			n = len(impls)
		}
	}
	var out []any
	for k := 0; k < n; k++ {
		p := mcp.New(name)
		(&filler{variant: k}).fill(reflect.ValueOf(p).Elem(), "")
		out = append(out, p)
	}
	return out
}
