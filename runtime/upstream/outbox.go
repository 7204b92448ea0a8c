package upstream

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/mcpx-dev/mcpx/runtime/jsonrpc"
)

// sendWait bounds each message mcpx sends an upstream without waiting for
// an answer (notifications/cancelled, its replies to the upstream's
// requests) and the DELETE that ends an HTTP session: an upstream that
// accepts them and never answers holds none of them longer.
const sendWait = 5 * time.Second

// maxPending is how many of those messages may be on their way to one
// connection at once; one more is dropped, and the drop logged.
const maxPending = 16

// outbox sends, in the background, the messages that wait for no answer:
// each within its deadline, at most maxPending at once. Neither a caller
// nor the goroutine reading the upstream ever waits on them.
type outbox struct {
	write   func(context.Context, *jsonrpc.Message) error
	log     *slog.Logger // rate-limited: an upstream's flood must not become mcpx's
	timeout time.Duration
	slots   chan struct{}

	ctx    context.Context // ends when the connection does
	cancel context.CancelFunc

	mu      sync.Mutex
	closed  bool
	senders sync.WaitGroup
}

// newOutbox sends with write, each message within wait (0: sendWait).
func newOutbox(write func(context.Context, *jsonrpc.Message) error, log *slog.Logger, wait time.Duration) *outbox {
	if wait <= 0 {
		wait = sendWait
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &outbox{write: write, log: log, timeout: wait, slots: make(chan struct{}, maxPending), ctx: ctx, cancel: cancel}
}

// send queues m and returns at once. When maxPending messages are already
// on their way, m is dropped and the drop logged; after close, m is
// dropped silently (the connection is gone).
func (o *outbox) send(m *jsonrpc.Message) {
	o.mu.Lock()
	if o.closed {
		o.mu.Unlock()
		return
	}
	select {
	case o.slots <- struct{}{}:
	default:
		o.mu.Unlock()
		o.log.Warn("message to the upstream dropped: too many are waiting to be sent", "message", describe(m), "limit", maxPending)
		return
	}
	o.senders.Add(1)
	o.mu.Unlock()
	go func() {
		defer o.senders.Done()
		defer func() { <-o.slots }()
		ctx, cancel := context.WithTimeout(o.ctx, o.timeout)
		defer cancel()
		if err := o.write(ctx, m); err != nil && o.ctx.Err() == nil {
			o.log.Info("message to the upstream not sent", "message", describe(m), "err", redact(err))
		}
	}()
}

// close drops what is not sent yet: the messages on their way are
// abandoned (an HTTP request is cancelled; a pipe write ends by its
// deadline), later ones are not sent. It does not wait: see [outbox.wait].
func (o *outbox) close() {
	o.mu.Lock()
	o.closed = true
	o.mu.Unlock()
	o.cancel()
}

// wait returns when no message is on its way any more.
func (o *outbox) wait() { o.senders.Wait() }

// describe names m for a log line: its method, or the request it answers.
func describe(m *jsonrpc.Message) string {
	if m.Method != "" {
		return m.Method
	}
	return "the reply to request " + truncate(m.ID, 64)
}
