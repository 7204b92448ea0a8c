package agility

import (
	"encoding/json"
	"fmt"
	"slices"
	"time"
)

// What the synthetic revision changes, relative to the newest real one.
// TestNewRevision writes these into the schema; TestServeNewRevision looks
// for them in the tables and on the wire. They are data about the
// synthetic revision, so no edit is needed when a real revision lands: the
// synthetic one is then derived from that.
const (
	// envRevision names the synthetic revision to TestServeNewRevision in
	// the copy. Unset (the real repository), that test skips.
	envRevision = "MCPX_AGILITY_REVISION"

	addedToolMember = "validates"      // optional boolean on Tool
	addedMethod     = "tools/validate" // a client-to-server request pair
	addedRequest    = "ValidateToolRequest"
	addedParams     = "ValidateToolRequestParams"
	addedResult     = "ValidateToolResult"
	addedVariant    = "video" // a ContentBlock kind, modelled on audio
	addedVariantDef = "VideoContent"
	videoMIME       = "video/mp4" // the upstream's video block: its MIME type
	videoPriority   = 0.25        // and its annotations' priority
	renamedType     = "Implementation"
	renamedFrom     = "websiteUrl" // as the newest real revision spells it
	renamedTo       = "homepageUrl"
)

// syntheticID is the id of the revision after newest: the first day of the
// fifth month after it (2026-07-28 gives 2026-12-01), so it sorts after
// every real revision, as ids are dates.
func syntheticID(newest string) (string, error) {
	t, err := time.Parse(time.DateOnly, newest)
	if err != nil {
		return "", fmt.Errorf("newest revision %q is not a date: %w", newest, err)
	}
	return time.Date(t.Year(), t.Month()+5, 1, 0, 0, 0, 0, time.UTC).Format(time.DateOnly), nil
}

// deriveSchema returns the synthetic revision's schema: newest (a
// revision's schema.json) with the changes named above. Each change is
// built from what newest already has (CallToolRequest for the new request,
// AudioContent for the new variant), so that the result is as coherent as
// newest is. It fails, saying why, when newest does not have what a change
// needs or already has what it adds.
func deriveSchema(newest []byte) ([]byte, error) {
	var root map[string]any
	if err := json.Unmarshal(newest, &root); err != nil {
		return nil, fmt.Errorf("newest schema: %w", err)
	}
	defsKey := "$defs"
	if root["$schema"] == "http://json-schema.org/draft-07/schema#" {
		defsKey = "definitions"
	}
	defs, ok := root[defsKey].(map[string]any)
	if !ok {
		return nil, fmt.Errorf("newest schema: no %q object", defsKey)
	}
	ref := func(name string) map[string]any { return map[string]any{"$ref": "#/" + defsKey + "/" + name} }
	obj := func(name string) (map[string]any, error) {
		o, ok := defs[name].(map[string]any)
		if !ok {
			return nil, fmt.Errorf("newest schema has no definition %s", name)
		}
		return o, nil
	}
	props := func(o map[string]any, name string) (map[string]any, error) {
		p, ok := o["properties"].(map[string]any)
		if !ok {
			return nil, fmt.Errorf("definition %s has no properties", name)
		}
		return p, nil
	}
	addVariant := func(union, def string) error {
		u, err := obj(union)
		if err != nil {
			return err
		}
		alts, ok := u["anyOf"].([]any)
		if !ok {
			return fmt.Errorf("definition %s is not an anyOf union", union)
		}
		u["anyOf"] = append(alts, ref(def))
		return nil
	}
	for _, name := range []string{addedRequest, addedParams, addedResult, addedVariantDef} {
		if _, ok := defs[name]; ok {
			return nil, fmt.Errorf("newest schema already defines %s: pick other names for the synthetic revision", name)
		}
	}

	// An optional member on Tool.
	tool, err := obj("Tool")
	if err != nil {
		return nil, err
	}
	toolProps, err := props(tool, "Tool")
	if err != nil {
		return nil, err
	}
	if _, ok := toolProps[addedToolMember]; ok {
		return nil, fmt.Errorf("Tool already has %s", addedToolMember)
	}
	toolProps[addedToolMember] = map[string]any{
		"type":        "boolean",
		"description": "Whether the server checks a call's arguments with tools/validate. (Synthetic: testkit/agility.)",
	}

	// A method pair: tools/validate, its params taken from tools/call's.
	call, err := obj("CallToolRequest")
	if err != nil {
		return nil, err
	}
	req := clone(call).(map[string]any)
	reqProps, err := props(req, "CallToolRequest")
	if err != nil {
		return nil, err
	}
	reqProps["method"] = map[string]any{"const": addedMethod, "type": "string"}
	reqProps["params"] = ref(addedParams)
	req["description"] = "Used by the client to check a tool's arguments without calling it. (Synthetic: testkit/agility.)"
	defs[addedRequest] = req

	callParams, err := obj("CallToolRequestParams")
	if err != nil {
		return nil, err
	}
	cpProps, err := props(callParams, "CallToolRequestParams")
	if err != nil {
		return nil, err
	}
	params := map[string]any{
		"description": "Parameters for a `tools/validate` request.",
		"type":        "object",
		"properties":  map[string]any{},
	}
	var required []any
	for _, m := range []string{"_meta", "name", "arguments"} {
		p, ok := cpProps[m]
		if !ok {
			return nil, fmt.Errorf("CallToolRequestParams has no %s", m)
		}
		params["properties"].(map[string]any)[m] = clone(p)
		if r, _ := callParams["required"].([]any); slices.Contains(r, any(m)) {
			required = append(required, m)
		}
	}
	params["required"] = required
	defs[addedParams] = params

	callResult, err := obj("CallToolResult")
	if err != nil {
		return nil, err
	}
	crProps, err := props(callResult, "CallToolResult")
	if err != nil {
		return nil, err
	}
	result := map[string]any{
		"description": "The result of a tools/validate request.",
		"type":        "object",
		"properties": map[string]any{
			"valid":    map[string]any{"type": "boolean", "description": "Whether the arguments fit the tool's inputSchema."},
			"problems": map[string]any{"type": "array", "items": map[string]any{"type": "string"}, "description": "What does not fit, one line each."},
		},
		"required": []any{"valid"},
	}
	// The members every result of the newest revision carries (_meta,
	// resultType), as its tools/call result has them.
	for _, m := range []string{"_meta", "resultType"} {
		if p, ok := crProps[m]; ok {
			result["properties"].(map[string]any)[m] = clone(p)
			if r, _ := callResult["required"].([]any); slices.Contains(r, any(m)) {
				result["required"] = append(result["required"].([]any), m)
			}
		}
	}
	defs[addedResult] = result
	if err := addVariant("ClientRequest", addedRequest); err != nil {
		return nil, err
	}
	if err := addVariant("ServerResult", addedResult); err != nil {
		return nil, err
	}

	// A union variant: video content, shaped like audio.
	audio, err := obj("AudioContent")
	if err != nil {
		return nil, err
	}
	video := clone(audio).(map[string]any)
	vProps, err := props(video, "AudioContent")
	if err != nil {
		return nil, err
	}
	vProps["type"] = map[string]any{"const": addedVariant, "type": "string"}
	video["description"] = "Video provided to or from an LLM. (Synthetic: testkit/agility.)"
	defs[addedVariantDef] = video
	if err := addVariant("ContentBlock", addedVariantDef); err != nil {
		return nil, err
	}

	// A renamed member.
	impl, err := obj(renamedType)
	if err != nil {
		return nil, err
	}
	iProps, err := props(impl, renamedType)
	if err != nil {
		return nil, err
	}
	p, ok := iProps[renamedFrom]
	if !ok {
		return nil, fmt.Errorf("%s has no %s to rename", renamedType, renamedFrom)
	}
	delete(iProps, renamedFrom)
	iProps[renamedTo] = p
	if r, ok := impl["required"].([]any); ok {
		for i, m := range r {
			if m == renamedFrom {
				r[i] = renamedTo
			}
		}
	}

	b, err := json.MarshalIndent(root, "", "    ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// clone deep-copies a decoded JSON value.
func clone(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = clone(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = clone(e)
		}
		return out
	default:
		return v
	}
}
