package streamhttp

import (
	"context"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/mcpx-dev/mcpx/runtime/edge"
	"github.com/mcpx-dev/mcpx/runtime/jsonrpc"
)

// A subscriptions/listen stream is held open for as long as its client
// keeps it, mostly idle. Served the usual way, an idle stream keeps
// net/http's connection goroutine (its stack grown by the request's
// handling, ~16 KB), its read and write buffers (~9 KB) and the parsed
// request. So once the acknowledgement is on the wire the connection is
// taken over (hijacked) and net/http lets all of that go: the stream's
// events are written as HTTP/1.1 chunks straight to the connection, the
// edge's listen waits in a goroutine of its own with a shallow stack, and
// a small reader notices the client leaving. Where the connection cannot
// be taken over (HTTP/2, HTTP/1.0, a test recorder) the listen is served
// the usual way. BENCHMARKS.md has the figures.

// chunk frames b as one HTTP/1.1 chunk.
func chunk(b []byte) []byte {
	out := make([]byte, 0, len(b)+16)
	out = strconv.AppendInt(out, int64(len(b)), 16)
	out = append(out, "\r\n"...)
	out = append(out, b...)
	return append(out, "\r\n"...)
}

// canTakeOver reports whether r's connection may be taken over: only
// HTTP/1.1 frames the response in chunks.
func canTakeOver(r *http.Request) bool { return r.ProtoMajor == 1 && r.ProtoMinor >= 1 }

// takeOver hijacks the stream's connection once nothing is being written,
// so that every later write goes to it as a chunk. It reports false, and
// leaves the stream as it was, when the connection cannot be taken over.
func (s *stream) takeOver(r *http.Request) bool {
	if !canTakeOver(r) {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for s.pumping { // the acknowledgement may still be being flushed
		wait := s.pumped
		s.mu.Unlock()
		<-wait
		s.mu.Lock()
	}
	if s.closed || !s.headers {
		return false
	}
	conn, _, err := s.rc.Hijack() // flushes what net/http holds; its buffers are let go
	if err != nil {
		return false
	}
	// The ResponseWriter holds net/http's connection, its buffers and the
	// parsed request: let go, they are what a held stream need not keep.
	s.raw, s.w, s.rc = conn, nil, http.ResponseController{}
	return true
}

// watchGone reads the taken-over connection until it fails, the client
// having left or the stream closed it, and then calls gone.
func (s *stream) watchGone(gone func()) {
	var b [1]byte
	for {
		if _, err := s.raw.Read(b[:]); err != nil {
			gone()
			return
		}
	}
}

// writeRaw is flush's write on a taken-over connection: b as a chunk (the
// response's end after it when last), within the write timeout.
func (s *stream) writeRaw(b []byte, last bool) error {
	s.raw.SetWriteDeadline(time.Now().Add(s.h.writeTimeout))
	var out []byte
	if len(b) > 0 {
		out = chunk(b)
	}
	if last {
		out = append(out, "0\r\n\r\n"...)
	}
	if len(out) == 0 {
		return nil
	}
	_, err := s.raw.Write(out)
	return err
}

// serveListen serves a subscriptions/listen from a client that takes
// SSE: a held stream, with a slot of MaxStreams, ended by its client
// (silently: edge.ErrClientGone) or by Close (with its cancellation and
// result). The edge holds the listen without a goroutine (HandleHeld):
// once the acknowledgement is written the connection is taken over and
// this returns, leaving only the reader that notices the client leaving;
// whoever ends the listen writes its end (held.end). When the connection
// cannot be taken over it is served as any request, this goroutine
// waiting for the end.
func (h *Handler) serveListen(w *response, r *http.Request, acc accepts, es *edge.Session, in edge.In) {
	hd := &held{h: h, ended: make(chan edge.Reply, 1)}
	st := newStream(h, w, hd.gone)
	hd.st = st
	// A taken-over connection is closed after the stream's last chunk:
	// said up front, so that a proxy keeping its connections to mcpx
	// alive does not send its next request on this one (it would get
	// the close: a 502 from httputil.ReverseProxy).
	st.lastOnConn = canTakeOver(r)
	if !st.reserve() {
		h.log.Warn("MaxStreams reached; a subscriptions/listen was refused", "limit", cap(h.streams))
		unavailable(w, in.Msg.ID, "too many open streams; try again later")
		return
	}
	// The edge keeps nothing of this context once the listen is held: it
	// is ended by stop, not by the context.
	reply, stop := h.e.HandleHeld(context.WithoutCancel(r.Context()), es, in, st.notify, hd.finish)
	if stop == nil { // ended before it was held (or refused)
		defer st.end()
		h.answer(w, st, acc, reply.Msg, statusOr(reply.Status, http.StatusOK))
		return
	}
	hd.held(stop)
	stopHold := context.AfterFunc(h.hold, func() { stop(errClosing) })
	serve := func(reply edge.Reply) {
		stopHold()
		defer st.end()
		h.answer(w, st, acc, reply.Msg, statusOr(reply.Status, http.StatusOK))
	}
	select {
	case reply := <-hd.ended: // ended before its acknowledgement was written
		serve(reply)
		return
	case <-st.firstEvent():
	}
	if !st.takeOver(r) {
		// Served the usual way: net/http's request context tells of the
		// client leaving, and this goroutine writes the end.
		stopClient := context.AfterFunc(r.Context(), hd.gone)
		reply := <-hd.ended
		stopClient()
		serve(reply)
		return
	}
	hd.stopHold = func() { stopHold() }
	go st.watchGone(hd.gone)
	h.taken.Add(1)
	hd.mu.Lock()
	hd.taken = true
	select {
	case reply := <-hd.ended: // it ended before it was taken over
		hd.mu.Unlock()
		go hd.end(reply)
	default:
		hd.mu.Unlock()
	}
}

// held is one listen the edge holds, as the transport sees it: its stop,
// and where its end goes: the channel until the connection is taken over,
// then a goroutine of the end's own that writes it.
type held struct {
	h        *Handler
	st       *stream
	mu       sync.Mutex
	stop     func(error)
	early    bool // the client left before stop was known
	taken    bool // the connection is taken over: end writes the end
	ended    chan edge.Reply
	stopHold func() // the taken-over stream's Close hook
}

// held records the listen's stop; a client that left meanwhile stops it.
func (hd *held) held(stop func(error)) {
	hd.mu.Lock()
	hd.stop = stop
	early := hd.early
	hd.mu.Unlock()
	if early {
		stop(edge.ErrClientGone)
	}
}

// gone is the client leaving (its connection failed, a write did not go
// through): the listen ends silently.
func (hd *held) gone() {
	hd.mu.Lock()
	stop := hd.stop
	hd.early = stop == nil
	hd.mu.Unlock()
	if stop != nil {
		stop(edge.ErrClientGone)
	}
}

// finish is the edge's done: the listen's end, from whoever ended it.
// It must not wait on the client, so a taken-over stream's end is
// written by a goroutine of its own.
func (hd *held) finish(reply edge.Reply) {
	hd.mu.Lock()
	defer hd.mu.Unlock()
	if hd.taken {
		go hd.end(reply)
		return
	}
	hd.ended <- reply // serveListen takes it
}

// end writes a taken-over stream's end: the final event and the
// response's last chunk, or nothing for a client gone; then closes the
// connection.
func (hd *held) end(reply edge.Reply) {
	defer hd.h.taken.Done()
	if reply.Msg != nil {
		if b, err := jsonrpc.Encode(reply.Msg); err == nil {
			hd.st.final(b)
		}
	}
	hd.stopHold()
	hd.st.end()
	hd.st.raw.Close()
}

// waitTaken waits, until ctx ends, for the streams whose connection was
// taken over to be ended (Close ends them): net/http's Shutdown does not
// know of those connections, so ListenAndServe waits here for their last
// writes.
func (h *Handler) waitTaken(ctx context.Context) {
	done := make(chan struct{})
	go func() { h.taken.Wait(); close(done) }()
	select {
	case <-done:
	case <-ctx.Done():
	}
}
