package convtest

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"

	"github.com/mcpx-dev/mcpx/generated/mcp"
	"github.com/mcpx-dev/mcpx/generated/revision"
	"github.com/mcpx-dev/mcpx/schemas"
)

// A filler builds fully populated hub values: every optional member set,
// enums from the revision tables, strings shaped by the formats the schemas
// assert (read from the schema files, so a member a new revision adds or
// respells gets a value of its format, whatever its name). Variant k picks the k-th variant of every single-valued union; a
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
	// formats maps "HubType.member" (the hub's spelling) to the format the
	// schemas give it; formatsErr says why they could not be read.
	formats, formatsErr = schemaFormats()
)

// member is what the filler knows of the value it fills: the member's
// name (the hub's spelling) and the format its schema asserts, if any.
type member struct{ name, format string }

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

func (f *filler) fill(v reflect.Value, m member) {
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
		v.Set(reflect.ValueOf(rawFor(m.name)))
		return
	}
	switch t.Kind() {
	case reflect.Pointer:
		if f.depth > 12 {
			return
		}
		p := reflect.New(t.Elem())
		f.fill(p.Elem(), m)
		v.Set(p)
	case reflect.String:
		if vals := enumValues[t.Name()]; t.Name() != "string" && len(vals) > 0 {
			v.SetString(vals[f.variant%len(vals)])
			return
		}
		v.SetString(stringFor(m))
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int64:
		v.SetInt(3)
	case reflect.Float64:
		v.SetFloat(floatFor(m.name))
	case reflect.Slice:
		if isUnion(t.Elem()) {
			impls := unionImpls[t.Elem()]
			s := reflect.MakeSlice(t, len(impls), len(impls))
			for i := range impls {
				g := &filler{variant: i, depth: f.depth}
				g.fillUnion(s.Index(i), m)
			}
			v.Set(s)
			return
		}
		s := reflect.MakeSlice(t, 1, 1)
		f.fill(s.Index(0), m)
		v.Set(s)
	case reflect.Map:
		mv := reflect.MakeMap(t)
		e := reflect.New(t.Elem()).Elem()
		f.fill(e, m)
		mv.SetMapIndex(reflect.ValueOf("k1"), e)
		v.Set(mv)
	case reflect.Struct:
		if isUnion(t) {
			f.fillUnion(v, m)
			return
		}
		for i := 0; i < t.NumField(); i++ {
			if !t.Field(i).IsExported() {
				continue
			}
			wire := strings.Split(t.Field(i).Tag.Get("json"), ",")[0]
			f.fill(v.Field(i), member{wire, formats[t.Name()+"."+wire]})
		}
	}
}

func (f *filler) fillUnion(v reflect.Value, m member) {
	impls := unionImpls[v.Type()]
	if len(impls) == 0 || f.depth > 12 {
		return
	}
	c := impls[f.variant%len(impls)]
	p := reflect.New(c.Elem())
	f.fill(p.Elem(), m)
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

// stringFor is a value of the member's format where its schema asserts
// one; otherwise, where nothing is asserted, a realistic value for the
// name, else one the name makes recognisable.
func stringFor(m member) string {
	switch m.format {
	case "uri":
		return "https://example.com/a"
	case "uri-template":
		return "https://example.com/{id}"
	case "byte":
		return "aGVsbG8="
	case "date-time":
		return "2026-01-01T00:00:00Z"
	case "":
	default:
		panic(fmt.Sprintf("convtest: the schemas give %s the format %q, which the filler does not know: add it to stringFor", m.name, m.format))
	}
	switch m.name {
	case "createdAt", "lastUpdatedAt":
		return "2026-01-01T00:00:00Z"
	case "mimeType":
		return "text/plain"
	case "protocolVersion":
		return "2025-06-18"
	}
	return "x-" + m.name
}

// schemaFormats reads every revision's and extension's schema file and
// returns the format of each member that has one, keyed "HubType.member"
// in the hub's spelling (a revision's own spelling is mapped through its
// table's renames). The newest revision's word wins.
func schemaFormats() (map[string]string, error) {
	man, err := schemas.Load()
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for _, s := range man.All() {
		b, err := schemas.Read(schemas.SourceDir(), s)
		if err != nil {
			return nil, err
		}
		var doc struct {
			Defs        map[string]json.RawMessage `json:"$defs"`
			Definitions map[string]json.RawMessage `json:"definitions"`
		}
		if err := json.Unmarshal(b, &doc); err != nil {
			return nil, fmt.Errorf("schema %s: %w", s.ID, err)
		}
		defs := doc.Defs
		if len(defs) == 0 {
			defs = doc.Definitions
		}
		tab := revision.Lookup(mcp.Revision(s.ID)) // nil for an extension
		for name, raw := range defs {
			type prop struct {
				Format string `json:"format"`
				Items  *prop  `json:"items"`
			}
			var d struct {
				Properties map[string]prop `json:"properties"`
			}
			if json.Unmarshal(raw, &d) != nil {
				continue // not an object schema
			}
			for wire, p := range d.Properties {
				f := p.Format
				if f == "" && p.Items != nil {
					f = p.Items.Format // a list of URIs is filled with one
				}
				if f == "" {
					continue
				}
				hub := wire
				if tab != nil {
					if ty, ok := tab.Type(name); ok {
						hub = ty.HubName(wire)
					}
				}
				if _, ok := out[name+"."+hub]; !ok {
					out[name+"."+hub] = f
				}
			}
		}
	}
	return out, nil
}

// filled returns the variants of a fully populated hub value of type name.
func filled(name string) []any {
	n := 1
	for _, impls := range unionImpls {
		if len(impls) > n {
			n = len(impls)
		}
	}
	if formatsErr != nil {
		panic(fmt.Sprintf("convtest: the filler reads the schemas' formats: %v", formatsErr))
	}
	var out []any
	for k := 0; k < n; k++ {
		p := mcp.New(name)
		(&filler{variant: k}).fill(reflect.ValueOf(p).Elem(), member{})
		out = append(out, p)
	}
	return out
}
