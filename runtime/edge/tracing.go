package edge

import (
	"context"

	"github.com/mcpx-dev/mcpx/runtime/tracing"
)

// TraceCall starts the span of a call to the upstream d speaks to (see
// [tracing.StartUpstream]), labelled with d's revision: here, because
// only the edge may read one; the span only reports it, as a log line
// would. Off, it returns ctx and nil.
func (d *Dialect) TraceCall(ctx context.Context, upstream, method, target string) (context.Context, *tracing.Span) {
	return tracing.StartUpstream(ctx, upstream, string(d.rev), method, target)
}
