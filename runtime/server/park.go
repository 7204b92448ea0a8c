package server

import "context"

// ResultAsker is an [Asker] whose client takes questions only inside an
// input_required result (2026-07-28: the MRTR page has no server-to-client
// requests), so Ask cannot reach it during the call. A namespace whose
// upstream asks during such a call answers the call with the question
// instead, keeps the upstream's call waiting, and resumes it on the
// client's retry (the gateway's parked calls).
type ResultAsker interface {
	Asker
	// AsksByResult reports whether questions go to this client as an
	// input_required result rather than as requests.
	AsksByResult() bool
	// MayAsk refuses, with the *jsonrpc.Error the specification gives, a
	// question the client did not declare it can take; nil when it can.
	MayAsk(method string, params any) error
}

// AsksByResult returns the [ResultAsker] of the request ctx belongs to
// when its client takes questions as an input_required result; nil
// otherwise (a legacy client, which Ask reaches directly).
func AsksByResult(ctx context.Context) ResultAsker {
	if a, ok := ctx.Value(askerKey{}).(ResultAsker); ok && a.AsksByResult() {
		return a
	}
	return nil
}

// NotifierOf is the [Notifier] of the request ctx belongs to, or nil: a
// namespace whose work outlives the request hands its notifications to
// the request that waits on it now.
func NotifierOf(ctx context.Context) Notifier { return notifier(ctx) }
