package budget

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"sync"
)

// ErrTooLong says a line was longer than the reader's maximum; it was
// read to its end and dropped.
var ErrTooLong = errors.New("line too long")

// Refused is a line dropped because the budget had no room for it. It was
// read to its end without being kept; ID is the top-level "id" member of
// the JSON-RPC message it held, when one was seen, so that the request it
// asks or answers can be told why.
type Refused struct {
	ID  json.RawMessage
	Err error // a *BusyError, or the context's error
}

func (r *Refused) Error() string { return r.Err.Error() }
func (r *Refused) Unwrap() error { return r.Err }

// ReadLine reads one line (its newline kept, when there is one) from br,
// of at most limit bytes, counting it in h as it is read: a large line
// waits for room in the budget as it arrives. The line returned is a
// buffer of its own, of its exact size, which the caller may keep. A line
// over limit is ErrTooLong; one the budget refuses is a *Refused. Either
// way the line has been read to its end, and ReadLine may be called
// again. h counts what the line holds: give it back (or Keep it) once the
// line is used.
//
// A line longer than br's buffer is gathered in pieces taken from a pool
// shared by every reader, then copied once into its own buffer: growing
// one buffer by doubling would allocate twice its size for every large
// line, and keeping one grown buffer per reader would hold the largest
// line's size for ever.
func ReadLine(ctx context.Context, br *bufio.Reader, limit int, h *Hold) ([]byte, error) {
	chunk, err := br.ReadSlice('\n')
	if !errors.Is(err, bufio.ErrBufferFull) { // the whole line at once: nearly always
		if len(chunk) > limit {
			return nil, ErrTooLong
		}
		if e := h.Add(ctx, int64(len(chunk))); e != nil {
			var ids idScanner
			ids.write(chunk)
			return nil, &Refused{ID: ids.id(), Err: e}
		}
		if len(chunk) == 0 {
			return nil, err
		}
		return append(make([]byte, 0, len(chunk)), chunk...), err
	}
	var p pieces
	defer p.free()
	var refused error
	var ids idScanner
	tooLong := false
	for {
		switch {
		case tooLong:
		case refused != nil:
			ids.write(chunk)
		case p.n+len(chunk) > limit:
			tooLong = true
			p.free()
			h.Release()
		default:
			if e := h.Add(ctx, int64(len(chunk))); e != nil {
				refused = e
				p.each(ids.write)
				ids.write(chunk)
				p.free()
				break
			}
			p.add(chunk)
		}
		if !errors.Is(err, bufio.ErrBufferFull) {
			break
		}
		chunk, err = br.ReadSlice('\n')
	}
	switch {
	case tooLong:
		return nil, ErrTooLong
	case refused != nil:
		return nil, &Refused{ID: ids.id(), Err: refused}
	}
	line := make([]byte, 0, p.n)
	p.each(func(b []byte) { line = append(line, b...) })
	return line, err
}

// pieceSize is the size of the pieces a long line is gathered in.
const pieceSize = 64 << 10

var piecePool = sync.Pool{New: func() any { return new([pieceSize]byte) }}

// pieces is a line gathered in pooled pieces.
type pieces struct {
	bufs []*[pieceSize]byte
	n    int // bytes held
}

func (p *pieces) add(b []byte) {
	for len(b) > 0 {
		off := p.n % pieceSize
		if off == 0 {
			p.bufs = append(p.bufs, piecePool.Get().(*[pieceSize]byte))
		}
		c := copy(p.bufs[len(p.bufs)-1][off:], b)
		b, p.n = b[c:], p.n+c
	}
}

func (p *pieces) each(f func([]byte)) {
	for i, b := range p.bufs {
		f(b[:min(pieceSize, p.n-i*pieceSize)])
	}
}

func (p *pieces) free() {
	for _, b := range p.bufs {
		piecePool.Put(b)
	}
	p.bufs, p.n = nil, 0
}

// idScanner finds the top-level "id" member of a JSON object as its bytes
// go by, keeping nothing else: the id of a message too large to keep.
type idScanner struct {
	depth     int
	inStr     bool
	esc       bool
	expectKey bool   // at depth 1, the next string is a member name
	inKey     bool   // the string being read is a member name at depth 1
	key       []byte // that name, its first bytes
	lastKey   string
	capture   bool // reading the id's value
	val       []byte
	found     json.RawMessage
	done      bool
}

// maxID is the longest id value kept.
const maxID = 256

func (s *idScanner) keep(c byte) {
	if len(s.val) < maxID+1 {
		s.val = append(s.val, c)
	}
}

func (s *idScanner) write(p []byte) {
	for _, c := range p {
		if s.done {
			return
		}
		if s.inStr {
			if s.capture {
				s.keep(c)
			}
			switch {
			case s.esc:
				s.esc = false
			case c == '\\':
				s.esc = true
			case c == '"':
				s.inStr = false
				if s.inKey {
					s.lastKey, s.inKey = string(s.key), false
				}
				continue
			}
			if s.inKey && len(s.key) < 8 {
				s.key = append(s.key, c)
			}
			continue
		}
		switch c {
		case '"':
			s.inStr = true
			if s.depth == 1 && s.expectKey {
				s.inKey, s.key, s.expectKey = true, s.key[:0], false
			}
			if s.capture {
				s.keep(c)
			}
		case '{', '[':
			s.depth++
			if s.depth == 1 && c == '{' {
				s.expectKey = true
			}
			if s.capture {
				s.keep(c)
			}
		case '}', ']':
			if s.depth == 1 && s.capture {
				s.finish()
			}
			s.depth--
		case ',':
			if s.depth == 1 {
				if s.capture {
					s.finish()
				}
				s.expectKey = true
			}
		case ':':
			if s.depth == 1 && s.lastKey == "id" && s.found == nil {
				s.capture, s.val = true, s.val[:0]
			}
		case ' ', '\t', '\r', '\n':
		default:
			if s.capture {
				s.keep(c)
			}
		}
	}
}

func (s *idScanner) finish() {
	s.capture = false
	v := s.val
	// Only what JSON-RPC allows: a string or a number, whole.
	if len(v) > 0 && len(v) <= maxID && json.Valid(v) && (v[0] == '"' || v[0] == '-' || v[0] >= '0' && v[0] <= '9') {
		s.found = append(json.RawMessage(nil), v...)
		s.done = true
	}
}

func (s *idScanner) id() json.RawMessage { return s.found }
