package catalog

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/mcpx-dev/mcpx/schemas"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

// compileObjectSchema compiles a tool's input or output schema. Both must
// describe objects ("type": "object"), which every revision requires. A
// schema without "$schema" is read as JSON Schema 2020-12, the dialect MCP
// defaults to from 2025-11-25. Schemas must be self-contained: the compiler
// loads nothing from the network.
func compileObjectSchema(which, tool string, raw json.RawMessage) (*jsonschema.Schema, error) {
	var top struct {
		Type any `json:"type"`
	}
	if err := json.Unmarshal(raw, &top); err != nil {
		return nil, fmt.Errorf("%s schema: not a JSON object: %v", which, err)
	}
	if top.Type != "object" {
		return nil, fmt.Errorf(`%s schema: want "type": "object", got %v`, which, top.Type)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return nil, fmt.Errorf("%s schema: %v", which, err)
	}
	loc := "urn:mcpx:catalog:" + which + ":" + url.PathEscape(tool)
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	if err := c.AddResource(loc, doc); err != nil {
		return nil, fmt.Errorf("%s schema: %v", which, err)
	}
	s, err := c.Compile(loc)
	if err != nil {
		return nil, fmt.Errorf("%s schema: %v", which, err)
	}
	return s, nil
}

// checkArguments returns a tool call's arguments as a JSON object, "{}"
// when absent, after validating them against schema. Its errors are meant
// for the model: short, one line, with the JSON pointer of each problem.
func checkArguments(schema *jsonschema.Schema, raw json.RawMessage) (json.RawMessage, error) {
	trimmed := bytes.TrimSpace(raw)
	if len(trimmed) == 0 || bytes.Equal(trimmed, []byte("null")) {
		trimmed = []byte("{}")
	}
	if trimmed[0] != '{' {
		return nil, fmt.Errorf("arguments must be a JSON object, got %s", jsonKind(trimmed))
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(trimmed))
	if err != nil {
		return nil, fmt.Errorf("arguments are not valid JSON: %v", err)
	}
	if err := schema.Validate(inst); err != nil {
		return nil, errors.New(describe(err))
	}
	return json.RawMessage(trimmed), nil
}

// jsonKind names the kind of JSON value b starts with.
func jsonKind(b []byte) string {
	switch b[0] {
	case '[':
		return "an array"
	case '"':
		return "a string"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	default:
		return "a number"
	}
}

// describe flattens a validation error to its leaves, "pointer: problem"
// (just the problem at the top level), joined by "; ", at most five of them.
func describe(err error) string {
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return err.Error()
	}
	var leaves []string
	for _, f := range schemas.Failures(ve) {
		if f.Pointer == "" {
			leaves = append(leaves, f.Problem)
		} else {
			leaves = append(leaves, f.Pointer+": "+f.Problem)
		}
	}
	const most = 5
	if len(leaves) > most {
		leaves = append(leaves[:most], fmt.Sprintf("and %d more", len(leaves)-most))
	}
	return strings.Join(leaves, "; ")
}
