package streamhttp

import (
	"net/http"
	"sync"
	"time"

	"github.com/mcpx-dev/mcpx/runtime/jsonrpc"
)

// stream is one response that may become an SSE stream: it starts on the
// first event, so a request that produces no notifications is answered
// with plain JSON. It is safe for concurrent use: the edge's sink may be
// called from any goroutine a handler starts (even after the request is
// answered), and the keep-alive ticker writes too. Once closed, nothing
// more is written on it.
type stream struct {
	h  *Handler
	w  http.ResponseWriter
	rc *http.ResponseController

	mu      sync.Mutex
	started bool          // the SSE response has begun
	closed  bool          // nothing more may be written or started
	ended   bool          // end has run
	slot    bool          // holds one of Handler.streams
	stop    chan struct{} // ends the keep-alive goroutine
	done    chan struct{} // closed when it has ended
}

func newStream(h *Handler, w http.ResponseWriter) *stream {
	return &stream{h: h, w: w, rc: http.NewResponseController(w)}
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
// that only carries the final response needs neither.
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
	hd := s.w.Header()
	hd.Set("Content-Type", "text/event-stream")
	hd.Set("Cache-Control", "no-cache")
	hd.Set("X-Accel-Buffering", "no")
	s.w.WriteHeader(http.StatusOK)
	s.rc.Flush()
	s.started = true
	if held {
		s.stop, s.done = make(chan struct{}), make(chan struct{})
		go s.keepAlive(s.h.keepAlive)
	}
	return true
}

// hold starts the stream now, to be held open (GET).
func (s *stream) hold() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.start(true)
}

func (s *stream) keepAlive(every time.Duration) {
	defer close(s.done)
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-s.stop:
			return
		case <-t.C:
			s.mu.Lock()
			if !s.closed {
				s.write([]byte(": keep-alive\n\n"))
			}
			s.mu.Unlock()
		}
	}
}

// write writes and flushes; s.mu is held.
func (s *stream) write(b []byte) {
	if _, err := s.w.Write(b); err == nil {
		s.rc.Flush()
	}
}

func event(data []byte) []byte {
	b := make([]byte, 0, len(data)+24)
	b = append(b, "event: message\ndata: "...)
	b = append(b, data...)
	return append(b, "\n\n"...)
}

// notify is the edge's sink: it sends a notification, starting the stream
// if needed. When no stream slot is free the notification is dropped and
// the request is answered with JSON as if it had none.
func (s *stream) notify(m *jsonrpc.Message) {
	b, err := jsonrpc.Encode(m)
	if err != nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed || !s.start(true) {
		return
	}
	s.write(event(b))
}

// final sends the last event (a response, or a batch of them) on the
// stream, starting it if needed, and closes it in the same step, so that
// no notification can follow the response. The stream is then ended.
func (s *stream) final(data []byte) {
	s.mu.Lock()
	if !s.closed && s.start(false) {
		s.write(event(data))
	}
	s.closed = true
	s.mu.Unlock()
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

// end stops the stream: nothing is written after it returns, the
// keep-alive goroutine is gone and the slot is given back. It may be
// called more than once.
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
	s.mu.Unlock()
	if stop != nil {
		close(stop)
		<-done
	}
	if slot {
		s.h.giveSlot()
	}
}
