package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"sort"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"golang.org/x/text/language"
	"golang.org/x/text/message"

	"github.com/mcpx-dev/mcpx/schemas"
)

const schemaURL = "https://github.com/mcpx-dev/mcpx/runtime/config/schema.json"

// compiled is the embedded schema, compiled once, and its raw form, where
// errorMessage members are looked up.
var compiled = sync.OnceValues(func() (*jsonschema.Schema, any) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(schemaJSON))
	if err != nil {
		panic(fmt.Errorf("%w: %v", errNoSchema, err))
	}
	c := schemas.NewCompiler()
	if err := c.AddResource(schemaURL, doc); err != nil {
		panic(fmt.Errorf("%w: %v", errNoSchema, err))
	}
	s, err := c.Compile(schemaURL)
	if err != nil {
		panic(fmt.Errorf("%w: %v", errNoSchema, err))
	}
	return s, doc
})

// validate checks doc against the schema and adds a problem per failure.
func (p *parser) validate(doc any) {
	s, _ := compiled()
	err := s.Validate(doc)
	if err == nil {
		return
	}
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		p.add("", "%v", err)
		return
	}
	p.explain(ve)
}

// explain turns a validation error tree into problems: wrappers are
// descended, the rest become one line each in mcpx's words.
func (p *parser) explain(e *jsonschema.ValidationError) {
	path := schemas.Pointer(e.InstanceLocation...)
	switch k := e.ErrorKind.(type) {
	case *kind.OneOf:
		key := "oneOf"
		if k.Subschemas != nil {
			key = "oneOf:many"
		}
		if msg := errorMessage(e.SchemaURL, key); msg != "" {
			p.add(path, "%s", msg)
			return
		}
	case *kind.Not:
		if msg := errorMessage(e.SchemaURL, "not"); msg != "" {
			p.add(path, "%s", msg)
			return
		}
	case *kind.PropertyNames:
		// The causes are about the name, at the object's location.
		msg := "invalid name"
		for c := e; c != nil; {
			if len(c.Causes) == 0 {
				msg = p.message(c)
				break
			}
			c = c.Causes[0]
		}
		p.add(path+"/"+escape(k.Property), "%s", msg)
		return
	case *kind.AdditionalProperties:
		known := knownProperties(e.SchemaURL)
		for _, prop := range k.Properties {
			if len(known) == 0 {
				p.add(path+"/"+escape(prop), "unknown key")
			} else {
				p.add(path+"/"+escape(prop), "unknown key; expected one of %s", quoteList(known))
			}
		}
		return
	}
	if len(e.Causes) > 0 {
		for _, c := range e.Causes {
			p.explain(c)
		}
		return
	}
	p.add(path, "%s", p.message(e))
}

// message words a leaf failure.
func (p *parser) message(e *jsonschema.ValidationError) string {
	if kw := e.ErrorKind.KeywordPath(); len(kw) > 0 {
		if msg := errorMessage(e.SchemaURL, kw[0]); msg != "" {
			return msg
		}
	}
	switch k := e.ErrorKind.(type) {
	case *kind.Type:
		want := make([]string, len(k.Want))
		for i, w := range k.Want {
			want[i] = article(w)
		}
		return "must be " + strings.Join(want, " or ") + ", not " + article(k.Got)
	case *kind.Enum:
		if len(k.Want) == 1 {
			return "must be " + jsonText(k.Want[0])
		}
		vals := make([]string, len(k.Want))
		for i, w := range k.Want {
			vals[i] = jsonText(w)
		}
		return "must be one of " + strings.Join(vals, ", ")
	case *kind.Required:
		return "missing " + quoteList(k.Missing)
	case *kind.MinLength:
		if k.Want == 1 {
			return "must not be empty"
		}
	case *kind.UniqueItems:
		return fmt.Sprintf("items %d and %d are the same", k.Duplicates[0], k.Duplicates[1])
	case *kind.Pattern:
		return fmt.Sprintf("must match %s", k.Want)
	case *kind.Minimum:
		return "must be at least " + k.Want.RatString()
	case *kind.Maximum:
		return "must be at most " + k.Want.RatString()
	}
	return e.ErrorKind.LocalizedString(english) // the library's own wording
}

// english words the failures message does not: LocalizedString needs a
// printer (nil crashes).
var english = message.NewPrinter(language.English)

func article(t string) string {
	switch t {
	case "object", "array", "integer":
		return "an " + t
	case "boolean":
		return "true or false"
	case "null":
		return "null"
	}
	return "a " + t
}

func jsonText(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

func quoteList(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = fmt.Sprintf("%q", n)
	}
	return strings.Join(q, ", ")
}

// schemaAt returns the raw schema object at an absolute schema location.
func schemaAt(loc string) map[string]any {
	_, doc := compiled()
	base, frag, _ := strings.Cut(loc, "#")
	if base != schemaURL {
		return nil
	}
	var cur any = doc
	if frag != "" {
		for _, tok := range strings.Split(strings.TrimPrefix(frag, "/"), "/") {
			if t, err := url.PathUnescape(tok); err == nil {
				tok = t
			}
			tok = strings.NewReplacer("~1", "/", "~0", "~").Replace(tok)
			m, ok := cur.(map[string]any)
			if !ok {
				return nil
			}
			cur = m[tok]
		}
	}
	m, _ := cur.(map[string]any)
	return m
}

// errorMessage returns the schema's errorMessage for keyword at loc, or "".
func errorMessage(loc, keyword string) string {
	msgs, _ := schemaAt(loc)["errorMessage"].(map[string]any)
	s, _ := msgs[keyword].(string)
	return s
}

// knownProperties lists the properties the schema at loc declares.
func knownProperties(loc string) []string {
	props, _ := schemaAt(loc)["properties"].(map[string]any)
	names := make([]string, 0, len(props))
	for n := range props {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}
