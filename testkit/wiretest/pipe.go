package wiretest

import (
	"bytes"
	"io"
	"sync"
)

// TeeWriter writes to W and copies what W accepted to Rec: what a test
// client sends mcpx, recorded on the way (into [StdioWire].FromClient).
type TeeWriter struct {
	W   io.WriteCloser
	Rec io.Writer
}

// Write writes p to W and the part of it W took to Rec.
func (t TeeWriter) Write(p []byte) (int, error) {
	n, err := t.W.Write(p)
	t.Rec.Write(p[:n])
	return n, err
}

// Close closes W.
func (t TeeWriter) Close() error { return t.W.Close() }

// Pipe is an in-memory pipe whose writes never block: what mcpx writes is
// queued for the client however slowly it reads, or if it has stopped.
// Make one with [NewPipe].
type Pipe struct {
	mu     sync.Mutex
	cond   *sync.Cond
	buf    bytes.Buffer
	eof    bool // the writer is done
	closed bool // the reader is done
}

// NewPipe returns an empty pipe.
func NewPipe() *Pipe {
	p := new(Pipe)
	p.cond = sync.NewCond(&p.mu)
	return p
}

// Write queues b for the reader.
func (p *Pipe) Write(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.buf.Write(b)
	p.cond.Broadcast()
	return len(b), nil
}

// CloseWrite ends the stream: Read returns io.EOF once the queue is empty.
func (p *Pipe) CloseWrite() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.eof = true
	p.cond.Broadcast()
}

// Read waits for something queued, the end of the stream, or Close.
func (p *Pipe) Read(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for p.buf.Len() == 0 && !p.eof && !p.closed {
		p.cond.Wait()
	}
	switch {
	case p.closed:
		return 0, io.ErrClosedPipe
	case p.buf.Len() > 0:
		return p.buf.Read(b)
	default:
		return 0, io.EOF
	}
}

// Close is the client closing its end; a blocked Read returns.
func (p *Pipe) Close() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.closed = true
	p.cond.Broadcast()
	return nil
}
