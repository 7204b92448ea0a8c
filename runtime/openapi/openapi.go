// Package openapi turns the operations of an OpenAPI 3.0, 3.1 or 3.2
// document into MCP tools: each operation a tool whose arguments are its
// path, query and header parameters and its JSON request body, whose call
// is the HTTP request, and whose result is the response. The document is
// read with github.com/getkin/kin-openapi (openapi3), which resolves
// $refs, reads JSON and YAML, and knows all three versions.
//
// What becomes of an operation:
//
//   - name: its operationId, else "<method>_<path>", made to match
//     ^[a-zA-Z0-9_-]{1,64}$ and unique in the document (a suffix _2, _3);
//   - description: its summary and description;
//   - inputSchema: an object with one property per parameter (path ones
//     required, others as the document says; a name used by two
//     parameters is prefixed with where it goes, "query_id") and "body"
//     for a JSON request body, every $ref inlined;
//   - outputSchema: the JSON schema of its success response, when there is
//     one (a response that is not an object is given as {"result": ...});
//   - annotations: GET and HEAD read-only and idempotent, PUT idempotent,
//     DELETE destructive and idempotent; every one open-world.
//
// An operation that cannot be a tool (a body that is not JSON, a cookie
// parameter, a schema that is not valid) is skipped, and the reason
// logged; the others are served.
package openapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/mcpx-dev/mcpx/generated/mcp"
	"github.com/mcpx-dev/mcpx/runtime/catalog"
)

// Source is one document and how to call its API.
type Source struct {
	// Document is a file path or an http(s) URL; with Data, only its name
	// in messages.
	Document string
	// Data, when set, is the document itself (mcpx's own /v1 API).
	Data []byte
	// BaseURL is where the operations' paths are appended; "" means the
	// document's first server (relative to the document's URL, its
	// variables at their defaults).
	BaseURL string
	// Headers are sent with every call (an API key).
	Headers map[string]string
	// Timeout bounds one call; 0 means 30 s.
	Timeout time.Duration
	// MaxResponse bounds a response body in bytes; 0 means 1 MiB.
	MaxResponse int64
	// Transport carries the calls; nil is http.DefaultTransport.
	Transport http.RoundTripper
}

// Defaults of Source.
const (
	DefaultTimeout     = 30 * time.Second
	DefaultMaxResponse = 1 << 20
)

// Load reads the document and returns its tools. A document that cannot
// be read or parsed is an error naming it and the problem.
func Load(ctx context.Context, src Source, log *slog.Logger) (*catalog.Catalog, error) {
	if log == nil {
		log = slog.Default()
	}
	doc, docURL, err := read(ctx, src.Document, src.Data)
	if err != nil {
		return nil, err
	}
	if err := doc.Validate(ctx, openapi3.DisableExamplesValidation()); err != nil {
		// Documents in use often break a rule or two; what cannot be a
		// tool is skipped below, operation by operation.
		log.Warn("the OpenAPI document does not validate; serving what can be served", "document", src.Document, "problem", err)
	}
	base, err := baseURL(src, doc, docURL)
	if err != nil {
		return nil, err
	}
	c := catalog.New()
	api := &api{base: base, src: src, client: newClient(src)}
	names := map[string]bool{}
	for _, op := range operations(doc) {
		t, call, err := api.tool(op, names)
		if err == nil {
			err = c.TryAddTool(t, call)
		}
		if err != nil {
			log.Warn("an OpenAPI operation is not served as a tool", "document", src.Document, "operation", op.method+" "+op.path, "reason", err)
			continue
		}
		names[t.Name] = true
	}
	return c, nil
}

// read loads the document from a file or a URL.
func read(ctx context.Context, where string, data []byte) (*openapi3.T, *url.URL, error) {
	l := openapi3.NewLoader()
	l.Context = ctx
	// References to other files of the document are followed: the
	// document is the config's, as trusted as the config itself.
	l.IsExternalRefsAllowed = true
	var doc *openapi3.T
	var u *url.URL
	var err error
	if data != nil {
		doc, err = l.LoadFromData(data)
	} else if strings.HasPrefix(where, "http://") || strings.HasPrefix(where, "https://") {
		if u, err = url.Parse(where); err == nil {
			doc, err = l.LoadFromURI(u)
		}
	} else {
		doc, err = l.LoadFromFile(where)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("openapi: %s: %v", where, err)
	}
	if !strings.HasPrefix(doc.OpenAPI, "3.") {
		return nil, nil, fmt.Errorf("openapi: %s: \"openapi\" is %q; mcpx reads OpenAPI 3.0, 3.1 and 3.2 documents", where, doc.OpenAPI)
	}
	return doc, u, nil
}

func baseURL(src Source, doc *openapi3.T, docURL *url.URL) (*url.URL, error) {
	raw := src.BaseURL
	if raw == "" {
		if len(doc.Servers) == 0 || doc.Servers[0] == nil {
			return nil, fmt.Errorf("openapi: %s names no server; set baseUrl", src.Document)
		}
		s := doc.Servers[0]
		raw = s.URL
		for name, v := range s.Variables {
			raw = strings.ReplaceAll(raw, "{"+name+"}", v.Default)
		}
	}
	u, err := url.Parse(raw)
	if err == nil && !u.IsAbs() && docURL != nil {
		u = docURL.ResolveReference(u)
	}
	if err != nil || !u.IsAbs() || (u.Scheme != "http" && u.Scheme != "https") {
		return nil, fmt.Errorf("openapi: %s: the base URL %q is not an absolute http(s) URL; set baseUrl", src.Document, raw)
	}
	u.Path = strings.TrimSuffix(u.Path, "/")
	return u, nil
}

type operation struct {
	path, method string
	item         *openapi3.PathItem
	op           *openapi3.Operation
}

// methodOrder is the order of an operation's methods within a path.
var methodOrder = []string{"GET", "PUT", "POST", "DELETE", "OPTIONS", "HEAD", "PATCH", "TRACE", "QUERY"}

// operations lists the document's operations in a stable order: paths
// sorted, then methods in methodOrder.
func operations(doc *openapi3.T) []operation {
	var out []operation
	if doc.Paths == nil {
		return nil
	}
	paths := doc.Paths.InMatchingOrder()
	slices.Sort(paths)
	for _, p := range paths {
		item := doc.Paths.Value(p)
		if item == nil {
			continue
		}
		ops := item.Operations()
		for _, m := range methodOrder {
			if op := ops[m]; op != nil {
				out = append(out, operation{path: p, method: m, item: item, op: op})
			}
		}
	}
	return out
}

var invalidName = regexp.MustCompile(`[^a-zA-Z0-9_-]+`)

// toolName is the operation's tool name, unique among taken.
func toolName(op operation, taken map[string]bool) string {
	base := op.op.OperationID
	if base == "" {
		// get_pets_petId for GET /pets/{petId}
		path := strings.NewReplacer("/", "_", "{", "", "}", "").Replace(strings.Trim(op.path, "/"))
		base = strings.ToLower(op.method) + "_" + path
	}
	base = strings.Trim(invalidName.ReplaceAllString(base, "_"), "_")
	if base == "" {
		base = strings.ToLower(op.method)
	}
	if len(base) > 60 {
		base = base[:60]
	}
	name := base
	for n := 2; taken[name]; n++ {
		name = fmt.Sprintf("%s_%d", base, n)
	}
	return name
}

// param is where one input property goes in the request.
type param struct {
	in, name string // "path", "query", "header"; the parameter's name
	explode  bool   // an array query parameter repeats its name
}

// api is what every call of a document shares.
type api struct {
	base   *url.URL
	src    Source
	client *http.Client
}

func (a *api) tool(op operation, taken map[string]bool) (mcp.Tool, catalog.ToolHandler, error) {
	var t mcp.Tool
	t.Name = toolName(op, taken)
	t.Title = op.op.Summary
	t.Description = strings.TrimSpace(strings.Join(nonEmpty(op.op.Summary, op.op.Description), "\n\n"))
	if t.Description == "" {
		t.Description = op.method + " " + op.path
	}

	// Parameters: the path item's, overridden by the operation's.
	var params openapi3.Parameters
	params = append(params, op.item.Parameters...)
	for _, p := range op.op.Parameters {
		if p.Value != nil {
			params = slices.DeleteFunc(params, func(q *openapi3.ParameterRef) bool {
				return q.Value != nil && q.Value.Name == p.Value.Name && q.Value.In == p.Value.In
			})
		}
		params = append(params, p)
	}
	count := map[string]int{}
	for _, p := range params {
		if p.Value != nil {
			count[p.Value.Name]++
		}
	}
	props := map[string]any{}
	var required []string
	where := map[string]param{}
	for _, p := range params {
		v := p.Value
		if v == nil {
			continue
		}
		switch v.In {
		case "path", "query", "header":
		default:
			return t, nil, fmt.Errorf("parameter %q is in %s, which mcpx does not send", v.Name, v.In)
		}
		key := v.Name
		if count[key] > 1 {
			key = v.In + "_" + v.Name
		}
		s := map[string]any{"type": "string"}
		if v.Schema != nil {
			s = inline(v.Schema)
		} else if len(v.Content) > 0 {
			return t, nil, fmt.Errorf("parameter %q is described by content, not a schema", v.Name)
		}
		if v.Description != "" {
			if _, ok := s["description"]; !ok {
				s["description"] = v.Description
			}
		}
		props[key] = s
		if v.Required || v.In == "path" {
			required = append(required, key)
		}
		explode := v.Explode == nil || *v.Explode
		where[key] = param{in: v.In, name: v.Name, explode: explode}
	}
	if rb := op.op.RequestBody; rb != nil && rb.Value != nil {
		mt := jsonMedia(rb.Value.Content)
		if mt == nil {
			return t, nil, fmt.Errorf("the request body is %s, not JSON", strings.Join(mediaTypes(rb.Value.Content), ", "))
		}
		if _, taken := props["body"]; taken {
			return t, nil, errors.New(`a parameter is named "body", as the request body's property would be`)
		}
		s := map[string]any{}
		if mt.Schema != nil {
			s = inline(mt.Schema)
		}
		if rb.Value.Description != "" {
			s["description"] = rb.Value.Description
		}
		props["body"] = s
		if rb.Value.Required {
			required = append(required, "body")
		}
	}
	in := map[string]any{"type": "object", "properties": props, "additionalProperties": false}
	if len(required) > 0 {
		slices.Sort(required)
		in["required"] = required
	}
	var err error
	if t.InputSchema, err = json.Marshal(in); err != nil {
		return t, nil, err
	}

	out, wrap := outputSchema(op.op)
	if out != nil {
		if t.OutputSchema, err = json.Marshal(out); err != nil {
			return t, nil, err
		}
	}
	t.Annotations = annotations(op.method)
	c := &call{api: a, method: op.method, path: op.path, where: where, wrap: wrap, typed: out != nil}
	return t, c.run, nil
}

func nonEmpty(s ...string) []string {
	return slices.DeleteFunc(s, func(x string) bool { return strings.TrimSpace(x) == "" })
}

// isJSON reports whether a media type is JSON (application/json,
// application/problem+json, ...).
func isJSON(mt string) bool {
	mt, _, _ = strings.Cut(mt, ";")
	mt = strings.TrimSpace(strings.ToLower(mt))
	return mt == "application/json" || strings.HasSuffix(mt, "+json")
}

func jsonMedia(c openapi3.Content) *openapi3.MediaType {
	for _, k := range mediaTypes(c) {
		if isJSON(k) {
			return c[k]
		}
	}
	return nil
}

func mediaTypes(c openapi3.Content) []string {
	keys := make([]string, 0, len(c))
	for k := range c {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// outputSchema is the schema of the operation's JSON success response as
// an object schema; wrap says the response goes under "result".
func outputSchema(op *openapi3.Operation) (schema map[string]any, wrap bool) {
	if op.Responses == nil {
		return nil, false
	}
	for _, code := range []string{"200", "201", "202", "203", "2XX"} {
		r := op.Responses.Value(code)
		if r == nil || r.Value == nil {
			continue
		}
		mt := jsonMedia(r.Value.Content)
		if mt == nil || mt.Schema == nil {
			return nil, false
		}
		s := inline(mt.Schema)
		if t, _ := s["type"].(string); t == "object" {
			return s, false
		}
		return map[string]any{"type": "object", "properties": map[string]any{"result": s}, "required": []string{"result"}}, true
	}
	return nil, false
}

func annotations(method string) *mcp.ToolAnnotations {
	a := &mcp.ToolAnnotations{OpenWorldHint: mcp.Ptr(true)}
	switch method {
	case "GET", "HEAD", "OPTIONS", "QUERY":
		a.ReadOnlyHint, a.IdempotentHint = mcp.Ptr(true), mcp.Ptr(true)
	case "PUT":
		a.ReadOnlyHint, a.IdempotentHint = mcp.Ptr(false), mcp.Ptr(true)
	case "DELETE":
		a.ReadOnlyHint, a.DestructiveHint, a.IdempotentHint = mcp.Ptr(false), mcp.Ptr(true), mcp.Ptr(true)
	default:
		a.ReadOnlyHint = mcp.Ptr(false)
	}
	return a
}

// maxDepth bounds how deep a schema is inlined: a recursive schema (a tree
// of nodes) is cut there, its rest accepting anything.
const maxDepth = 16

// inline returns the JSON Schema of r with every $ref replaced by what it
// names, so the tool's schema stands alone; a schema met again inside
// itself becomes {} (anything), and 3.0's nullable becomes a "null" type.
func inline(r *openapi3.SchemaRef) map[string]any {
	return inlineAt(r, nil)
}

func inlineAt(r *openapi3.SchemaRef, stack []*openapi3.Schema) map[string]any {
	if r == nil || r.Value == nil || slices.Contains(stack, r.Value) || len(stack) >= maxDepth {
		return map[string]any{}
	}
	s := r.Value
	raw, err := json.Marshal(s)
	m := map[string]any{}
	if err != nil || json.Unmarshal(raw, &m) != nil {
		return map[string]any{}
	}
	stack = append(stack, s)
	if len(s.Properties) > 0 {
		props := map[string]any{}
		for k, c := range s.Properties {
			props[k] = inlineAt(c, stack)
		}
		m["properties"] = props
	}
	if s.Items != nil {
		m["items"] = inlineAt(s.Items, stack)
	}
	for key, list := range map[string]openapi3.SchemaRefs{"allOf": s.AllOf, "anyOf": s.AnyOf, "oneOf": s.OneOf} {
		if len(list) > 0 {
			out := make([]any, len(list))
			for i, c := range list {
				out[i] = inlineAt(c, stack)
			}
			m[key] = out
		}
	}
	if s.Not != nil {
		m["not"] = inlineAt(s.Not, stack)
	}
	if ap := s.AdditionalProperties.Schema; ap != nil {
		m["additionalProperties"] = inlineAt(ap, stack)
	}
	if s.Nullable {
		if t, ok := m["type"].(string); ok {
			m["type"] = []any{t, "null"}
		}
		delete(m, "nullable")
	}
	// OpenAPI-only keywords a JSON Schema validator would not know.
	for _, k := range []string{"discriminator", "xml", "externalDocs", "example"} {
		delete(m, k)
	}
	for k := range m {
		if strings.HasPrefix(k, "x-") {
			delete(m, k)
		}
	}
	return m
}
