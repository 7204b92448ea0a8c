package mcpjson

import (
	"bytes"
	"encoding/binary"
	"sync"
	"unicode/utf8"
)

// The decoder validates a string a byte at a time: a message's envelope
// read with it (jsonrpc.Decode) cost ~50 µs for 64 kB of arguments or of a
// result, before the value was decoded once more. ScanObject proves the
// same validity with vectorized passes over the text of strings
// (bytes.IndexByte to the next quote or escape, control characters and
// non-ASCII bytes a word at a time, utf8.Valid only for non-ASCII text)
// and a byte-by-byte walk of the structure between them.

// ScanMin is the input length from which UnmarshalShared lifts long
// strings out before decoding (see lift), and what tests pad a message
// to so that it holds a long string. ScanObject itself is worth calling
// at any length: it reads even a small message's envelope faster than
// the decoder.
const ScanMin = 4096

// scanDepthMax is how deeply ScanObject follows arrays and objects, and
// scanMembersMax how many members an object may have for it to compare
// their names; beyond either it is not sure (the decoder's own limits are
// higher).
const (
	scanDepthMax   = 256
	scanMembersMax = 256
)

// ScanObject calls fn with the name (as written between its quotes) and
// the raw value of each member of the JSON object data holds, white space
// around it allowed, once it has proved that data is a JSON value
// [Unmarshal] reads without a syntax error: the grammar of RFC 8259,
// strings of valid UTF-8 with valid escapes, no object with a member name
// twice, nesting within [MaxDepth]. It reports whether it did.
//
// false means not sure, not invalid: data may be no object or invalid, or
// hold what ScanObject leaves to the decoder (a member name with an
// escape, a \u escape of half a surrogate pair alone, nesting deeper than 256,
// an object of more than 256 members). fn is then not called, and the
// caller reads data with the decoder, which reports any error. ScanObject
// never says true of data the decoder refuses (FuzzScanObject).
func ScanObject(data []byte, fn func(name, val []byte)) bool {
	s := scanners.Get().(*scanner)
	defer func() {
		*s = scanner{names: s.names[:0], top: s.top[:0]}
		scanners.Put(s)
	}()
	s.b = data
	i := s.space(0)
	if i >= len(data) || data[i] != '{' {
		return false
	}
	end := s.value(i, 0)
	if end < 0 || s.space(end) != len(data) {
		return false
	}
	// Valid: the top level's members again, now to report them (their
	// values are spans the walk has proved; their names have no escape).
	for _, m := range s.top {
		fn(data[m.name+1:m.nameEnd-1], data[m.val:m.valEnd])
	}
	return true
}

// scanners are ScanObject's, each with the room its names took; a new
// one (the pool is emptied by collections) is one allocation.
var scanners = sync.Pool{New: func() any {
	s := new(scanner)
	s.names, s.top = s.namesRoom[:0], s.topRoom[:0]
	return s
}}

// scanner is ScanObject's walk: b the input, names the member names of
// the objects being read (each object's from its start in names), top the
// top level's members.
type scanner struct {
	b     []byte
	names []nameRef
	top   []member

	namesRoom [32]nameRef
	topRoom   [8]member
}

// nameRef is a member name seen: its length and first 8 bytes (to tell
// most names apart without comparing them) and its offset in b.
type nameRef struct {
	n, at int
	head  uint64
}

// member is a top-level member's name and value, as offsets in b.
type member struct{ name, nameEnd, val, valEnd int }

// space is the index of the first byte at or after i that is not JSON
// white space.
func (s *scanner) space(i int) int {
	for i < len(s.b) {
		switch s.b[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}

// value is the index after the valid value at b[i] (no white space before
// it), at depth d, or -1.
func (s *scanner) value(i, d int) int {
	b := s.b
	if i >= len(b) {
		return -1
	}
	switch c := b[i]; {
	case c == '{':
		return s.object(i, d+1)
	case c == '[':
		return s.array(i, d+1)
	case c == '"':
		return s.str(i)
	case c == '-' || c >= '0' && c <= '9':
		return rawNumber(b, i)
	case c == 't':
		return rawLiteral(b, i, "true")
	case c == 'f':
		return rawLiteral(b, i, "false")
	case c == 'n':
		return rawLiteral(b, i, "null")
	}
	return -1
}

// object is the index after the valid object at b[i], at depth d, or -1.
func (s *scanner) object(i, d int) int {
	if d > scanDepthMax {
		return -1
	}
	b := s.b
	from := len(s.names) // this object's names
	defer func() { s.names = s.names[:from] }()
	i = s.space(i + 1)
	if i < len(b) && b[i] == '}' {
		return i + 1
	}
	for {
		if i >= len(b) || b[i] != '"' {
			return -1
		}
		name := i
		if i = s.str(i); i < 0 || !s.newName(from, name, i) {
			return -1
		}
		nameEnd := i
		if i = s.space(i); i >= len(b) || b[i] != ':' {
			return -1
		}
		val := s.space(i + 1)
		if i = s.value(val, d); i < 0 {
			return -1
		}
		if d == 1 {
			s.top = append(s.top, member{name, nameEnd, val, i})
		}
		switch i = s.space(i); {
		case i >= len(b):
			return -1
		case b[i] == ',':
			i = s.space(i + 1)
		case b[i] == '}':
			return i + 1
		default:
			return -1
		}
	}
}

// newName notes the name b[at:end] (quoted) of the object whose names
// begin at names[from]; false if it has an escape, the object has it
// already, or has too many to compare.
func (s *scanner) newName(from, at, end int) bool {
	q := s.b[at+1 : end-1]
	if bytes.IndexByte(q, '\\') >= 0 || len(s.names)-from >= scanMembersMax {
		return false
	}
	var head [8]byte
	copy(head[:], q)
	r := nameRef{n: len(q), at: at + 1, head: binary.LittleEndian.Uint64(head[:])}
	for _, o := range s.names[from:] {
		if o.n == r.n && o.head == r.head && (r.n <= 8 || bytes.Equal(s.b[o.at:o.at+o.n], q)) {
			return false
		}
	}
	s.names = append(s.names, r)
	return true
}

// array is the index after the valid array at b[i], at depth d, or -1.
func (s *scanner) array(i, d int) int {
	if d > scanDepthMax {
		return -1
	}
	b := s.b
	i = s.space(i + 1)
	if i < len(b) && b[i] == ']' {
		return i + 1
	}
	for {
		if i = s.value(i, d); i < 0 {
			return -1
		}
		switch i = s.space(i); {
		case i >= len(b):
			return -1
		case b[i] == ',':
			i = s.space(i + 1)
		case b[i] == ']':
			return i + 1
		default:
			return -1
		}
	}
}

// str is the index after the valid string at b[i] (its opening quote), or
// -1: no control character, valid UTF-8, and only valid escapes (a \u
// escape of half a surrogate pair alone is left to the decoder).
func (s *scanner) str(i int) int {
	b := s.b
	i++
	q := indexFrom(b, i, '"') // the next quote, perhaps an escaped one
	for {
		if q == len(b) {
			return -1
		}
		// The text up to the next escape or the quote, a word at a time.
		e := q
		if j := bytes.IndexByte(b[i:q], '\\'); j >= 0 {
			e = i + j
		}
		if !plainText(b[i:e]) {
			return -1
		}
		if e == q {
			return q + 1
		}
		if e+1 >= len(b) {
			return -1
		}
		switch b[e+1] {
		case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			i = e + 2
		case 'u':
			if i = unicodeEscape(b, e); i < 0 {
				return -1 // half a pair alone: the decoder's to judge
			}
		default:
			return -1
		}
		if i > q {
			q = indexFrom(b, i, '"')
		}
	}
}

// plainText reports whether t, text of a string between escapes, holds no
// control character and is valid UTF-8.
func plainText(t []byte) bool {
	nonASCII, ok := wordScan(t, noControls)
	return ok && (!nonASCII || utf8.Valid(t))
}
