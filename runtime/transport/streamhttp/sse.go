package streamhttp

import (
	"bytes"
	"encoding/json"
	"net"
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
// started, only its pump writes on it, each write within
// Options.WriteTimeout; a client that does not take a write for that long
// has its stream ended and its request cancelled. Once closed, nothing
// more is queued on it.
//
// The pump is a goroutine that runs only while there is something to
// write and returns once the queue is empty, and a held stream's
// keep-alives come from one timer for all of them (keepAlives): an idle
// stream costs no goroutine and no timer of its own, which is most of
// what 1,000 idle listen streams would otherwise cost (BENCHMARKS.md).
type stream struct {
	h      *Handler
	w      http.ResponseWriter
	rc     http.ResponseController // part of the stream: one allocation less
	cancel func()                  // ends the request whose response this is; may be nil

	mu      sync.Mutex
	started bool          // the SSE response has begun
	closed  bool          // nothing more may be queued or started
	ended   bool          // end has run: the pump stops
	slot    bool          // holds one of Handler.streams
	held    bool          // in Handler.keepAlives
	headers bool          // the pump has taken the headers to write
	queue   []queued      // notifications waiting for the pump
	last    []byte        // the final event, waiting for the pump
	beat    bool          // a keep-alive comment is due
	dropped int           // notifications dropped: the queue was full
	pumping bool          // a pump runs
	pumped  chan struct{} // closed when the running pump returns
	first   chan struct{} // closed once the first event is written (firstEvent)
	wrote   bool          // the first event is written
	raw     net.Conn      // the connection, once taken over (held.go)
	gone    bool          // a failed write cancelled the request (ok)
	// lastOnConn: the response is the connection's last (a listen's that
	// may be taken over, held.go); set before the stream starts.
	lastOnConn bool
}

// firstEvent is closed once the stream's first event has been written.
func (s *stream) firstEvent() <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.first == nil {
		s.first = make(chan struct{})
		if s.wrote {
			close(s.first)
		}
	}
	return s.first
}

// written records that an event is on the wire.
func (s *stream) written() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.wrote {
		s.wrote = true
		if s.first != nil {
			close(s.first)
		}
	}
}

// cancelled reports whether a failed write cancelled the stream's
// request.
func (s *stream) cancelled() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.gone
}

// queued is one notification waiting: its event, and its progress token
// when it is a progress notification.
type queued struct {
	event []byte
	token string
}

func newStream(h *Handler, w http.ResponseWriter, cancel func()) *stream {
	s := new(stream)
	s.init(h, w, cancel)
	return s
}

// init makes the zero stream s the one newStream returns.
func (s *stream) init(h *Handler, w http.ResponseWriter, cancel func()) {
	s.h, s.w, s.cancel = h, w, cancel
	s.rc = *http.NewResponseController(w)
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
// written by the pump started here, not by the caller.
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
	if held {
		s.held = true
		s.h.beats.add(s)
	}
	s.signal()
	return true
}

// hold starts the stream now, to be held open (GET).
func (s *stream) hold() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.start(true)
}

// signal has the pump write what is waiting, starting one if none runs;
// s.mu is held.
func (s *stream) signal() {
	if s.pumping || s.ended || !s.started {
		return
	}
	s.pumping = true
	s.pumped = make(chan struct{})
	go s.pump()
}

// beat queues a keep-alive comment on an idle held stream (keepAlives).
func (s *stream) keepAlive() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed || len(s.queue) > 0 || s.last != nil {
		return
	}
	s.beat = true
	s.signal()
}

// pump writes the headers (the first time), then what is queued, a due
// keep-alive, and the final event, after which the stream is done. It
// returns when nothing is left to write, when end stops it, or when a
// write fails.
func (s *stream) pump() {
	// The pump ends in the same critical section that finds nothing left
	// to write, so that what is queued after it starts a new one.
	done := func() {
		s.pumping = false
		close(s.pumped)
	}
	stopped := false
	defer func() {
		if !stopped {
			s.mu.Lock()
			done()
			s.mu.Unlock()
		}
	}()
	for {
		s.mu.Lock()
		first := !s.headers
		s.headers = true
		q, last, beat := s.queue, s.last, s.beat
		s.queue, s.last, s.beat = nil, nil, false
		if s.ended || !first && len(q) == 0 && last == nil && !beat {
			done()
			stopped = true
			s.mu.Unlock()
			return
		}
		s.mu.Unlock()
		if first {
			hd := s.w.Header()
			hd.Set("Content-Type", "text/event-stream")
			hd.Set("Cache-Control", "no-cache")
			hd.Set("X-Accel-Buffering", "no")
			if s.lastOnConn {
				hd.Set("Connection", "close")
			}
			s.w.WriteHeader(http.StatusOK)
			if !s.flush(nil) {
				return
			}
		}
		for _, n := range q {
			if !s.flush(n.event) {
				return
			}
		}
		if len(q) > 0 {
			s.written()
		}
		if beat && len(q) == 0 && !s.flush([]byte(": keep-alive\n\n")) {
			return
		}
		if last != nil {
			if s.raw != nil {
				s.flushRaw(last, true) // and the response's last chunk
				return
			}
			if s.flush(last) {
				// Left on the connection, the deadline would cut off
				// the next request it carries.
				s.rc.SetWriteDeadline(time.Time{})
			}
			return
		}
	}
}

// keepAlives sends every held stream a keep-alive comment each interval,
// from one timer (no goroutine waits for it), armed while any stream is
// held.
type keepAlives struct {
	every time.Duration
	mu    sync.Mutex
	set   map[*stream]struct{}
	timer *time.Timer
}

func (k *keepAlives) add(s *stream) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.set == nil {
		k.set = map[*stream]struct{}{}
	}
	k.set[s] = struct{}{}
	if k.timer == nil {
		k.timer = time.AfterFunc(k.every, k.tick)
	}
}

func (k *keepAlives) remove(s *stream) {
	k.mu.Lock()
	defer k.mu.Unlock()
	delete(k.set, s)
	if len(k.set) == 0 && k.timer != nil {
		k.timer.Stop()
		k.timer = nil
	}
}

// tick gives each held stream its keep-alive, without k.mu held (a
// stream's lock is taken inside it, and end takes them the other way).
func (k *keepAlives) tick() {
	k.mu.Lock()
	if k.timer == nil {
		k.mu.Unlock()
		return
	}
	streams := make([]*stream, 0, len(k.set))
	for s := range k.set {
		streams = append(streams, s)
	}
	k.timer.Reset(k.every)
	k.mu.Unlock()
	for _, s := range streams {
		s.keepAlive()
	}
}

// flush writes b and flushes within the write timeout (where the
// ResponseWriter supports deadlines). When that fails the client is
// gone or too far behind: the stream is ended, its request cancelled,
// and false returned.
func (s *stream) flush(b []byte) bool {
	if s.raw != nil {
		return s.flushRaw(b, false)
	}
	s.rc.SetWriteDeadline(time.Now().Add(s.h.writeTimeout))
	var err error
	if len(b) > 0 {
		_, err = s.w.Write(b)
	}
	if err == nil {
		err = s.rc.Flush()
	}
	return s.ok(err)
}

// flushRaw is flush on a taken-over connection (held.go).
func (s *stream) flushRaw(b []byte, last bool) bool {
	return s.ok(s.writeRaw(b, last))
}

// ok reports whether a write went well (err nil); when it failed the
// stream is ended and its request cancelled.
func (s *stream) ok(err error) bool {
	if err == nil {
		return true
	}
	s.mu.Lock()
	s.closed = true
	s.gone = s.gone || s.cancel != nil
	s.queue, s.last, s.beat = nil, nil, false
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
	var wait chan struct{}
	if !s.closed && s.start(false) {
		s.last = event(data)
		s.signal()
		wait = s.pumped // the pump that runs now takes last before it returns
	}
	s.closed = true
	s.mu.Unlock()
	if wait != nil {
		<-wait
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
// for a write in progress, at most the write timeout), the pump is gone
// and the slot is given back. It may be called more than once.
func (s *stream) end() {
	s.mu.Lock()
	s.closed = true
	if s.ended {
		s.mu.Unlock()
		return
	}
	s.ended = true
	var wait chan struct{}
	if s.pumping {
		wait = s.pumped
	}
	slot, held := s.slot, s.held
	s.slot = false
	s.queue, s.last = nil, nil
	s.mu.Unlock()
	if held {
		s.h.beats.remove(s)
	}
	if wait != nil {
		<-wait
	}
	if slot {
		s.h.giveSlot()
	}
}

// flushQueue ends a stream that has begun and gets no final event (a
// cancelled request is answered nothing): what is still queued is written
// first, as the final event would be preceded by it, so that a
// notification sent just before (a question's notifications/cancelled)
// is not lost with the stream. It waits for the pump to write them (each
// within the write timeout), then ends the stream.
func (s *stream) flushQueue() {
	s.mu.Lock()
	var wait chan struct{}
	if s.started && !s.closed {
		s.signal()
		if s.pumping {
			wait = s.pumped
		}
	}
	s.closed = true
	s.mu.Unlock()
	if wait != nil {
		<-wait
	}
	s.end()
}
