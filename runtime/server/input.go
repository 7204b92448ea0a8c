package server

import "github.com/mcpx-dev/mcpx/generated/mcp"

// InputRequired is a request that needs the client's input before it can
// complete (MRTR): the namespace returns it as its error, since the
// handlers' result types describe complete results only. The edge answers
// a client whose revision has InputRequiredResult with Result (for the
// methods the revision allows it on); any other client gets Err, the
// error it would have had without a bridge.
type InputRequired struct {
	Result *mcp.InputRequiredResult
	Err    error
}

func (e *InputRequired) Error() string { return e.Err.Error() }

func (e *InputRequired) Unwrap() error { return e.Err }
