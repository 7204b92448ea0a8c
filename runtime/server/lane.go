package server

import "context"

// A ResultLane is the edge's way for a tools/call result of the client's
// own revision to cross as the upstream wrote it, without being decoded
// into the hub types and encoded again (edge/lane.go). The edge offers
// one in [Request] only to a call whose result goes straight into its
// answer. A namespace only carries it, in the request's context, to the
// upstream's dialect (edge.Dialect.LaneResult), which may take the
// result and return a stand-in for it: the namespace must hand that back
// as it is.
type ResultLane interface {
	// ResultLane marks the edge's lane.
	ResultLane()
}

type resultLaneKey struct{}

// ResultLaneOf returns the lane the edge opened for ctx's request, or
// nil.
func ResultLaneOf(ctx context.Context) ResultLane {
	l, _ := ctx.Value(resultLaneKey{}).(ResultLane)
	return l
}

// WithoutResultLane returns ctx with the request's lane closed: for a
// call whose result may not go straight into the request's answer (a
// call parked apart from the request, answered to a later one).
func WithoutResultLane(ctx context.Context) context.Context {
	if ResultLaneOf(ctx) == nil {
		return ctx
	}
	return context.WithValue(ctx, resultLaneKey{}, nil)
}
