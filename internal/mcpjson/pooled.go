package mcpjson

import (
	"bytes"
	"sync"

	json "github.com/go-json-experiment/json"
	jsonv1 "github.com/go-json-experiment/json/v1"
)

// A Buffer holds what [MarshalPooled] wrote, in a buffer taken from a
// pool: its bytes are valid until Free gives the buffer back.
type Buffer struct {
	bb bytes.Buffer
	sp *splicer // MarshalSpliced's, once it has used the buffer
}

// Buffers given back wait in kept, then in buffers. A sync.Pool alone
// is emptied by every two collections, and with 1 MB answers the
// collector runs more than once a call on a small heap: each answer then
// grew a new buffer (~5 MB of growing for 1 MB, more than Marshal's
// copy). kept is not emptied: at most keptMax buffers of maxPooled. It
// is a stack, so that answers one after another take the buffer the
// last one grew (a queue handed each the next, perhaps small, one).
var (
	keptMu  sync.Mutex
	kept    []*Buffer
	buffers = sync.Pool{New: func() any { return new(Buffer) }}
	v1opts  = jsonv1.DefaultOptionsV1()
)

// maxPooled is the largest buffer Free keeps for the next answer; a
// larger one (a result of many MB) is left to the collector rather than
// pinned. keptMax * maxPooled is what kept may pin at most (16 MiB).
const (
	maxPooled = 4 << 20
	keptMax   = 4
)

// MarshalPooled is [Marshal] into a pooled buffer: the same bytes, but
// without Marshal's final copy of its encoder's buffer (1 MB for a 1 MB
// text result) and, once the pool is warm, without growing a buffer for
// every answer. For a caller that writes the bytes out and then calls Free.
func MarshalPooled(v any) (*Buffer, error) {
	b := getBuffer()
	// A bytes.Buffer is the encoder's own buffer: it appends straight
	// into it (jsontext specializes it), and grows it as it needs.
	if err := json.MarshalWrite(&b.bb, v, v1opts); err != nil {
		b.Free()
		return nil, err
	}
	return b, nil
}

// NewBuffer is an empty buffer from the pool, for a caller that writes
// JSON it has already (a result that crosses as it came) and then calls
// Free, as for MarshalPooled's.
func NewBuffer() *Buffer { return getBuffer() }

// Write appends p to the buffer.
func (b *Buffer) Write(p []byte) (int, error) { return b.bb.Write(p) }

// WriteString appends s to the buffer.
func (b *Buffer) WriteString(s string) (int, error) { return b.bb.WriteString(s) }

// getBuffer is an empty buffer, the one last given back if kept has one.
func getBuffer() *Buffer {
	var b *Buffer
	keptMu.Lock()
	if n := len(kept); n > 0 {
		b, kept = kept[n-1], kept[:n-1]
	}
	keptMu.Unlock()
	if b == nil {
		b = buffers.Get().(*Buffer)
	}
	return b
}

// Bytes are the JSON MarshalPooled wrote; they must not be used after Free.
func (b *Buffer) Bytes() []byte { return b.bb.Bytes() }

// Free gives the buffer back to the pool. Free of a nil Buffer does
// nothing.
func (b *Buffer) Free() {
	if b == nil || b.bb.Cap() > maxPooled {
		return
	}
	b.bb.Reset()
	keptMu.Lock()
	if len(kept) < keptMax {
		kept = append(kept, b)
		b = nil
	}
	keptMu.Unlock()
	if b != nil {
		buffers.Put(b)
	}
}
