package mcpjson

import (
	"bytes"
	stdjson "encoding/json"
	"errors"
	"io"
	"reflect"
	"sort"
	"sync"

	json "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// The decoder validates every string it reads a byte at a time, and it
// cannot skip one without: a 64 kB text in an upstream's result cost
// ~90 µs to decode, most of it that validation, though the envelope's
// scan (ScanObject) had proved the same bytes valid a moment before.
//
// UnmarshalShared therefore lifts the long strings out of a long input
// first. Each string value of longStringMin bytes or more that str proves
// valid is replaced by "" in a copy of the input, the copy is decoded,
// and where the decoder meets one of those "" the string is unquoted from
// the input (liftedString), or, inside a json.RawMessage, the raw value
// becomes its span of the input (liftedRaw). Only what is between those
// strings' quotes changes, so the decoder sees the same tokens and
// accepts or refuses the copy as it would the input. What reads a "" any
// other way (a union's own UnmarshalJSON, a named string type, an
// unknown member skipped) is not counted as having taken its string, and
// the input is then decoded as it is: the result is always the decoder's
// own.

// liftMin is the input length from which UnmarshalShared lifts.
const liftMin = ScanMin

// A lifted is a long string taken out of the input: the offset of its ""
// in the copy, and its span (quotes included) in the input.
type lifted struct {
	at         int
	start, end int
}

// lifting is one lifted decode: the input, its strings lifted in the
// order they appear, how many of them the decode took, and the decoder
// of the copy. Its options hold its unmarshalers, bound to it, so a
// lifting is pooled with them (and with the decoder's cache of what they
// apply to).
//
// The unmarshalers take a "" only from dec: an offset means a place in
// the copy only there. A method that decoded a value it read once more,
// with a decoder of its own and these options, would otherwise be given
// the string lifted from that offset of the copy, not of its value; it
// is given "" instead, which leaves a string not taken.
type lifting struct {
	data  []byte
	lifts []lifted
	taken int
	// copy is a bytes.Buffer because the decoder then reads its bytes in
	// place, all of them in its buffer from the start, as the unions'
	// PeekMember needs (from an io.Reader it reads a piece at a time).
	copy bytes.Buffer
	dec  jsontext.Decoder
	opts json.Options
}

var liftings = sync.Pool{New: func() any {
	l := new(lifting)
	l.opts = json.WithUnmarshalers(json.JoinUnmarshalers(
		json.UnmarshalFromFunc(l.liftedRaw),
		json.UnmarshalFromFunc(l.liftedString),
		longString,
	))
	return l
}}

// lift is the copy of data with its long string values lifted out, and
// where they were; nil when there is none to lift (or data is no JSON
// lift can look through, which the decoder then says).
func lift(data []byte) (copied []byte, lifts []lifted) {
	s := scanner{b: data}
	prev := 0
	for i := 0; ; {
		q := indexFrom(data, i, '"')
		if q == len(data) {
			break
		}
		end, ok := skipString(data, q)
		if !ok {
			return nil, nil
		}
		i = end
		if end-q-2 < longStringMin || isName(data, end) || s.str(q) != end {
			continue
		}
		if copied == nil {
			copied = make([]byte, 0, 512)
		}
		copied = append(copied, data[prev:q]...)
		lifts = append(lifts, lifted{at: len(copied), start: q, end: end})
		copied = append(copied, `""`...)
		prev = end
	}
	if lifts == nil {
		return nil, nil
	}
	return append(copied, data[prev:]...), lifts
}

// isName reports whether the string ending before data[end] is a member
// name: a colon follows it.
func isName(data []byte, end int) bool {
	for ; end < len(data); end++ {
		switch data[end] {
		case ' ', '\t', '\n', '\r':
		case ':':
			return true
		default:
			return false
		}
	}
	return false
}

// unmarshalLifted is UnmarshalShared by way of lift; done is false when
// it did not decode v (v not a pointer to a zero value, nothing to lift,
// or the decode did not take every string lifted), and v is then as it
// was.
func unmarshalLifted(data []byte, v any) (done bool, err error) {
	// Only into a zero value: undoing a decode that did not take every
	// string is then setting it to zero again, where the decoder would
	// have merged into what v held.
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Pointer || rv.IsNil() || !rv.Elem().IsZero() {
		return false, nil
	}
	copied, lifts := lift(data)
	if lifts == nil {
		return false, nil
	}
	l := liftings.Get().(*lifting)
	l.data, l.lifts, l.taken = data, lifts, 0
	l.copy = *bytes.NewBuffer(copied)
	l.dec.Reset(&l.copy, l.opts)
	err = json.UnmarshalDecode(&l.dec, v)
	whole := false // and nothing after the value
	if err == nil {
		_, end := l.dec.ReadToken()
		whole = end == io.EOF
	}
	taken := l.taken
	l.data, l.lifts = nil, nil
	l.copy = bytes.Buffer{}
	l.dec.Reset(&l.copy)
	liftings.Put(l)
	if whole && taken == len(lifts) {
		return true, nil
	}
	// What the decode set, undone: the input's own decode gives its value
	// or its error.
	rv.Elem().SetZero()
	return false, nil
}

// before is how many lifted strings have their "" before off in the copy.
func (l *lifting) before(off int) int {
	return sort.Search(len(l.lifts), func(i int) bool { return l.lifts[i].at >= off })
}

// index is the lifted string whose "" is at off in the copy, or -1.
func (l *lifting) index(off int) int {
	if i := l.before(off); i < len(l.lifts) && l.lifts[i].at == off {
		return i
	}
	return -1
}

// orig is the offset in the input of the offset off in the copy, off
// being where a value starts or ends (never inside a ""), and how many
// lifted strings come before it.
func (l *lifting) orig(off int) (int, int) {
	n := l.before(off)
	if n == 0 {
		return off, 0
	}
	last := l.lifts[n-1]
	return last.end + off - (last.at + 2), n
}

// liftedString decodes a "" of the copy that stands for a lifted string
// into the string itself, unquoted from the input; anything else is the
// other unmarshalers'.
func (l *lifting) liftedString(dec *jsontext.Decoder, s *string) error {
	if dec != &l.dec {
		return errors.ErrUnsupported
	}
	rest := dec.UnreadBuffer()
	k := skipSpace(rest, 0)
	if k+1 >= len(rest) || rest[k] != '"' || rest[k+1] != '"' {
		return errors.ErrUnsupported
	}
	i := l.index(int(dec.InputOffset()) + k)
	if i < 0 {
		return errors.ErrUnsupported
	}
	if _, err := dec.ReadValue(); err != nil {
		return err
	}
	lf := l.lifts[i]
	str, err := unquoteString(l.data[lf.start:lf.end])
	if err != nil {
		return err
	}
	*s = str
	l.taken++
	return nil
}

// liftedRaw sets a json.RawMessage to its span of the input, the lifted
// strings within it back in place: a slice of the input, as
// UnmarshalShared's raw values are.
func (l *lifting) liftedRaw(dec *jsontext.Decoder, m *stdjson.RawMessage) error {
	if dec != &l.dec {
		return errors.ErrUnsupported
	}
	val, err := dec.ReadValue()
	if err != nil {
		return err
	}
	end := int(dec.InputOffset())
	start, before := l.orig(end - len(val))
	stop, upto := l.orig(end)
	*m = l.data[start:stop:stop]
	l.taken += upto - before
	return nil
}
