package server

import (
	"context"

	"github.com/mcpx-dev/mcpx/generated/mcp"
)

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

type takesInputKey struct{}

// WithTakesInputRequired returns ctx saying whether the client of its
// request takes an InputRequiredResult on it: a 2026-07-28 client, on
// tools/call, prompts/get or resources/read (the MRTR page's "Supported
// Requests"). The edge sets it, since only the edge knows the client's
// revision; a namespace that asks its client then asks such a client
// through input_required rounds, and any other by a request of its own.
func WithTakesInputRequired(ctx context.Context, ok bool) context.Context {
	return context.WithValue(ctx, takesInputKey{}, ok)
}

// TakesInputRequired reports whether the client of the request ctx
// belongs to takes an [InputRequired] answer to it; false when the edge
// did not say.
func TakesInputRequired(ctx context.Context) bool {
	ok, _ := ctx.Value(takesInputKey{}).(bool)
	return ok
}
