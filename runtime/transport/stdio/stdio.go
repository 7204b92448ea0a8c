// Package stdio serves MCP over standard input and output: one JSON-RPC
// message per line, nothing but protocol on stdout (logs go to stderr).
package stdio

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/mcpx-dev/mcpx/generated/mcp"
	"github.com/mcpx-dev/mcpx/runtime/budget"
	"github.com/mcpx-dev/mcpx/runtime/edge"
	"github.com/mcpx-dev/mcpx/runtime/jsonrpc"
)

// Options are the limits of one stdio connection. The zero value uses the
// defaults named on each field.
type Options struct {
	// MaxMessage is the longest line accepted, in bytes; 0 means 16 MiB.
	// A longer line is answered with -32700 and skipped.
	MaxMessage int
	// MaxInFlight is how many requests run at once; 0 means 64. Reading
	// pauses while that many are running.
	MaxInFlight int
	// MaxListens is how many subscriptions/listen streams may be open at
	// once; 0 means 1024. They hold no MaxInFlight slot; one beyond is
	// answered with -32603.
	MaxListens int
	// Drain is how long requests still running when the input ends may
	// take to finish and be answered; 0 means 2s. Then they are cancelled:
	// a server SHOULD exit promptly on EOF (stdio transport page).
	Drain time.Duration
	// WriteGrace is how long, once Serve is stopping (ctx done, or the
	// input ended and Drain passed), what is still to be written may take;
	// 0 means 1s. Then writes are abandoned: a client that does not read
	// its output cannot hold mcpx's shutdown.
	WriteGrace time.Duration
}

// Serve reads messages from r and writes answers to w until r ends, a read
// fails, or ctx is done. On the way out it cancels the requests still
// running (each is answered with an error saying the server is shutting
// down) and waits for them, so nothing is written after it returns, but
// for a write given up after WriteGrace, which may end later.
func Serve(ctx context.Context, e *edge.Edge, r io.Reader, w io.Writer, opt Options) error {
	if opt.MaxMessage <= 0 {
		opt.MaxMessage = 16 << 20
	}
	if opt.MaxInFlight <= 0 {
		opt.MaxInFlight = 64
	}
	if opt.MaxListens <= 0 {
		opt.MaxListens = 1024
	}
	if opt.Drain <= 0 {
		opt.Drain = 2 * time.Second
	}
	if opt.WriteGrace <= 0 {
		opt.WriteGrace = time.Second
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	c := &conn{e: e, w: w, sess: new(edge.Session), slots: make(chan struct{}, opt.MaxInFlight),
		listens: make(chan struct{}, opt.MaxListens),
		out:     make(chan line), abandon: make(chan struct{}), quit: make(chan struct{})}
	go c.writer()
	defer c.sess.End() // the one client session ends with the connection
	defer close(c.quit)
	defer func() {
		if c.detach != nil {
			c.detach()
		}
	}()
	defer c.wg.Wait()
	defer c.listening.Wait()
	defer context.AfterFunc(ctx, c.stopListens)() // before Wait: cancel runs it
	defer cancel()
	// Once stopping, the writes get WriteGrace; then they are abandoned,
	// the one being written too (it may never end: an unread pipe).
	go func() {
		select {
		case <-ctx.Done():
		case <-c.quit:
			return
		}
		t := time.NewTimer(opt.WriteGrace)
		defer t.Stop()
		select {
		case <-t.C:
			close(c.abandon)
		case <-c.quit:
		}
	}()

	// Lines are read in their own goroutine, so that ctx ending (SIGINT)
	// stops Serve even while the client keeps stdin open and silent.
	lines := make(chan readResult)
	go func() {
		br := bufio.NewReaderSize(r, 64<<10)
		b := budget.Default()
		for {
			// A large line is counted in the large-message budget as it
			// is read (waiting for room), until it is answered.
			h := b.Hold()
			line, err := budget.ReadLine(ctx, br, opt.MaxMessage, h)
			select {
			case lines <- readResult{line, h, err}:
			case <-ctx.Done():
				h.Release()
				return
			}
			if err != nil && !errors.Is(err, budget.ErrTooLong) && !errors.As(err, new(*budget.Refused)) {
				return
			}
		}
	}()
	for {
		var in readResult
		select {
		case <-ctx.Done():
			return nil
		case in = <-lines:
		}
		if errors.Is(in.err, budget.ErrTooLong) {
			c.write(jsonrpc.ErrorResponse(nil, &jsonrpc.Error{Code: jsonrpc.ParseError, Message: fmt.Sprintf("the message is longer than %d bytes", opt.MaxMessage)}))
			continue
		}
		var refused *budget.Refused
		if errors.As(in.err, &refused) {
			c.write(jsonrpc.ErrorResponse(refused.ID, &jsonrpc.Error{Code: jsonrpc.InternalError, Message: refused.Err.Error() + "; the message was not read"}))
			continue
		}
		if len(bytes.TrimSpace(in.line)) > 0 {
			c.handle(ctx, in.line, in.hold)
		} else {
			in.hold.Release()
		}
		if in.err != nil {
			if errors.Is(in.err, io.EOF) {
				c.drain(ctx, opt.Drain) // `printf '...' | mcpx stdio` still gets its answers
				return nil
			}
			return in.err
		}
	}
}

type readResult struct {
	line []byte
	hold *budget.Hold // what the line holds of the large-message budget
	err  error
}

// drain waits up to d for the running requests, unless ctx ends first.
// The open listens are not waited for: they end when Serve cancels them.
func (c *conn) drain(ctx context.Context, d time.Duration) {
	done := make(chan struct{})
	go func() { c.wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-ctx.Done():
	case <-time.After(d):
	}
}

type conn struct {
	e         *edge.Edge
	detach    func() // from the edge's Attach, once initialized
	sess      *edge.Session
	slots     chan struct{}
	listens   chan struct{}  // one token per open subscriptions/listen
	listening sync.WaitGroup // the listens: the drain at EOF does not wait for them
	lmu       sync.Mutex
	open      map[*heldListen]bool // the held listens, to end when Serve stops
	stopping  bool                 // Serve stops: a listen held from now on ends at once
	wg        sync.WaitGroup

	mu sync.Mutex // serialises writes
	w  io.Writer

	out     chan line     // to the writer goroutine
	abandon chan struct{} // closed: writes are given up (see WriteGrace)
	quit    chan struct{} // closed when Serve returns: the writer ends

	// From a legacy initialize until the client's notifications/initialized,
	// no notification is written (lifecycle: the client's initialized
	// ends the handshake): list changes are dropped, since the client
	// lists once initialized anyway, and the rest (log messages, progress)
	// are held, in order, up to maxHeld, then written when it arrives.
	// 2026-07-28 requests have no handshake: their notifications are
	// written as they come.
	hmu     sync.Mutex
	holding bool
	held    []*jsonrpc.Message
}

// maxHeld bounds the notifications held for notifications/initialized; a
// client that keeps them waiting loses the ones beyond.
const maxHeld = 64

// notify is the sink of a legacy session: it writes m, or holds or drops
// it during the handshake.
func (c *conn) notify(m *jsonrpc.Message) {
	c.hmu.Lock()
	defer c.hmu.Unlock()
	if c.holding {
		if !isListChanged(m.Method) && len(c.held) < maxHeld {
			c.held = append(c.held, m)
		}
		return
	}
	c.write(m)
}

// hold starts holding notifications (an initialize is being served).
func (c *conn) hold() {
	c.hmu.Lock()
	c.holding = true
	c.hmu.Unlock()
}

// release writes what was held and stops holding.
func (c *conn) release() {
	c.hmu.Lock()
	defer c.hmu.Unlock()
	for _, m := range c.held {
		c.write(m)
	}
	c.holding, c.held = false, nil
}

func isListChanged(method string) bool {
	switch method {
	case mcp.MethodNotificationsToolsListChanged, mcp.MethodNotificationsPromptsListChanged,
		mcp.MethodNotificationsResourcesListChanged:
		return true
	}
	return false
}

func (c *conn) write(m *jsonrpc.Message) {
	buf, err := jsonrpc.Encode(m)
	if err == nil {
		c.writeLine(buf)
	}
}

// writeBatch writes the responses to a batch as one array.
func (c *conn) writeBatch(msgs []*jsonrpc.Message) {
	buf, err := jsonrpc.EncodeBatch(msgs)
	if err == nil {
		c.writeLine(buf)
	}
}

// line is one line for the writer; done is closed once it is written.
type line struct {
	b    []byte
	done chan struct{}
}

// writer writes the lines, one at a time, until Serve returns. Writing
// here rather than in the caller lets a caller give up a write that does
// not end (a client that does not read): see WriteGrace.
func (c *conn) writer() {
	for {
		select {
		case l := <-c.out:
			c.w.Write(l.b)
			close(l.done)
		case <-c.quit:
			return
		}
	}
}

// writeLine writes buf as a line, and returns once it is written or
// writes are abandoned.
func (c *conn) writeLine(buf []byte) {
	l := line{append(buf, '\n'), make(chan struct{})}
	c.mu.Lock()
	defer c.mu.Unlock()
	select {
	case c.out <- l:
	case <-c.abandon:
		return
	}
	select {
	case <-l.done:
	case <-c.abandon:
	}
}

// handle decodes one line and serves what it holds. Requests run in their
// own goroutines so that a notifications/cancelled read later can reach them.
func (c *conn) handle(ctx context.Context, line []byte, hold *budget.Hold) {
	// What the line holds of the large-message budget, and the large
	// answers read for it, count until it is answered.
	sc := budget.WithScope(ctx)
	ctx, answered := context.Context(sc), sc.Release
	hold.Keep(ctx)
	async := false
	defer func() {
		if !async {
			answered()
		}
	}()
	// Before initialize, only a client that believes in batches sends one.
	batchRev := edge.Classify(nil, edge.Seen{Default: edge.Headerless}).Revision(c.sess)
	msgs, errs, batch := jsonrpc.Decode(line, edge.AllowsBatch(batchRev))
	def := edge.Oldest
	if batch {
		def = edge.Headerless
	}
	if !batch {
		if errs[0] != nil {
			var id json.RawMessage
			if msgs[0] != nil {
				id = msgs[0].ID
			}
			c.write(jsonrpc.ErrorResponse(id, errs[0]))
			return
		}
		m := msgs[0]
		if !m.IsRequest() {
			c.e.Handle(ctx, c.sess, in(m, def), nil)
			if m.Method == mcp.MethodNotificationsInitialized {
				c.release()
			}
			return
		}
		if m.Method == mcp.MethodInitialize {
			// Served before the next line is read: what it negotiates
			// governs every later request. A legacy one writes nothing
			// but its response until the client's notifications/initialized.
			sink, legacy := c.write, !in(m, def).Class.Modern()
			if legacy {
				c.hold()
				sink = c.notify
			}
			reply := c.e.Handle(ctx, c.sess, in(m, def), sink)
			if reply.Msg != nil {
				c.write(reply.Msg)
			}
			if legacy && !reply.Initialized {
				c.release() // no handshake under way
			}
			if reply.Initialized && c.detach == nil {
				// stdout is the session's stream: list changes may go there.
				c.detach = c.e.Attach(c.sess, c.notify)
			}
			return
		}
		serve := func() {
			defer answered()
			if r := c.serve(ctx, m, def); r != nil {
				c.write(r)
			}
		}
		if m.Method == mcp.MethodSubscriptionsListen && in(m, def).Class.Modern() {
			async = c.runHeld(ctx, m, def, answered)
			return
		}
		async = c.run(ctx, serve)
		return
	}
	async = c.run(ctx, func() { defer answered(); c.batch(ctx, msgs, errs, def) })
}

// in is m classified by the edge: stdio has no header, so _meta, the
// session and def decide.
func in(m *jsonrpc.Message, def mcp.Revision) edge.In {
	return edge.In{Msg: m, Class: edge.Classify(m, edge.Seen{Default: def})}
}

// run runs f in its own goroutine once a slot is free, and reports
// whether it did (not when ctx ended first).
func (c *conn) run(ctx context.Context, f func()) bool {
	select {
	case c.slots <- struct{}{}:
	case <-ctx.Done():
		return false
	}
	c.wg.Add(1)
	go func() {
		defer func() { <-c.slots; c.wg.Done() }()
		f()
	}()
	return true
}

// runHeld serves a subscriptions/listen without a request slot: a listen
// is held open until someone ends it, and MaxInFlight of them would
// otherwise stop every later request being read. They are bounded on
// their own (MaxListens); one beyond is answered with an error at once.
// The edge holds it without a goroutine (HandleHeld); it is set up in a
// goroutine of its own, which returns once the listen is acknowledged.
// It reports whether it runs.
func (c *conn) runHeld(ctx context.Context, m *jsonrpc.Message, def mcp.Revision, answered func()) bool {
	if !tryAcquire(c.listens) {
		c.write(jsonrpc.ErrorResponse(m.ID, &jsonrpc.Error{Code: jsonrpc.InternalError, Message: fmt.Sprintf("too many open subscriptions/listen streams on this connection (at most %d); end one first", cap(c.listens))}))
		return false
	}
	c.listening.Add(1)
	hl := &heldListen{}
	finish := func(rep edge.Reply) {
		c.lmu.Lock()
		hl.ended = true
		delete(c.open, hl)
		c.lmu.Unlock()
		if rep.Msg != nil {
			c.write(rep.Msg)
		}
		<-c.listens
		c.listening.Done()
	}
	go func() {
		defer answered()
		reply, stop := c.e.HandleHeld(ctx, c.sess, in(m, def), c.write, finish)
		if stop == nil {
			finish(reply)
			return
		}
		c.lmu.Lock()
		if hl.ended { // ended already
			c.lmu.Unlock()
			return
		}
		hl.stop = stop
		stopping := c.stopping
		if !stopping {
			if c.open == nil {
				c.open = map[*heldListen]bool{}
			}
			c.open[hl] = true
		}
		c.lmu.Unlock()
		if stopping {
			stop(context.Canceled)
		}
	}()
	return true
}

// heldListen is one open listen of the connection: its stop, until it
// has ended.
type heldListen struct {
	stop  func(error)
	ended bool
}

// stopListens ends the open listens: Serve is stopping (mcpx ends them,
// with their cancellation and result).
func (c *conn) stopListens() {
	c.lmu.Lock()
	c.stopping = true
	open := make([]*heldListen, 0, len(c.open))
	for hl := range c.open {
		open = append(open, hl)
	}
	c.lmu.Unlock()
	for _, hl := range open {
		hl.stop(context.Canceled)
	}
}

func tryAcquire(sem chan struct{}) bool {
	select {
	case sem <- struct{}{}:
		return true
	default:
		return false
	}
}

func (c *conn) serve(ctx context.Context, m *jsonrpc.Message, def mcp.Revision) *jsonrpc.Message {
	// On shutdown a request still running gets its answer or an error: the
	// output is open until Serve returns, and Serve waits for this.
	sink := c.notify
	if in(m, def).Class.Modern() {
		sink = c.write // no handshake
	}
	reply := c.e.Handle(ctx, c.sess, in(m, def), sink)
	if ctx.Err() != nil && reply.Msg != nil && reply.Msg.Error != nil {
		// Serve is stopping, which cancelled it: say so.
		return jsonrpc.ErrorResponse(m.ID, &jsonrpc.Error{Code: jsonrpc.InternalError, Message: "the server is shutting down; the request was not finished"})
	}
	return reply.Msg
}

// batch serves the members of a batch one after another (2025-03-26
// initialize must not be batched, and order is the client's) and answers
// with one array of the responses, or nothing if all were notifications.
func (c *conn) batch(ctx context.Context, msgs []*jsonrpc.Message, errs []*jsonrpc.Error, def mcp.Revision) {
	var out []*jsonrpc.Message
	for i, m := range msgs {
		if refusal := edge.RefuseBatchMember(m, errs[i]); refusal != nil {
			out = append(out, refusal)
			continue
		}
		if !m.IsRequest() {
			c.e.Handle(ctx, c.sess, in(m, def), nil)
			if m.Method == mcp.MethodNotificationsInitialized {
				c.release()
			}
		} else if r := c.serve(ctx, m, def); r != nil {
			out = append(out, r)
		}
	}
	if len(out) > 0 {
		c.writeBatch(out)
	}
}
