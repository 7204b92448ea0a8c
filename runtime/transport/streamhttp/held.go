package streamhttp

import (
	"context"
	"net/http"
	"strconv"
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

// takeOver hijacks the stream's connection once nothing is being written,
// so that every later write goes to it as a chunk. It reports false, and
// leaves the stream as it was, when the connection cannot be taken over.
func (s *stream) takeOver(r *http.Request) bool {
	if r.ProtoMajor != 1 || r.ProtoMinor < 1 {
		return false // only HTTP/1.1 frames the response in chunks
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
	s.raw, s.w, s.rc = conn, nil, nil
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
// result). The edge's listen runs in a goroutine of its own; once the
// acknowledgement is written the connection is taken over and this
// returns, leaving that goroutine to end the stream. Until then, or when
// the connection cannot be taken over, it is served as any request.
func (h *Handler) serveListen(w *response, r *http.Request, acc accepts, es *edge.Session, in edge.In) {
	// A connection taken over is closed after the stream's last chunk: the
	// client must know not to send its next request on it, which would be
	// lost (net/http retries no POST). TestEndedListenConnectionNotReused.
	if r.ProtoMajor == 1 && r.ProtoMinor >= 1 {
		w.Header().Set("Connection", "close")
	}
	ctx, end := context.WithCancelCause(context.WithoutCancel(r.Context()))
	gone := func() { end(edge.ErrClientGone) }
	st := newStream(h, w, gone)
	if !st.reserve() {
		end(nil)
		h.log.Warn("MaxStreams reached; a subscriptions/listen was refused", "limit", cap(h.streams))
		unavailable(w, in.Msg.ID, "too many open streams; try again later")
		return
	}
	stopClient := context.AfterFunc(r.Context(), gone)
	stopHold := context.AfterFunc(h.hold, func() { end(errClosing) })
	cleanup := func() { stopHold(); st.end(); end(nil) }

	handled := make(chan edge.Reply, 1)
	decided := make(chan bool, 1)
	go func() {
		reply := h.e.Handle(ctx, es, in, st.notify)
		handled <- reply
		if !<-decided {
			return
		}
		defer h.taken.Done()
		// Taken over: this goroutine ends the stream, the final event
		// and the response's last chunk, or nothing for a client gone.
		if reply.Msg != nil {
			if b, err := jsonrpc.Encode(reply.Msg); err == nil {
				st.final(b)
			}
		}
		cleanup()
		st.raw.Close()
	}()
	serve := func(reply edge.Reply) {
		decided <- false
		defer cleanup()
		defer stopClient()
		h.answer(w, st, acc, reply.Msg, statusOr(reply.Status, http.StatusOK))
	}
	select {
	case reply := <-handled: // ended before it was held (or refused)
		serve(reply)
		return
	case <-st.firstEvent():
	}
	if !st.takeOver(r) {
		serve(<-handled)
		return
	}
	// net/http cancels the request's context when this returns: the
	// client's leaving is the reader's to notice from now on.
	stopClient()
	go st.watchGone(gone)
	h.taken.Add(1)
	decided <- true
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
