package edge

import (
	"encoding/json"
	"fmt"

	"github.com/mcpx-dev/mcpx/generated/mcp"
	"github.com/mcpx-dev/mcpx/internal/mcpjson"
	"github.com/mcpx-dev/mcpx/runtime/jsonrpc"
)

// An upstream task's questions and answers (issue 13, bridging;
// runtime/upstream follows the task): the inputRequests a 2026-07-28
// upstream's tasks/get carries are read, and the inputResponses its
// tasks/update takes are written, through the generated tables of the
// upstream's revision, as a retry's inputRequests and inputResponses are.

// TaskQuestions decodes the inputRequests of a task's tasks/get result
// into hub InputRequests. Until the generated model types the
// inputRequests of GetTaskResult as InputRequests (tasks branch), they
// are read as an input_required result's.
func (d *Dialect) TaskQuestions(reqs map[string]mcp.GetTaskResultInputRequestsValue) (map[string]mcp.InputRequest, error) {
	raw, err := json.Marshal(map[string]any{"resultType": resultInputRequired, "inputRequests": reqs})
	if err != nil {
		return nil, err
	}
	v, err := d.decode(d.rev, "InputRequiredResult", raw)
	if err != nil {
		return nil, jsonrpc.Errorf(jsonrpc.InternalError, nil, "the task asks questions mcpx cannot read: %v", err)
	}
	return v.(*mcp.InputRequiredResult).InputRequests, nil
}

// TaskAnswers encodes hub answers as the inputResponses member of a
// tasks/update in the upstream's revision: as a retry's params carry
// them.
func (d *Dialect) TaskAnswers(answers map[string]mcp.InputResponse) (json.RawMessage, error) {
	raw, err := d.encode(d.rev, &mcp.CallToolRequestParams{InputResponses: answers})
	if err != nil {
		return nil, err
	}
	var p struct {
		InputResponses json.RawMessage `json:"inputResponses"`
	}
	if err := mcpjson.Unmarshal(raw, &p); err != nil || p.InputResponses == nil {
		return nil, fmt.Errorf("the answers cannot be written in protocol revision %s", d.rev)
	}
	return p.InputResponses, nil
}
