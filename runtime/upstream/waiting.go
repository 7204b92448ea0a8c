package upstream

import (
	"log/slog"

	"github.com/mcpx-dev/mcpx/runtime/budget"
	"github.com/mcpx-dev/mcpx/runtime/jsonrpc"
)

// waiting are the calls of a connection that reads its answers from one
// stream (stdio, HTTP+SSE), by request id. Its methods run with the lock
// of the connection that owns it held, so that an answer is never sent to
// a call that forget has just let go.
type waiting map[string]chan reply

// deliver hands m (and its budget hold, which is the caller's from then
// on) to the call waiting for it, if one is.
func (w waiting) deliver(m *jsonrpc.Message, h *budget.Hold) {
	if ch := w[string(m.ID)]; ch != nil {
		delete(w, string(m.ID))
		ch <- reply{m, *h} // buffered
		*h = budget.Hold{}
	}
}

// refuse answers the call whose answer the large-message budget had no
// room for with an error saying so; it reports whether one was waiting.
func (w waiting) refuse(upstream string, r *budget.Refused) bool {
	ch := w[string(r.ID)]
	if ch == nil {
		return false
	}
	delete(w, string(r.ID))
	ch <- reply{m: busyAnswer(upstream, r)}
	return true
}

// endAll ends every waiting call: the connection is gone.
func (w waiting) endAll() {
	for id, ch := range w {
		close(ch)
		delete(w, id)
	}
}

// logDropped says what the budget dropped: an answer (the call was told),
// or a request or notification (only logged).
func logDropped(log, noisy *slog.Logger, r *budget.Refused, answer bool) {
	if answer {
		log.Warn("a large answer from the upstream was dropped", "why", r.Err)
		return
	}
	noisy.Warn("a large message from the upstream was dropped", "why", r.Err)
}
