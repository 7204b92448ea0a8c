// Package budget bounds the memory that large messages take in flight, for
// the whole process: the transports reading a client's request and the
// upstream readers reading an answer take their bytes from one shared
// budget, so that many large messages at once wait, then are refused with
// a clear error, rather than exhausting memory.
//
// A message counts only once it is larger than the budget's threshold
// (1 MiB by default): small messages, nearly all of them, never touch it.
// It is counted at the size of the buffer holding it, as that buffer
// grows, and stays counted until its request is answered (see [WithScope])
// or, for what belongs to no request, until it has been read and handed
// on. The bytes counted are the messages' own; the memory they cost while
// decoded, converted and encoded again is a few times that.
//
// The budget is a golang.org/x/sync/semaphore.Weighted: a weighted
// semaphore whose Acquire waits under a context (so a wait is bounded)
// and serves waiters in order (so a large message is not starved by a
// stream of smaller ones); it is the Go project's own, already in the
// module graph.
package budget

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sync/semaphore"
)

// Defaults for [New].
const (
	DefaultSize      = 256 << 20
	DefaultThreshold = 1 << 20
	DefaultWait      = 5 * time.Second
)

// Budget is a number of bytes that large messages in flight share.
type Budget struct {
	sem       *semaphore.Weighted
	size      int64
	threshold int64
	wait      time.Duration
	used      atomic.Int64 // what is reserved now, for the error message and tests
}

// New returns a budget of size bytes (DefaultSize if size <= 0), counting
// messages over threshold bytes (DefaultThreshold if <= 0); a reservation
// waits at most wait (DefaultWait if <= 0) before it is refused.
func New(size, threshold int64, wait time.Duration) *Budget {
	if size <= 0 {
		size = DefaultSize
	}
	if threshold <= 0 {
		threshold = DefaultThreshold
	}
	if wait <= 0 {
		wait = DefaultWait
	}
	return &Budget{sem: semaphore.NewWeighted(size), size: size, threshold: threshold, wait: wait}
}

var process atomic.Pointer[Budget]

func init() { process.Store(New(0, 0, 0)) }

// Default is the process's budget, which the transports and the upstream
// readers use unless given another.
func Default() *Budget { return process.Load() }

// SetDefault replaces the process's budget (mcpx serve --large-budget);
// reservations already made are given back to the budget they came from.
func SetDefault(b *Budget) { process.Store(b) }

// Or is b, or the process's budget when b is nil.
func Or(b *Budget) *Budget {
	if b == nil {
		return Default()
	}
	return b
}

// Size is the budget's size in bytes.
func (b *Budget) Size() int64 { return b.size }

// Threshold is the size above which a message counts.
func (b *Budget) Threshold() int64 { return b.threshold }

// Used is how many bytes are reserved now.
func (b *Budget) Used() int64 { return b.used.Load() }

// BusyError says a message was refused because the budget stayed
// exhausted for as long as its reservation could wait, or because the
// message is larger than the whole budget.
type BusyError struct {
	Size, Want int64
	Waited     time.Duration
}

func (e *BusyError) Error() string {
	if e.Want > e.Size {
		return fmt.Sprintf("the server is busy with large messages: a message over %d MiB is more than it holds at once (%d MiB)", e.Want>>20, e.Size>>20)
	}
	return fmt.Sprintf("the server is busy with large messages (%d MiB in flight, its limit, for %s); try again later", e.Size>>20, e.Waited)
}

// IsBusy reports whether err is, or wraps, a [BusyError].
func IsBusy(err error) bool {
	if err == nil { // before errors.As's target, which escapes: asked of every answer read
		return false
	}
	var b *BusyError
	return errors.As(err, &b)
}

// Hold is what one message has reserved. The zero Hold of a nil budget
// holds nothing, and its methods do nothing.
type Hold struct {
	b        *Budget
	counted  int64 // the message's bytes so far
	reserved int64 // what of them is reserved
}

// Hold starts counting a message against b.
func (b *Budget) Hold() *Hold { return &Hold{b: b} }

// Add counts n more bytes of the message. Once the message is over the
// threshold, everything counted is reserved: Add waits (within the
// budget's wait, and ctx) for room, and returns a *BusyError when there
// is none in time. A refused Hold has released what it held.
func (h *Hold) Add(ctx context.Context, n int64) error {
	if h == nil || h.b == nil || n <= 0 {
		return nil
	}
	h.counted += n
	if h.counted <= h.b.threshold {
		return nil
	}
	want := h.counted - h.reserved
	if total := h.counted; total > h.b.size {
		h.Release()
		return &BusyError{Size: h.b.size, Want: total}
	}
	if !h.b.sem.TryAcquire(want) {
		start := time.Now()
		wctx, cancel := context.WithTimeout(ctx, h.b.wait)
		err := h.b.sem.Acquire(wctx, want)
		cancel()
		if err != nil {
			total := h.counted
			h.Release()
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return &BusyError{Size: h.b.size, Want: total, Waited: time.Since(start).Round(time.Millisecond)}
		}
	}
	h.reserved += want
	h.b.used.Add(want)
	return nil
}

// Release gives back what h reserved; h then holds nothing.
func (h *Hold) Release() {
	if h == nil || h.b == nil {
		return
	}
	if h.reserved > 0 {
		h.b.used.Add(-h.reserved)
		h.b.sem.Release(h.reserved)
	}
	h.counted, h.reserved = 0, 0
}

// Holds reports whether h reserved anything.
func (h *Hold) Holds() bool { return h != nil && h.reserved > 0 }

// Keep hands what h holds to the scope of ctx (see [WithScope]), which
// gives it back when the request is answered; without a scope it is
// given back now. h then holds nothing (and is not kept itself: a Hold
// on the stack stays there).
func (h *Hold) Keep(ctx context.Context) {
	if !h.Holds() {
		return
	}
	if s, ok := ctx.Value(scopeKey{}).(*Scope); ok && s.add(*h) {
		*h = Hold{}
		return
	}
	h.Release()
}

type scopeKey struct{}

// Scope is the context of one request, holding what it kept of the
// budget until it is answered.
type Scope struct {
	context.Context
	mu    sync.Mutex
	holds []Hold
	done  bool
}

// Value makes the scope findable from the contexts derived from it.
func (s *Scope) Value(key any) any {
	if key == (scopeKey{}) {
		return s
	}
	return s.Context.Value(key)
}

func (s *Scope) add(h Hold) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.done {
		return false
	}
	s.holds = append(s.holds, h)
	return true
}

// WithScope returns a context for one request: a large answer read for it
// (an upstream's, under a context derived from this one) stays counted
// until Release is called, once the request's own answer is written. One
// allocation: it is on every request's way.
func WithScope(ctx context.Context) *Scope { return &Scope{Context: ctx} }

// Release gives back what the request kept; what it keeps later is given
// back at once.
func (s *Scope) Release() {
	s.mu.Lock()
	holds := s.holds
	s.holds, s.done = nil, true
	s.mu.Unlock()
	for i := range holds {
		holds[i].Release()
	}
}
