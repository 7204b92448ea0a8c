package upstream

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/mcpx-dev/mcpx/runtime/budget"
	"github.com/mcpx-dev/mcpx/runtime/edge"
	"github.com/mcpx-dev/mcpx/runtime/jsonrpc"
)

// markVar is the environment variable that marks each upstream process,
// and what it starts, as that process's (a value unique to it).
const markVar = "MCPX_UPSTREAM_PROCESS"

// procMarks numbers the upstream processes started.
var procMarks atomic.Uint64

// maxLine is the longest line accepted from an upstream's stdout.
const maxLine = 16 << 20

// maxLogLine is the longest stderr line logged whole; a longer one is
// logged cut, saying so.
const maxLogLine = 8 << 10

// stopGrace is how long a process gets between SIGTERM and SIGKILL.
const stopGrace = 2 * time.Second

// drainGrace is how long the pipes are read after the process exited.
const drainGrace = 500 * time.Millisecond

// exitWait is how long a write that found the input closed waits for the
// process to exit, to give its exit status: its pipes' drain and more.
const exitWait = drainGrace + 500*time.Millisecond

// process is an upstream running as a child process, speaking
// newline-delimited JSON-RPC on its stdin and stdout; its stderr goes to
// mcpx's log with the namespace.
type process struct {
	cmd     *exec.Cmd
	log     *slog.Logger
	noisy   *slog.Logger // rate-limited: the lines the upstream makes mcpx log
	handler handlerFunc
	out     *outbox // cancellations and replies, written off the reader within spec.sendWait

	wmu   sync.Mutex
	stdin *os.File // a pipe of our own, so that a write can time out

	name     string                 // the upstream's
	setup    string                 // what sets it up ("mcpx.setup")
	answered atomic.Bool            // it wrote a message: it started
	lastErr  atomic.Pointer[string] // its last stderr line, cut, for the log of its exit

	mu      sync.Mutex
	pending waiting
	gone    chan struct{}
	exitErr error
	stopped error // why mcpx killed it, if it did
}

func startProcess(spec Spec, log, noisy *slog.Logger, handler handlerFunc) (*process, error) {
	if err := missingScript(spec); err != nil {
		return nil, err
	}
	cmd := exec.Command(spec.Command, spec.Args...)
	cmd.Env = os.Environ()
	for k, v := range spec.Env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	// Its mark, which what it starts inherits: see sweepMark.
	mark := fmt.Sprintf("%s=%d-%d", markVar, os.Getpid(), procMarks.Add(1))
	cmd.Env = append(cmd.Env, mark)
	cmd.Dir = spec.Cwd
	// Its own process group, so that stopping it also stops what it
	// started (npx starts node), and on Linux SIGKILL when mcpx dies: no
	// orphans (lifetime_linux.go).
	cmd.SysProcAttr = sysProcAttr()
	// stdin is a pipe of our own too, not exec's: an *os.File pipe takes a
	// write deadline, so a process that stops reading cannot hold a write
	// (and every caller behind it) for ever.
	inR, stdin, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	cmd.Stdin = inR
	// stdout and stderr are pipes of our own, not exec's: with *os.File
	// outputs cmd.Wait returns when the process exits, not when every
	// holder of the pipes (a grandchild it started) has closed them, so a
	// crash is noticed at once.
	outR, outW, err := os.Pipe()
	if err != nil {
		inR.Close()
		stdin.Close()
		return nil, err
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		inR.Close()
		stdin.Close()
		outR.Close()
		outW.Close()
		return nil, err
	}
	cmd.Stdout, cmd.Stderr = outW, errW
	err = startCmd(cmd)
	inR.Close()
	outW.Close()
	errW.Close()
	if err != nil {
		stdin.Close()
		outR.Close()
		errR.Close()
		return nil, startErr(spec, err)
	}
	p := &process{cmd: cmd, log: log, noisy: noisy, handler: handler, stdin: stdin, name: spec.Name, setup: spec.Setup, pending: waiting{}, gone: make(chan struct{})}
	p.out = newOutbox(p.write, noisy, spec.sendWait, spec.sendQueue)
	var readers sync.WaitGroup
	readers.Add(2)
	go func() { defer readers.Done(); p.readStderr(errR) }()
	go func() { defer readers.Done(); p.readStdout(outR) }()
	go func() {
		err := cmd.Wait()
		forgetCmd(cmd)
		// What the process started goes with it (no orphans); that also
		// closes the pipes they held. The group outlives its leader while
		// any member lives, so the id is still the group's. Those that
		// left the group and were adopted by mcpx go too (Linux).
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		sweepMark(mark)
		// Read what is left in the pipes; a member that left the group
		// (setsid) may hold them open, so not for ever.
		drained := make(chan struct{})
		go func() { readers.Wait(); close(drained) }()
		select {
		case <-drained:
		case <-time.After(drainGrace):
			outR.Close()
			errR.Close()
			<-drained
		}
		outR.Close()
		errR.Close()
		p.mu.Lock()
		p.exitErr = err
		p.pending.endAll()
		p.mu.Unlock()
		close(p.gone)
		p.out.close()
		// Its input too: a process that exited on its own is not closed
		// by close (the client just starts another), and its pipe would
		// stay open until a finalizer ran. A write in progress fails at
		// once (EPIPE), so wmu is not held for long.
		p.wmu.Lock()
		p.stdin.Close()
		p.wmu.Unlock()
		if err != nil {
			args := []any{"err", err}
			if l := p.lastErr.Load(); l != nil && !p.answered.Load() {
				args = append(args, "stderr", *l) // most likely why
			}
			if !p.answered.Load() && p.setup != "" {
				args = append(args, "setup", p.setup)
			}
			log.Warn("upstream process exited", args...)
		} else {
			log.Info("upstream process exited")
		}
	}()
	return p, nil
}

// readStderr logs the upstream's stderr line by line until it ends. It
// never stops early: an upstream whose stderr is not read blocks on its
// next write there, and every call to it times out.
func (p *process) readStderr(r io.Reader) {
	br := bufio.NewReaderSize(r, maxLogLine)
	for {
		line, err := br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			head := validTail(line)
			n := len(line)
			for errors.Is(err, bufio.ErrBufferFull) { // the rest is counted, not kept
				line, err = br.ReadSlice('\n')
				n += len(line)
			}
			n -= len(line) - len(bytes.TrimRight(line, "\r\n"))
			p.noisy.Info("upstream stderr", "line", fmt.Sprintf("%s…(truncated, %d bytes in all)", head, n))
			p.keepErr(head)
		} else if len(line) > 0 {
			l := string(bytes.TrimRight(line, "\r\n"))
			p.noisy.Info("upstream stderr", "line", l)
			p.keepErr(l)
		}
		if err != nil {
			return
		}
	}
}

// keepErr keeps l, cut to 300 bytes, as the last stderr line.
func (p *process) keepErr(l string) {
	if l = strings.TrimSpace(l); l != "" {
		l = validTail([]byte(l[:min(len(l), 300)]))
		p.lastErr.Store(&l)
	}
}

// validTail is b without a rune cut short at its end.
func validTail(b []byte) string {
	for i := len(b) - 1; i >= 0 && i >= len(b)-utf8.UTFMax; i-- {
		if utf8.RuneStart(b[i]) {
			if !utf8.FullRune(b[i:]) {
				b = b[:i]
			}
			break
		}
	}
	return string(b)
}

// reply is an answer read from the upstream, and what it holds of the
// large-message budget (see [budget.Hold.Keep]).
type reply struct {
	m    *jsonrpc.Message
	hold budget.Hold
}

// readStdout reads the upstream's messages, a line each. A line is read
// into a buffer of its own, counted in the process's large-message
// budget as it grows (nothing is kept between lines: one large answer
// does not leave its buffer behind); a line the budget refuses is read
// to its end and dropped, and the request it answers is told why.
func (p *process) readStdout(r io.Reader) {
	br := bufio.NewReaderSize(r, 64<<10)
	b := budget.Default()
	for {
		h := b.Hold()
		line, err := budget.ReadLine(context.Background(), br, maxLine, h)
		var refused *budget.Refused
		switch {
		case errors.As(err, &refused):
			p.refused(refused)
			continue
		case errors.Is(err, budget.ErrTooLong):
			p.stop(fmt.Errorf("it wrote a line over %d MiB on stdout", maxLine>>20))
			return
		}
		if line = bytes.TrimSpace(line); len(line) > 0 {
			p.message(line, h)
		}
		h.Release() // unless a caller took it
		if err != nil {
			if err != io.EOF {
				p.stop(fmt.Errorf("reading its stdout failed: %w", err))
			}
			return
		}
	}
}

// message serves one line read from the upstream; a response goes, with
// h, to the call waiting for it.
func (p *process) message(line []byte, h *budget.Hold) {
	msgs, errs, _ := jsonrpc.Decode(line, false)
	if errs[0] != nil {
		// Something that is not protocol on stdout: the upstream is
		// misbehaving; its requests time out with a clear error.
		p.noisy.Warn("upstream wrote something that is not a JSON-RPC message; ignored", "line", truncate(line, 200))
		return
	}
	p.answered.Store(true)
	m := msgs[0]
	if !m.IsResponse() {
		p.handler(p, m, nil)
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.pending.deliver(m, h) // under p.mu: see forget
}

// refused answers the call whose answer the large-message budget had no
// room for, with an error saying so; a request or notification is only
// logged.
func (p *process) refused(r *budget.Refused) {
	p.mu.Lock()
	answer := p.pending.refuse(p.name, r)
	p.mu.Unlock()
	logDropped(p.log, p.noisy, r, answer)
}

// busyAnswer is the error a call gets when its answer was dropped for the
// large-message budget.
func busyAnswer(upstream string, r *budget.Refused) *jsonrpc.Message {
	return jsonrpc.ErrorResponse(r.ID, &jsonrpc.Error{Code: jsonrpc.InternalError,
		Message: fmt.Sprintf("upstream %q answered, but its answer was not read: %v", upstream, r.Err)})
}

// stop kills the process for why, which its callers' errors then give.
func (p *process) stop(why error) {
	p.mu.Lock()
	if p.stopped == nil {
		p.stopped = why
	}
	p.mu.Unlock()
	p.log.Warn("stopping the upstream process", "why", why)
	p.kill()
}

func truncate(b []byte, n int) string {
	if len(b) > n {
		return string(b[:n]) + "…"
	}
	return string(b)
}

// maxWriteWait bounds a write whose context has no deadline.
const maxWriteWait = 10 * time.Second

// write sends m as one line, by ctx's deadline (or within maxWriteWait).
// A process that stopped reading mid-line by then is stopped: the rest of
// the stream could not be read as lines again. One that took none of the
// line only fails this write (the deadline may have passed while waiting
// for another writer).
func (p *process) write(ctx context.Context, m *jsonrpc.Message) error {
	b, err := jsonrpc.Encode(m)
	if err != nil {
		return err
	}
	deadline, ok := ctx.Deadline()
	if !ok {
		deadline = time.Now().Add(maxWriteWait)
	}
	p.wmu.Lock()
	defer p.wmu.Unlock()
	_ = p.stdin.SetWriteDeadline(deadline)
	n, err := p.stdin.Write(append(b, '\n'))
	if errors.Is(err, os.ErrDeadlineExceeded) && n > 0 {
		p.stop(errors.New("it stopped reading its input mid-message"))
	}
	return err
}

func (p *process) roundTrip(ctx context.Context, m *jsonrpc.Message, _ string) (*jsonrpc.Message, error) {
	ch := make(chan reply, 1)
	p.mu.Lock()
	select {
	case <-p.gone:
		p.mu.Unlock()
		return nil, p.deadErr()
	default:
	}
	p.pending[string(m.ID)] = ch
	p.mu.Unlock()
	if err := p.write(ctx, m); err != nil {
		p.forget(m.ID, ch)
		if _, ok := ctx.Deadline(); ok && errors.Is(err, os.ErrDeadlineExceeded) {
			<-ctx.Done() // due now: report the call's deadline, as a late answer would
			return nil, ctx.Err()
		}
		return nil, p.writeFailed(ctx, err)
	}
	select {
	case r, ok := <-ch:
		if !ok {
			return nil, p.deadErr()
		}
		r.hold.Keep(ctx) // counted until the client has its answer
		return r.m, nil
	case <-ctx.Done():
		p.forget(m.ID, ch)
		return nil, ctx.Err()
	}
}

// writeFailed is the error for a request whose write failed with err.
func (p *process) writeFailed(ctx context.Context, err error) error {
	if errors.Is(err, syscall.EPIPE) {
		// It closed its input, most likely exiting: how it exited says
		// more than the broken pipe.
		select {
		case <-p.gone:
			return p.deadErr()
		case <-ctx.Done():
		case <-time.After(exitWait):
		}
	}
	return fmt.Errorf("write to the upstream: %w", err)
}

// forget stops waiting for the answer to id on ch. An answer already
// sent there (under p.mu, so none comes after) gives back what it held.
func (p *process) forget(id []byte, ch chan reply) {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.pending, string(id))
	select {
	case r, ok := <-ch:
		if ok {
			r.hold.Release()
		}
	default:
	}
}

func (p *process) deadErr() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.stopped != nil {
		return fmt.Errorf("mcpx stopped the upstream process: %w", p.stopped)
	}
	if p.exitErr != nil && !p.answered.Load() {
		// It never started: what sets it up is most likely the answer.
		return errors.New(withSetup(fmt.Sprintf("the upstream process exited (%v) before it answered", p.exitErr), Spec{Setup: p.setup}))
	}
	if p.exitErr != nil {
		return fmt.Errorf("the upstream process exited (%v)", p.exitErr)
	}
	return errors.New("the upstream process exited")
}

func (p *process) notify(ctx context.Context, m *jsonrpc.Message) error { return p.write(ctx, m) }

// send writes m in the background: the caller may be the reader of the
// process's stdout, which must not wait on its stdin (see [outbox]).
func (p *process) send(m *jsonrpc.Message) { p.out.send(m) }

func (p *process) setDialect(*edge.Dialect)    {}
func (p *process) cancelsByNotification() bool { return true }
func (p *process) dead() <-chan struct{}       { return p.gone }

// close ends the process: stdin closed (stdio transport page: the client
// closes the input first), then SIGTERM to its group, then SIGKILL.
func (p *process) close() error {
	p.out.close() // what is still to be sent is not
	defer p.out.wait()
	p.wmu.Lock()
	p.stdin.Close()
	p.wmu.Unlock()
	select {
	case <-p.gone:
		return nil
	case <-time.After(stopGrace / 2):
	}
	_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGTERM)
	select {
	case <-p.gone:
		return nil
	case <-time.After(stopGrace):
	}
	p.kill()
	<-p.gone
	return nil
}

func (p *process) kill() { _ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL) }
