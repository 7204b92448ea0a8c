package mcpjson

import (
	"bytes"
	"encoding/binary"
	"errors"
	"sync"
	"unicode/utf8"
	"unsafe"

	json "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// A long text (a tool's 64 kB or 1 MB result) was quoted by the encoder,
// which scans and escapes it a byte at a time (jsonwire.AppendQuote),
// into its own buffer. [MarshalSpliced] writes a long string as "" and
// copies the text in afterwards, escaped as encoding/json escapes it: the
// text between its escapes copied as it is, each escape found by a
// vectorized search (bytes.IndexByte), the same bytes. A string with what
// is rarer in a text (other control characters, U+2028, U+2029, invalid
// UTF-8) keeps the encoder's way.

// SplicedMin is the length from which [MarshalSpliced] copies a string in.
const SplicedMin = longStringMin

// A splice is a long string to insert at off in the encoder's output.
type splice struct {
	off int
	s   string
	n   int   // its length quoted
	has uint8 // the escapes it holds (quotedLen)
	raw bool  // a json.RawMessage, copied as it is over the "" at off
}

// splicer is what one MarshalSpliced call keeps: its encoder, the
// encoder's output without the long strings, and where they go.
type splicer struct {
	enc     jsontext.Encoder
	scratch bytes.Buffer
	at      []splice
}

var (
	splicing  sync.Map // *jsontext.Encoder -> *splicer, while in a MarshalSpliced call
	splicedOp = json.WithMarshalers(json.JoinMarshalers(json.MarshalToFunc(spliceString), json.MarshalToFunc(spliceRaw)))
)

// spliceString writes a long string of a MarshalSpliced call as "" and
// notes where its text goes; anything else is the encoder's.
func spliceString(enc *jsontext.Encoder, s string) error {
	if len(s) < SplicedMin {
		return errors.ErrUnsupported
	}
	p, ok := splicerAt(enc)
	if !ok {
		return errors.ErrUnsupported
	}
	if k, n := enc.StackIndex(enc.StackDepth()); k == '{' && n%2 == 0 {
		return errors.ErrUnsupported // a member name: the encoder checks and sorts those
	}
	n, has, ok := quotedLen(s)
	if !ok {
		return errors.ErrUnsupported
	}
	if err := enc.WriteToken(jsontext.String("")); err != nil {
		return err
	}
	p.at = append(p.at, splice{off: int(enc.OutputOffset()) - 1, s: s, n: n, has: has}) // before the closing quote
	return nil
}

// splicerAt is the splicer of the MarshalSpliced call enc is encoding
// for, when a value may be spliced in where enc is: not at the top level
// (the encoder ends it with a newline), nor in a `json:",string"` member
// (quoted twice).
func splicerAt(enc *jsontext.Encoder) (*splicer, bool) {
	if enc.StackDepth() == 0 {
		return nil, false
	}
	if q, _ := json.GetOption(enc.Options(), json.StringifyNumbers); q {
		return nil, false
	}
	sp, ok := splicing.Load(enc)
	if !ok {
		return nil, false
	}
	return sp.(*splicer), true
}

// MarshalSpliced is [MarshalPooled] for a value that may hold long
// strings (a tool's text result) or long json.RawMessage values: the
// same bytes, each long string quotedLen accepts copied in by
// appendQuoted rather than quoted by the encoder, and each raw value
// canonicalRaw accepts copied in as it is; every other string and raw
// value is the encoder's. It costs a microsecond more than MarshalPooled
// on a small value (its marshalers looked up for every string).
func MarshalSpliced(v any) (*Buffer, error) {
	b, _, err := marshalSpliced(v)
	return b, err
}

// MarshalLong is [Marshal] by way of MarshalSpliced's splicing, for a
// value that may hold long strings or long raw values (a tools/call's
// 64 kB arguments): the same bytes and errors, in a slice of their own.
func MarshalLong(v any) ([]byte, error) {
	b := getBuffer()
	p, out, n, err := b.encodeSpliced(v)
	if err != nil {
		b.Free()
		return nil, err
	}
	w := p.assemble(make([]byte, 0, n), out)
	p.done(b)
	b.Free()
	return w, nil
}

// marshalSpliced is MarshalSpliced, and how many strings it copied in.
func marshalSpliced(v any) (_ *Buffer, spliced int, _ error) {
	b := getBuffer()
	p, out, n, err := b.encodeSpliced(v)
	if err != nil {
		b.Free()
		return nil, 0, err
	}
	b.bb.Grow(n)
	w := p.assemble(b.bb.AvailableBuffer(), out) // the buffer's own array: written once, then given back to it
	b.bb = *bytes.NewBuffer(w)
	spliced = len(p.at)
	p.done(b)
	return b, spliced, nil
}

// encodeSpliced encodes v with b's splicer: out is the encoder's output
// without the spliced values, n the length of the whole. On an error the
// splicer is emptied already.
func (b *Buffer) encodeSpliced(v any) (p *splicer, out []byte, n int, err error) {
	if b.sp == nil {
		b.sp = new(splicer) // kept with the buffer: a sync.Pool of them was emptied by the collections a 1 MB answer brings
	}
	p = b.sp
	p.enc.Reset(&p.scratch, v1opts)
	splicing.Store(&p.enc, p)
	err = json.MarshalEncode(&p.enc, v, splicedOp)
	splicing.Delete(&p.enc)
	if err != nil {
		p.done(b)
		return nil, nil, 0, err
	}
	out = bytes.TrimSuffix(p.scratch.Bytes(), []byte{'\n'}) // the encoder's after a top-level value
	n = len(out)
	for _, s := range p.at {
		n += s.n
		if s.raw {
			n -= 2 // its ""
		}
	}
	return p, out, n, nil
}

// assemble appends to w the encoder's output out with p's values spliced in.
func (p *splicer) assemble(w, out []byte) []byte {
	last := 0
	for _, s := range p.at {
		w = append(w, out[last:s.off]...)
		switch {
		case s.raw:
			w = append(w, s.s...)
			last = s.off + 2 // over its ""
			continue
		case s.n == len(s.s):
			w = append(w, s.s...) // nothing to escape
		default:
			w = appendQuoted(w, s.s, s.has)
		}
		last = s.off
	}
	return append(w, out[last:]...)
}

// done empties p for b's next MarshalSpliced.
func (p *splicer) done(b *Buffer) {
	clear(p.at) // the strings are the caller's
	p.at = p.at[:0]
	p.scratch.Reset()
	if p.scratch.Cap() > 64<<10 {
		b.sp = nil // a large value's: not kept
	}
}

// escaped are the characters encoding/json's HTML-safe encoder escapes
// that a long string spliced in may hold, and what it writes for each.
var escaped = [...]struct {
	c   byte
	esc string
}{{'"', `\"`}, {'\\', `\\`}, {'\n', `\n`}, {'\r', `\r`}, {'\t', `\t`}, {'<', `\u003c`}, {'>', `\u003e`}, {'&', `\u0026`}}

// quotedLen is the length of s between its quotes as encoding/json
// writes it, or ok false when s holds what MarshalSpliced leaves to the
// encoder: a control character other than \t, \n and \r, U+2028, U+2029,
// invalid UTF-8. It may say false of a string it could quote; never true
// of one it cannot. has has bit k set if s holds escaped[k]. Each look is
// a vectorized pass (bytes.Count) or a word at a time (wordScan): the
// encoder's is a byte at a time.
func quotedLen(s string) (n int, has uint8, ok bool) {
	b := unsafe.Slice(unsafe.StringData(s), len(s)) // read only
	nonASCII, ok := wordScan(b, tabsAndLines)
	if !ok || nonASCII && !validWithoutSeparators(b) {
		return 0, 0, false
	}
	n = len(s)
	for k, e := range escaped {
		if c := bytes.Count(b, []byte{e.c}); c > 0 {
			n += c * (len(e.esc) - 1)
			has |= 1 << k
		}
	}
	return n, has, true
}

// wordScan looks through b 32 bytes at a time for control characters
// (below 0x20) and bytes above 0x7f: (x - 0x20 in each byte) &^ x sets a
// byte's high bit only if that byte, or one below it in the word, is
// under 0x20, so a word it flags surely holds one. Each 32 bytes it
// flags, and the tail, go to allowed, which says whether their control
// characters may stay; ok is false when one may not. nonASCII reports a
// byte above 0x7f.
func wordScan(b []byte, allowed func([]byte) bool) (nonASCII, ok bool) {
	const lo, hi = 0x0101010101010101, 0x8080808080808080
	var high uint64
	i := 0
	for ; i+32 <= len(b); i += 32 {
		w := b[i : i+32 : i+32]
		x0, x1 := binary.LittleEndian.Uint64(w[0:8]), binary.LittleEndian.Uint64(w[8:16])
		x2, x3 := binary.LittleEndian.Uint64(w[16:24]), binary.LittleEndian.Uint64(w[24:32])
		high |= x0 | x1 | x2 | x3
		ctl := (x0-lo*0x20)&^x0 | (x1-lo*0x20)&^x1 | (x2-lo*0x20)&^x2 | (x3-lo*0x20)&^x3
		if ctl&hi != 0 && !allowed(w) {
			return false, false
		}
	}
	if !allowed(b[i:]) {
		return false, false
	}
	for ; i < len(b); i++ {
		high |= uint64(b[i])
	}
	return high&hi != 0, true
}

// validWithoutSeparators reports whether b is valid UTF-8 without U+2028
// and U+2029 (E2 80 A8 and E2 80 A9), which encoding/json escapes.
func validWithoutSeparators(b []byte) bool {
	if !utf8.Valid(b) {
		return false
	}
	for s := b; ; {
		j := bytes.IndexByte(s, 0xE2)
		if j < 0 {
			return true
		}
		if j+2 < len(s) && s[j+1] == 0x80 && (s[j+2] == 0xA8 || s[j+2] == 0xA9) {
			return false
		}
		s = s[j+1:]
	}
}

// tabsAndLines reports whether the control characters in b are all \t, \n, \r.
func tabsAndLines(b []byte) bool {
	for _, c := range b {
		if c < 0x20 && c != '\t' && c != '\n' && c != '\r' {
			return false
		}
	}
	return true
}

// appendQuoted appends s, which quotedLen accepted (has is its), as encoding/json
// writes it between quotes: the text between the characters it escapes
// copied as it is, found by bytes.IndexByte, a cursor for each.
func appendQuoted(dst []byte, s string, has uint8) []byte {
	b := unsafe.Slice(unsafe.StringData(s), len(s)) // read only
	var next [len(escaped)]int                      // the next of each at or after i, or len(b)
	for k, e := range escaped {
		next[k] = len(b)
		if has&(1<<k) != 0 {
			next[k] = indexFrom(b, 0, e.c)
		}
	}
	i := 0
	for {
		k := 0
		for j := range next {
			if next[j] < next[k] {
				k = j
			}
		}
		at := next[k]
		dst = append(dst, b[i:at]...)
		if at == len(b) {
			return dst
		}
		dst = append(dst, escaped[k].esc...)
		i = at + 1
		next[k] = indexFrom(b, i, escaped[k].c)
	}
}

// indexFrom is the index of the first c in b at or after i, or len(b).
func indexFrom(b []byte, i int, c byte) int {
	if j := bytes.IndexByte(b[i:], c); j >= 0 {
		return i + j
	}
	return len(b)
}
