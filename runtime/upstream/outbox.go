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
// connection at once, and maxQueued how many more may wait for one of
// them to end; one more is dropped, and the drop logged. The queue takes
// a burst (a hundred clients hanging up at once each cancel a call: the
// load run dropped a fifth of those cancellations without it) while an
// upstream that reads nothing still holds at most maxPending goroutines
// and maxQueued small messages.
const (
	maxPending = 16
	maxQueued  = 256
)

// outbox sends, in the background, the messages that wait for no answer:
// each within its deadline, at most maxPending at once, the rest in
// turn. Neither a caller nor the goroutine reading the upstream ever
// waits on them.
type outbox struct {
	write   func(context.Context, *jsonrpc.Message) error
	log     *slog.Logger // rate-limited: an upstream's flood must not become mcpx's
	timeout time.Duration
	queued  int // the most that may wait in queue

	ctx    context.Context // ends when the connection does
	cancel context.CancelFunc

	mu      sync.Mutex
	closed  bool
	sending int                // senders running, at most maxPending
	queue   []*jsonrpc.Message // waiting for a sender
	senders sync.WaitGroup
}

// newOutbox sends with write, each message within wait (0: sendWait),
// with queue messages waiting at most (0: maxQueued; below 0: none).
func newOutbox(write func(context.Context, *jsonrpc.Message) error, log *slog.Logger, wait time.Duration, queue int) *outbox {
	if wait <= 0 {
		wait = sendWait
	}
	switch {
	case queue == 0:
		queue = maxQueued
	case queue < 0:
		queue = 0
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &outbox{write: write, log: log, timeout: wait, queued: queue, ctx: ctx, cancel: cancel}
}

// send queues m and returns at once. When maxPending messages are already
// on their way it waits its turn, and when the queue is full too it is
// dropped and the drop logged; after close, m is dropped silently (the
// connection is gone).
func (o *outbox) send(m *jsonrpc.Message) {
	o.mu.Lock()
	if o.closed {
		o.mu.Unlock()
		return
	}
	if o.sending >= maxPending {
		if len(o.queue) >= o.queued {
			o.mu.Unlock()
			o.log.Warn("message to the upstream dropped: too many are waiting to be sent", "message", describe(m), "limit", maxPending+o.queued)
			return
		}
		o.queue = append(o.queue, m)
		o.mu.Unlock()
		return
	}
	o.sending++
	o.senders.Add(1)
	o.mu.Unlock()
	go o.run(m)
}

// run sends m, then what waits in the queue, until the queue is empty or
// the outbox closed.
func (o *outbox) run(m *jsonrpc.Message) {
	defer o.senders.Done()
	for {
		ctx, cancel := context.WithTimeout(o.ctx, o.timeout)
		if err := o.write(ctx, m); err != nil && o.ctx.Err() == nil {
			o.log.Info("message to the upstream not sent", "message", describe(m), "err", redact(err))
		}
		cancel()
		o.mu.Lock()
		if o.closed || len(o.queue) == 0 {
			o.sending--
			o.mu.Unlock()
			return
		}
		m = o.queue[0]
		o.queue[0] = nil
		o.queue = o.queue[1:]
		o.mu.Unlock()
	}
}

// close drops what is not sent yet: the messages on their way are
// abandoned (an HTTP request is cancelled; a pipe write ends by its
// deadline), later ones are not sent. It does not wait: see [outbox.wait].
func (o *outbox) close() {
	o.mu.Lock()
	o.closed = true
	o.queue = nil
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
