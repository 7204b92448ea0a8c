package edge

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/mcpx-dev/mcpx/generated/mcp"
	"github.com/mcpx-dev/mcpx/generated/revision"
	"github.com/mcpx-dev/mcpx/internal/mcpjson"
	"github.com/mcpx-dev/mcpx/runtime/jsonrpc"
)

// An upstream's result is decoded into the hub type its method's table
// names (CallToolResult for tools/call), and that type describes a complete
// result only. Decoding anything else into it does not fail: an
// input_required result or a task handle lacks the members a complete
// result has and decodes as an empty one, which the client would take for
// an empty success. So the kind is read first, and a result of another
// kind is an [UnrelayedResultError] until a bridge relays it.

// UnrelayedResultError is an upstream's result of a kind the hub type of
// its method does not describe: an input_required result (MRTR), a task
// handle (the 2026-07-28 tasks extension's resultType "task", or a
// 2025-11-25 {task: ...}), or a resultType mcpx does not know. The client
// gets -32603 saying what came back; Raw keeps the result as the upstream
// sent it, for the bridge that will relay it.
type UnrelayedResultError struct {
	Method string
	// Kind is "input_required", "task", or the resultType as sent.
	Kind string
	// Detail says more for the message: the questions asked, the task's
	// id; "" when there is nothing to add.
	Detail string
	Raw    json.RawMessage
	// Input is an input_required result decoded into the hub type (its
	// inputRequests converted from the upstream's revision, keys as
	// sent), for the bridge that relays it; nil for any other kind, or
	// when the upstream's revision has no InputRequiredResult.
	Input *mcp.InputRequiredResult
	// Unreadable is why an input_required result does not decode (its
	// questions are not InputRequests): never relayed, and said.
	Unreadable error
}

func (e *UnrelayedResultError) Error() string {
	detail := ""
	if e.Detail != "" {
		detail = " (" + e.Detail + ")"
	}
	switch e.Kind {
	case resultInputRequired:
		if e.Unreadable != nil {
			return fmt.Sprintf("the upstream answered with an input_required result%s that mcpx cannot read: %v", detail, e.Unreadable)
		}
		return fmt.Sprintf("the upstream answered with an input_required result%s, which mcpx cannot relay yet", detail)
	case resultTask:
		return fmt.Sprintf("the upstream answered with a task handle%s, which mcpx cannot relay yet", detail)
	}
	return fmt.Sprintf("the upstream answered with a result of resultType %s, which mcpx does not know", jsonrpc.Quote(e.Kind))
}

// maxKeysSaid is how many inputRequests keys a message names.
const maxKeysSaid = 5

const (
	resultComplete      = "complete"
	resultInputRequired = "input_required"
	resultTask          = "task"
)

// unrelayed returns an [UnrelayedResultError] for a result of method that
// its hub type hub (in rev's table) does not describe, else nil. A result
// without resultType is complete (the 2026-07-28 schema: a client MUST
// treat the absent field so), unless it is a 2025-11-25 task handle: a
// task object where hub has no member of that name. Members of the wrong
// shape are left to the decoder to report.
func unrelayed(rev *revision.Table, method, hub string, raw json.RawMessage) error {
	if complete(raw) {
		return nil
	}
	return readKind(rev, method, hub, raw)
}

// readKind is unrelayed by decoding raw's members.
func readKind(rev *revision.Table, method, hub string, raw json.RawMessage) error {
	var head struct {
		ResultType    json.RawMessage `json:"resultType"`
		InputRequests json.RawMessage `json:"inputRequests"`
		TaskID        json.RawMessage `json:"taskId"`
		Task          json.RawMessage `json:"task"`
	}
	// Asked of every result an upstream answers: its members are slices of
	// raw, not copies, and the common answer ("complete", as a modern
	// upstream says it) is known without decoding its value.
	if len(raw) == 0 || mcpjson.UnmarshalShared(raw, &head) != nil {
		return nil
	}
	if string(head.ResultType) == `"`+resultComplete+`"` {
		return nil // complete, however it is shaped
	}
	kind := resultComplete
	if head.ResultType != nil && mcpjson.Unmarshal(head.ResultType, &kind) != nil {
		return nil
	}
	e := &UnrelayedResultError{Method: method, Kind: kind, Raw: raw}
	switch kind {
	case resultComplete, "":
		var task struct {
			TaskID string `json:"taskId"`
		}
		if head.ResultType != nil || head.Task == nil || mcpjson.Unmarshal(head.Task, &task) != nil || hasField(rev, hub, "task") {
			return nil
		}
		e.Kind, e.Detail = resultTask, taskDetail(task.TaskID)
	case resultInputRequired:
		var reqs map[string]json.RawMessage
		if mcpjson.Unmarshal(head.InputRequests, &reqs) == nil && len(reqs) > 0 {
			keys := make([]string, 0, len(reqs))
			for k := range reqs {
				keys = append(keys, jsonrpc.Quote(k))
			}
			slices.Sort(keys)
			if len(keys) > maxKeysSaid {
				keys = append(keys[:maxKeysSaid], fmt.Sprintf("and %d more", len(reqs)-maxKeysSaid))
			}
			e.Detail = "asking " + strings.Join(keys, ", ")
		}
	case resultTask:
		var id string
		if mcpjson.Unmarshal(head.TaskID, &id) == nil {
			e.Detail = taskDetail(id)
		}
	}
	return e
}

// complete reports whether raw is certainly a complete result, from a
// look at its members that does not decode them (mcpjson.Member): its
// resultType is "complete", or it has neither resultType nor task. A
// 64 kB text was scanned once more for this, by the decoder. Anything
// else (another kind, members it cannot be sure of) is for unrelayed's
// decoding to tell; raw is decoded in full afterwards either way.
func complete(raw json.RawMessage) bool {
	kind, ok := mcpjson.Member(raw, "resultType")
	if !ok {
		return false
	}
	if string(kind) == `"`+resultComplete+`"` {
		return true
	}
	if kind != nil {
		return false
	}
	task, ok := mcpjson.Member(raw, "task")
	return ok && task == nil
}

func taskDetail(id string) string {
	if id == "" {
		return ""
	}
	return "task " + jsonrpc.Quote(id)
}

// hasField reports whether rev's hub type name has a member field.
func hasField(rev *revision.Table, name, field string) bool {
	t, ok := rev.Type(name)
	return ok && slices.Contains(t.Fields, field)
}

// readInput decodes the input_required result err carries into its
// Input, through the upstream's revision, on the requests that may have
// one: questions that do not decode are Unreadable, never relayed as sent.
func (d *Dialect) readInput(err error) error {
	e, ok := err.(*UnrelayedResultError)
	if !ok || e.Kind != resultInputRequired || !inputRequiredOn[e.Method] {
		return err
	}
	if _, has := revision.Lookup(d.rev).Type("InputRequiredResult"); !has {
		return err
	}
	v, derr := d.decode(d.rev, "InputRequiredResult", e.Raw)
	if derr != nil {
		e.Unreadable = derr
		return e
	}
	e.Input = v.(*mcp.InputRequiredResult)
	if verr := validInputRequests(e.Raw, e.Input); verr != nil {
		// A question that breaks its own schema is asked of no client.
		e.Input, e.Unreadable = nil, verr
	}
	return e
}
