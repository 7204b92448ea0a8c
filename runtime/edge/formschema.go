package edge

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"

	"github.com/mcpx-dev/mcpx/generated/revision"
	"github.com/mcpx-dev/mcpx/runtime/jsonrpc"
)

// A form-mode elicitation's requestedSchema is raw JSON (an overlay "open"
// place), so the generated converters never fit it to the client's
// revision. fitForm does, from the revision's tables: each property is
// classified as the PrimitiveSchemaDefinition variant it is, and a
// variant the revision lacks is said the older way where that keeps its
// meaning, or refused.

// formField is a requestedSchema property: its members, raw.
type formField map[string]json.RawMessage

// variant is the PrimitiveSchemaDefinition variant (hub type name) f is,
// "" for one mcpx does not recognise (left as the upstream wrote it).
func (f formField) variant() string {
	var typ string
	_ = json.Unmarshal(f["type"], &typ)
	switch typ {
	case "string":
		switch {
		case f["oneOf"] != nil:
			return "TitledSingleSelectEnumSchema"
		case f["enum"] != nil && f["enumNames"] != nil:
			return "LegacyTitledEnumSchema"
		case f["enum"] != nil:
			return "UntitledSingleSelectEnumSchema"
		}
		return "StringSchema"
	case "number", "integer":
		return "NumberSchema"
	case "boolean":
		return "BooleanSchema"
	case "array":
		var items map[string]json.RawMessage
		_ = json.Unmarshal(f["items"], &items)
		if items["anyOf"] != nil {
			return "TitledMultiSelectEnumSchema"
		}
		return "UntitledMultiSelectEnumSchema"
	}
	return ""
}

// olderForm is, for a single-select variant a revision may lack, the
// revision's own enum type that says the same (before 2025-11-25 one
// EnumSchema, enum with optional enumNames, stood for all of them).
var olderForm = map[string][]string{
	"UntitledSingleSelectEnumSchema": {"EnumSchema"},
	"LegacyTitledEnumSchema":         {"EnumSchema"},
	"TitledSingleSelectEnumSchema":   {"LegacyTitledEnumSchema", "EnumSchema"},
}

// fitForm returns requestedSchema as tab's revision can carry it, the
// same bytes when nothing needed changing, or -32602 naming the field and
// what the revision lacks. who names the client for the message.
func fitForm(tab *revision.Table, schema json.RawMessage, who string) (json.RawMessage, error) {
	var doc map[string]json.RawMessage
	if json.Unmarshal(schema, &doc) != nil {
		return schema, nil // not an object: not ours to judge here
	}
	var props map[string]formField
	if json.Unmarshal(doc["properties"], &props) != nil || len(props) == 0 {
		return schema, nil
	}
	names := make([]string, 0, len(props))
	for n := range props {
		names = append(names, n)
	}
	sort.Strings(names) // the same field named first every time
	changed := false
	for _, name := range names {
		f := props[name]
		v := f.variant()
		if v == "" {
			continue
		}
		refuse := func(format string, args ...any) error {
			return jsonrpc.Errorf(jsonrpc.InvalidParams, nil, "the elicitation form cannot be sent to the client (%s): requestedSchema field %s %s", who, jsonrpc.Quote(name), fmt.Sprintf(format, args...))
		}
		t, ok := tab.Type(v)
		if !ok {
			for _, older := range olderForm[v] {
				if t, ok = tab.Type(older); ok && (v == "UntitledSingleSelectEnumSchema" || slices.Contains(t.Fields, "enumNames")) {
					break
				}
				ok = false
			}
			if !ok {
				if v == "TitledMultiSelectEnumSchema" || v == "UntitledMultiSelectEnumSchema" {
					return nil, refuse("is a multi-select enum (type array), which its revision's forms lack (no %s)", v)
				}
				return nil, refuse("is a %s, which its revision's forms lack", v)
			}
			if v == "TitledSingleSelectEnumSchema" {
				if err := f.titledToEnumNames(); err != nil {
					return nil, refuse("%v", err)
				}
				changed = true
			}
		}
		// A default is a hint: the client shows it and the user still
		// confirms or changes the answer, so a revision whose field type
		// has none loses nothing the answer depends on by its absence.
		if f["default"] != nil && !slices.Contains(t.Fields, "default") {
			delete(f, "default")
			changed = true
		}
	}
	if !changed {
		return schema, nil
	}
	raw, err := json.Marshal(props)
	if err != nil {
		return nil, err
	}
	doc["properties"] = raw
	return json.Marshal(doc)
}

// titledToEnumNames rewrites a titled single-select, oneOf [{const,
// title}], as enum + enumNames in the same order: the same choices, the
// same labels.
func (f formField) titledToEnumNames() error {
	var choices []struct {
		Const *string `json:"const"`
		Title *string `json:"title"`
	}
	if err := json.Unmarshal(f["oneOf"], &choices); err != nil || len(choices) == 0 {
		return fmt.Errorf("has a oneOf that is not a list of {const, title} choices")
	}
	values, titles := make([]string, len(choices)), make([]string, len(choices))
	for i, c := range choices {
		if c.Const == nil || c.Title == nil {
			return fmt.Errorf("has a oneOf choice without a string const and title")
		}
		values[i], titles[i] = *c.Const, *c.Title
	}
	delete(f, "oneOf")
	f["enum"], _ = json.Marshal(values)
	f["enumNames"], _ = json.Marshal(titles)
	return nil
}
