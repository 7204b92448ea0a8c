package edge

import (
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"sort"

	"github.com/mcpx-dev/mcpx/generated/mcp"
	"github.com/mcpx-dev/mcpx/generated/revision"
	"github.com/mcpx-dev/mcpx/runtime/jsonrpc"
)

// Two checks on a question before it is relayed (issue 12):
//
//   - samplingCarried: content the client's revision cannot carry (tool
//     blocks before 2025-11-25, audio to 2024-11-05, tools or toolChoice
//     where the params have no such member) is refused -32602, never
//     dropped by the downgrade. Decided from the revision tables (the
//     variants of SamplingMessageContent, the members of
//     CreateMessageRequestParams), never from a revision's name.
//   - validQuestion: a question that decodes but breaks its own schema
//     (a sampling request without messages or maxTokens, an elicitation
//     form that is not a flat object of primitive fields, a URL request
//     without a URL) is refused -32602 to the upstream that asked, and no
//     client is asked it.

// contentTags are the union tags ("type") of the hub's sampling content
// variants, as the revision tables list them.
func contentTag(v any) (tag, hub string) {
	switch v.(type) {
	case *mcp.TextContent:
		return "text", "TextContent"
	case *mcp.ImageContent:
		return "image", "ImageContent"
	case *mcp.AudioContent:
		return "audio", "AudioContent"
	case *mcp.ToolUseContent:
		return "tool_use", "ToolUseContent"
	case *mcp.ToolResultContent:
		return "tool_result", "ToolResultContent"
	case mcp.SamplingMessageContentBlockList:
		return "[]", "SamplingMessageContentBlockList"
	}
	return "", fmt.Sprintf("%T", v)
}

// samplingCarried refuses (-32602) a sampling request tab's revision
// cannot carry as it is: a message content variant, or a content block in
// a list, that the revision's SamplingMessageContent lacks, or tools /
// toolChoice where its CreateMessageRequestParams has no such member.
func samplingCarried(tab *revision.Table, p *mcp.CreateMessageRequestParams, who string) error {
	refuse := func(what, hub string) error {
		return jsonrpc.Errorf(jsonrpc.InvalidParams, nil, "sampling/createMessage cannot be sent to the client (%s): %s, and %s has no %s form; mcpx refuses it rather than drop it", who, what, hub, tab.Revision)
	}
	params, _ := tab.Type("CreateMessageRequestParams")
	if len(p.Tools) > 0 && !slices.Contains(params.Fields, "tools") {
		return refuse("the request offers tools", "CreateMessageRequestParams.tools")
	}
	if p.ToolChoice != nil && !slices.Contains(params.Fields, "toolChoice") {
		return refuse("the request sets toolChoice", "CreateMessageRequestParams.toolChoice")
	}
	content, _ := tab.Type("SamplingMessageContent")
	blocks, _ := tab.Type("SamplingMessageContentBlock")
	for i, m := range p.Messages {
		tag, hub := contentTag(m.Content.Value)
		if !slices.Contains(content.Variants, tag) {
			return refuse(fmt.Sprintf("messages[%d] holds %s content", i, kindName(tag)), hub)
		}
		list, _ := m.Content.Value.(mcp.SamplingMessageContentBlockList)
		for j, b := range list {
			tag, hub := contentTag(b.Value)
			if !slices.Contains(blocks.Variants, tag) {
				return refuse(fmt.Sprintf("messages[%d].content[%d] holds %s content", i, j, kindName(tag)), hub)
			}
		}
	}
	return nil
}

func kindName(tag string) string {
	if tag == "[]" {
		return "a list of"
	}
	return tag
}

// requiredParams are the members each question's params must have, by
// the hub type of the params (or variant), as every revision's schema
// requires them. The hub value cannot tell a member missing from a zero
// one (maxTokens 0, message ""), so these are checked on the raw params.
var requiredParams = map[string][]string{
	"CreateMessageRequestParams": {"maxTokens", "messages"},
	"ElicitRequestFormParams":    {"message", "requestedSchema"},
	"ElicitRequestURLParams":     {"message", "url"},
}

// validQuestion refuses (-32602, saying what is wrong) a question an
// upstream sent as method with raw params, decoded into the hub value v,
// that its own schema does not allow.
func validQuestion(method string, raw json.RawMessage, v any) error {
	invalid := func(format string, args ...any) error {
		return jsonrpc.Errorf(jsonrpc.InvalidParams, nil, "invalid %s request: %s", method, fmt.Sprintf(format, args...))
	}
	var members map[string]json.RawMessage
	_ = json.Unmarshal(raw, &members)
	need := func(typ string) error {
		for _, k := range requiredParams[typ] {
			if m, ok := members[k]; !ok || string(m) == "null" {
				return invalid("params.%s is required", k)
			}
		}
		return nil
	}
	switch p := v.(type) {
	case *mcp.CreateMessageRequestParams:
		if err := need("CreateMessageRequestParams"); err != nil {
			return err
		}
		return validSampling(p, invalid)
	case *mcp.ElicitRequestParams:
		switch q := p.Value.(type) {
		case *mcp.ElicitRequestURLParams:
			if err := need("ElicitRequestURLParams"); err != nil {
				return err
			}
			return validURL(q.URL, invalid)
		case *mcp.ElicitRequestFormParams:
			if err := need("ElicitRequestFormParams"); err != nil {
				return err
			}
			return validForm(q.RequestedSchema, invalid)
		case nil:
			return invalid("params are required")
		}
	}
	return nil
}

func validSampling(p *mcp.CreateMessageRequestParams, invalid func(string, ...any) error) error {
	if p.MaxTokens < 0 {
		return invalid("params.maxTokens is %d", p.MaxTokens)
	}
	for i, m := range p.Messages {
		if m.Role != mcp.RoleUser && m.Role != mcp.RoleAssistant {
			return invalid("messages[%d].role is %s, not user or assistant", i, jsonrpc.Quote(string(m.Role)))
		}
		if m.Content.Value == nil {
			return invalid("messages[%d] has no content", i)
		}
	}
	return nil
}

func validURL(s string, invalid func(string, ...any) error) error {
	u, err := url.Parse(s)
	if err != nil || !u.IsAbs() {
		return invalid("params.url %s is not an absolute URL", jsonrpc.Quote(s))
	}
	return nil
}

// primitiveTypes are the field types a requestedSchema property may have
// (PrimitiveSchemaDefinition: string, number, integer, boolean; array for
// a multi-select enum, whose items are an enum).
var primitiveTypes = []string{"string", "number", "integer", "boolean", "array"}

// validForm checks that schema is a requestedSchema: an object schema
// ("type": "object") whose properties are each a primitive field (no
// nested objects, no arrays but a multi-select of enum items), and whose
// required, if present, is a list of strings.
func validForm(schema json.RawMessage, invalid func(string, ...any) error) error {
	var doc struct {
		Type       *string                    `json:"type"`
		Properties map[string]json.RawMessage `json:"properties"`
		Required   json.RawMessage            `json:"required"`
	}
	if err := json.Unmarshal(schema, &doc); err != nil {
		return invalid("requestedSchema is not a JSON object")
	}
	if doc.Type == nil || *doc.Type != "object" {
		return invalid(`requestedSchema must have "type": "object"`)
	}
	if doc.Properties == nil {
		return invalid("requestedSchema has no properties")
	}
	if doc.Required != nil {
		var req []string
		if json.Unmarshal(doc.Required, &req) != nil {
			return invalid("requestedSchema.required is not a list of strings")
		}
	}
	names := make([]string, 0, len(doc.Properties))
	for n := range doc.Properties {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		var f struct {
			Type  *string `json:"type"`
			Items *struct {
				Enum  json.RawMessage `json:"enum"`
				AnyOf json.RawMessage `json:"anyOf"`
			} `json:"items"`
		}
		if json.Unmarshal(doc.Properties[n], &f) != nil {
			return invalid("requestedSchema field %s is not an object", jsonrpc.Quote(n))
		}
		if f.Type == nil || !slices.Contains(primitiveTypes, *f.Type) {
			t := "no type"
			if f.Type != nil {
				t = "type " + jsonrpc.Quote(*f.Type)
			}
			return invalid("requestedSchema field %s has %s; a form field is a string, number, integer, boolean or multi-select enum (no nested objects)", jsonrpc.Quote(n), t)
		}
		if *f.Type == "array" && (f.Items == nil || (f.Items.Enum == nil && f.Items.AnyOf == nil)) {
			return invalid("requestedSchema field %s is an array whose items are not an enum; a form has no other lists", jsonrpc.Quote(n))
		}
	}
	return nil
}

// validInputRequests is validQuestion for each question of an upstream's
// input_required result in (raw as the upstream sent it): the first that
// breaks its schema, named by key, in key order.
func validInputRequests(raw json.RawMessage, in *mcp.InputRequiredResult) error {
	var doc struct {
		InputRequests map[string]struct {
			Params json.RawMessage `json:"params"`
		} `json:"inputRequests"`
	}
	_ = json.Unmarshal(raw, &doc)
	keys := make([]string, 0, len(in.InputRequests))
	for k := range in.InputRequests {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		var err error
		switch q := in.InputRequests[k].Value.(type) {
		case *mcp.CreateMessageRequest:
			err = validQuestion(mcp.MethodSamplingCreateMessage, doc.InputRequests[k].Params, &q.Params)
		case *mcp.ElicitRequest:
			err = validQuestion(mcp.MethodElicitationCreate, doc.InputRequests[k].Params, &q.Params)
		}
		if err != nil {
			return fmt.Errorf("inputRequests[%s]: %w", jsonrpc.Quote(k), err)
		}
	}
	return nil
}
