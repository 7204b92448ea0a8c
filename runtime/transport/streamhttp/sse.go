package streamhttp

import (
	"bytes"
	"encoding/json"
	"net/http"
	"sync"
	"time"

	"github.com/mcpx-dev/mcpx/generated/mcp"
	"github.com/mcpx-dev/mcpx/runtime/jsonrpc"
)

// StreamQueue is how many notifications one SSE stream holds waiting for
// its client (ARCHITECTURE principle 7: nobody waits on a stranger). The
// edge's sink only queues: the goroutine that calls it (one reading an
// upstream, the list-change broadcast) never waits on the client's
// socket. Once a client is behind (StreamBehind notifications wait), a
// progress notification replaces the one still queued for the same
// token, and one identical to a notification still queued (a list
// change) is not queued twice; one that finds the queue full is dropped.
// The final response is never dropped: it waits apart from the queue,
// after it.
const StreamQueue = 64

// StreamBehind is how many notifications waiting make a stream's client
// behind: below it every notification is queued, in order.
const StreamBehind = 8

// stream is one response that may become an SSE stream: it starts on the
// first event, so a request that produces no notifications is answered
// with plain JSON. It is safe for concurrent use: the edge's sink may be
// called from any goroutine (even after the request is answered). Once
// started, only its writer goroutine writes on it, each write within
// Options.WriteTimeout; a client that does not take a write for that long
// has its stream ended and its request cancelled. Once closed, nothing
// more is queued on it.
type stream struct {
	h      *Handler
	w      http.ResponseWriter
	rc     *http.ResponseController
	cancel func() // ends the request whose response this is; may be nil

	mu      sync.Mutex
	started bool          // the SSE response has begun: the writer runs
	closed  bool          // nothing more may be queued or started
	ended   bool          // end has run
	drain   bool          // the writer writes what is queued, then returns
	slot    bool          // holds one of Handler.streams
	queue   []queued      // notifications waiting for the writer
	last    []byte        // the final event, waiting for the writer
	dropped int           // notifications dropped: the queue was full
	wake    chan struct{} // tells the writer there is something to write
	stop    chan struct{} // ends the writer
	done    chan struct{} // closed when the writer has ended
}

// queued is one notification waiting: its event, and its progress token
// when it is a progress notification.
type queued struct {
	event []byte
	token string
}

func newStream(h *Handler, w http.ResponseWriter, cancel func()) *stream {
	return &stream{h: h, w: w, rc: http.NewResponseController(w), cancel: cancel}
}

// reserve takes a stream slot ahead of start, for a response that will be
// held open (a GET stream, subscriptions/listen). It reports false when
// MaxStreams are open.
func (s *stream) reserve() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.slot {
		s.slot = s.h.takeSlot()
	}
	return s.slot
}

// start begins the SSE response; s.mu is held. held says the stream may
// stay open: it then needs a slot and gets keep-alive comments. A stream
// that only carries the final response needs neither. The headers are
// written by the writer goroutine started here, not by the caller.
func (s *stream) start(held bool) bool {
	if s.started {
		return true
	}
	if s.closed {
		return false
	}
	if held && !s.slot {
		if s.slot = s.h.takeSlot(); !s.slot {
			return false
		}
	}
	s.started = true
	s.wake, s.stop, s.done = make(chan struct{}, 1), make(chan struct{}), make(chan struct{})
	var every time.Duration
	if held {
		every = s.h.keepAlive
	}
	go s.writer(every)
	return true
}

// hold starts the stream now, to be held open (GET).
func (s *stream) hold() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.start(true)
}

// signal wakes the writer; s.mu is held.
func (s *stream) signal() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// writer writes the headers, then what is queued, keep-alive comments
// every keepAlive (0: none) while nothing is, and the final event, after
// which it returns. It returns too when end stops it or a write fails.
func (s *stream) writer(keepAlive time.Duration) {
	defer close(s.done)
	var tick <-chan time.Time
	if keepAlive > 0 {
		t := time.NewTicker(keepAlive)
		defer t.Stop()
		tick = t.C
	}
	hd := s.w.Header()
	hd.Set("Content-Type", "text/event-stream")
	hd.Set("Cache-Control", "no-cache")
	hd.Set("X-Accel-Buffering", "no")
	s.w.WriteHeader(http.StatusOK)
	if !s.flush(nil) {
		return
	}
	for {
		s.mu.Lock()
		q, last, drain := s.queue, s.last, s.drain
		s.queue, s.last = nil, nil
		s.mu.Unlock()
		for _, n := range q {
			if !s.flush(n.event) {
				return
			}
		}
		if last != nil {
			if s.flush(last) {
				// Left on the connection, the deadline would cut off
				// the next request it carries.
				s.rc.SetWriteDeadline(time.Time{})
			}
			return
		}
		if len(q) > 0 {
			continue // more may have come meanwhile
		}
		if drain {
			return
		}
		select {
		case <-s.stop:
			return
		case <-s.wake:
		case <-tick:
			if !s.flush([]byte(": keep-alive\n\n")) {
				return
			}
		}
	}
}

// flush writes b and flushes within the write timeout (where the
// ResponseWriter supports deadlines). When that fails the client is
// gone or too far behind: the stream is ended, its request cancelled,
// and false returned.
func (s *stream) flush(b []byte) bool {
	s.rc.SetWriteDeadline(time.Now().Add(s.h.writeTimeout))
	var err error
	if len(b) > 0 {
		_, err = s.w.Write(b)
	}
	if err == nil {
		err = s.rc.Flush()
	}
	if err == nil {
		return true
	}
	s.mu.Lock()
	s.closed = true
	s.queue, s.last = nil, nil
	s.mu.Unlock()
	s.h.log.Info("an SSE stream was ended: its client did not take a write in time, or left", "timeout", s.h.writeTimeout, "err", err)
	if s.cancel != nil {
		s.cancel()
	}
	return false
}

func event(data []byte) []byte {
	b := make([]byte, 0, len(data)+24)
	b = append(b, "event: message\ndata: "...)
	b = append(b, data...)
	return append(b, "\n\n"...)
}

// notify is the edge's sink: it queues a notification, starting the
// stream if needed, and never waits on the client (see [StreamQueue]).
// When no stream slot is free the notification is dropped and the request
// is answered with JSON as if it had none.
func (s *stream) notify(m *jsonrpc.Message) {
	b, err := jsonrpc.Encode(m)
	if err != nil {
		return
	}
	n := queued{event: event(b)}
	if m.Method == mcp.MethodNotificationsProgress {
		var p struct {
			Token json.RawMessage `json:"progressToken"`
		}
		if json.Unmarshal(m.Params, &p) == nil && len(p.Token) > 0 {
			n.token = string(p.Token)
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed || !s.start(true) {
		return
	}
	if m.IsRequest() {
		// A question to the client (the edge's Ask) is never coalesced
		// or dropped: something waits for its answer. The edge bounds
		// how many a session has waiting (edge.MaxPendingAsks).
		s.queue = append(s.queue, n)
		s.signal()
		return
	}
	for i, o := range s.queue {
		if len(s.queue) < StreamBehind {
			break
		}
		if (n.token != "" && o.token == n.token) || bytes.Equal(o.event, n.event) {
			// The latest progress for a token is all a client needs; an
			// identical notification (a list change) says nothing new.
			// Either takes the place of the one queued, at the end.
			s.queue = append(append(s.queue[:i:i], s.queue[i+1:]...), n)
			s.signal()
			return
		}
	}
	if len(s.queue) >= StreamQueue {
		s.dropped++
		if s.dropped == 1 {
			s.h.log.Info("an SSE stream's client is behind; notifications are dropped", "queue", StreamQueue)
		}
		return
	}
	s.queue = append(s.queue, n)
	s.signal()
}

// final sends the last event (a response, or a batch of them) on the
// stream, starting it if needed, and closes it in the same step, so that
// no notification can follow the response. It waits for the event to be
// written (or the write to fail), then ends the stream.
func (s *stream) final(data []byte) {
	s.mu.Lock()
	wait := false
	if !s.closed && s.start(false) {
		s.last = event(data)
		s.signal()
		wait = true
	}
	s.closed = true
	done := s.done
	s.mu.Unlock()
	if wait {
		<-done
	}
	s.end()
}

// flushQueue ends a stream that has begun and gets no final event (a
// cancelled request is answered nothing): what is still queued is written
// first, as the final event would be preceded by it, so that a
// notification sent just before (a question's notifications/cancelled)
// is not lost with the stream. It waits for those writes (each within the
// write timeout), then ends the stream.
func (s *stream) flushQueue() {
	s.mu.Lock()
	wait := s.started && !s.closed
	if wait {
		s.drain = true
		s.signal()
	}
	s.closed = true
	done := s.done
	s.mu.Unlock()
	if wait {
		<-done
	}
	s.end()
}

// claim decides how the request is answered: if the SSE stream has begun
// it reports true; otherwise it closes the stream, so that a late
// notification cannot begin one while the caller writes a plain response.
func (s *stream) claim() (started bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.started {
		s.closed = true
	}
	return s.started
}

// end stops the stream: nothing is written after it returns (it waits
// for a write in progress, at most the write timeout), the writer is gone
// and the slot is given back. It may be called more than once.
func (s *stream) end() {
	s.mu.Lock()
	s.closed = true
	if s.ended {
		s.mu.Unlock()
		return
	}
	s.ended = true
	stop, done, slot := s.stop, s.done, s.slot
	s.slot = false
	s.queue, s.last = nil, nil
	s.mu.Unlock()
	if stop != nil {
		close(stop)
		<-done
	}
	if slot {
		s.h.giveSlot()
	}
}
