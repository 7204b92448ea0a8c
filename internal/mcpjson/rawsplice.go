package mcpjson

import (
	"bytes"
	stdjson "encoding/json"
	"errors"
	"unsafe"

	"github.com/go-json-experiment/json/jsontext"
)

// A json.RawMessage (a tools/call's 64 kB arguments) is validated and
// compacted again by the encoder a byte at a time, its <, >, &, U+2028
// and U+2029 escaped (encoding/json's way). Most are already what that
// writes: compact, and none of those characters. canonicalRaw proves that
// with vectorized passes over the whole value (bytes.IndexByte, a word
// at a time) and a walk of its structure that hops over the text of its
// strings; [MarshalSpliced] and [MarshalLong] then copy such a value in
// as it is. Any other (invalid, spaced, escapes to write) keeps the
// encoder's way, with its output and its errors.

// rawDepthMax is how deeply canonicalRaw follows arrays and objects;
// deeper ones are left to the encoder (which has its own limit).
const rawDepthMax = 256

// spliceRaw writes a long json.RawMessage of a MarshalSpliced call that
// canonicalRaw accepts as "" and notes that its bytes replace it.
func spliceRaw(enc *jsontext.Encoder, m stdjson.RawMessage) error {
	if len(m) < SplicedMin {
		return errors.ErrUnsupported
	}
	p, ok := splicerAt(enc)
	if !ok || !canonicalRaw(m) {
		return errors.ErrUnsupported
	}
	if err := enc.WriteToken(jsontext.String("")); err != nil {
		return err
	}
	s := unsafe.String(unsafe.SliceData(m), len(m)) // read only, like the strings
	p.at = append(p.at, splice{off: int(enc.OutputOffset()) - 2, s: s, n: len(m), raw: true})
	return nil
}

// canonicalRaw reports whether b is one JSON value that encoding/json
// writes as it is: valid, no whitespace outside strings, and no byte it
// would change (a control character, <, >, &, U+2028, U+2029, invalid
// UTF-8). It may say false of such a value (a lone surrogate escape, deep
// nesting); never true of another.
func canonicalRaw(b []byte) bool {
	if !plainRaw(b) {
		return false
	}
	var objects [rawDepthMax / 64]uint64 // bit d set: level d is an object
	depth := 0
	i := 0
value:
	for {
		if i >= len(b) {
			return false
		}
		switch c := b[i]; {
		case c == '{' || c == '[':
			if i+1 < len(b) && b[i+1] == c+2 { // {} or []
				i += 2
				break
			}
			if depth == rawDepthMax {
				return false
			}
			if c == '{' {
				objects[depth/64] |= 1 << (depth % 64)
				depth++
				if i = memberName(b, i+1); i < 0 {
					return false
				}
			} else {
				objects[depth/64] &^= 1 << (depth % 64)
				depth++
				i++
			}
			continue value
		case c == '"':
			i = rawString(b, i)
		case c == '-' || c >= '0' && c <= '9':
			i = rawNumber(b, i)
		case c == 't':
			i = rawLiteral(b, i, "true")
		case c == 'f':
			i = rawLiteral(b, i, "false")
		case c == 'n':
			i = rawLiteral(b, i, "null")
		default:
			return false
		}
		if i < 0 {
			return false
		}
		// After a value: containers close, or a comma leads to the next.
		for {
			if depth == 0 {
				return i == len(b)
			}
			if i >= len(b) {
				return false
			}
			d := depth - 1
			object := objects[d/64]&(1<<(d%64)) != 0
			switch c := b[i]; {
			case c == ',' && object:
				if i = memberName(b, i+1); i < 0 {
					return false
				}
				continue value
			case c == ',':
				i++
				continue value
			case c == '}' && object, c == ']' && !object:
				depth--
				i++
			default:
				return false
			}
		}
	}
}

// plainRaw reports whether b has no byte encoding/json would change in a
// valid value, whatever the structure: no control character (none is
// allowed in a string, nor whitespace outside one in canonical form), no
// <, > or &, and valid UTF-8 without U+2028 or U+2029.
func plainRaw(b []byte) bool {
	nonASCII, ok := wordScan(b, noControls)
	if !ok || bytes.IndexByte(b, '<') >= 0 || bytes.IndexByte(b, '>') >= 0 || bytes.IndexByte(b, '&') >= 0 {
		return false
	}
	return !nonASCII || validWithoutSeparators(b)
}

// noControls reports whether b holds no control character.
func noControls(b []byte) bool {
	for _, c := range b {
		if c < 0x20 {
			return false
		}
	}
	return true
}

// memberName is the index after the "name": starting at i, or -1.
func memberName(b []byte, i int) int {
	if i >= len(b) || b[i] != '"' {
		return -1
	}
	if i = rawString(b, i); i < 0 || i >= len(b) || b[i] != ':' {
		return -1
	}
	return i + 1
}

// rawString is the index after the string starting at b[i] ('"'), or -1
// if it does not end or holds an escape that is invalid (or a surrogate
// not in a pair). plainRaw has checked its characters: the text between
// escapes is hopped over, each escape found by bytes.IndexByte.
func rawString(b []byte, i int) int {
	i++
	q := indexFrom(b, i, '"') // the next quote, perhaps an escaped one
	for {
		if q == len(b) {
			return -1
		}
		j := bytes.IndexByte(b[i:q], '\\')
		if j < 0 {
			return q + 1
		}
		i += j + 1 // the escape's letter
		if i >= len(b) {
			return -1
		}
		switch b[i] {
		case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			i++
		case 'u':
			if i = unicodeEscape(b, i-1); i < 0 {
				return -1
			}
		default:
			return -1
		}
		if i > q {
			q = indexFrom(b, i, '"')
		}
	}
}

// unicodeEscape is the index after the \u escape at b[i] (its
// backslash), and after the low half that must follow a high surrogate;
// -1 if it is invalid, or half a surrogate pair alone.
func unicodeEscape(b []byte, i int) int {
	r, ok := hex4(b, i+2)
	if !ok || r >= 0xDC00 && r <= 0xDFFF {
		return -1
	}
	i += 6
	if r >= 0xD800 && r <= 0xDBFF { // the low half must follow
		if i+1 >= len(b) || b[i] != '\\' || b[i+1] != 'u' {
			return -1
		}
		if r, ok = hex4(b, i+2); !ok || r < 0xDC00 || r > 0xDFFF {
			return -1
		}
		i += 6
	}
	return i
}

// hex4 is the value of the four hex digits at b[i:], if they are.
func hex4(b []byte, i int) (rune, bool) {
	if i+4 > len(b) {
		return 0, false
	}
	var r rune
	for _, c := range b[i : i+4] {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c -= 'a' - 10
		case c >= 'A' && c <= 'F':
			c -= 'A' - 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}

// rawNumber is the index after the JSON number starting at b[i], or -1:
// -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func rawNumber(b []byte, i int) int {
	if b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && b[i] >= '1' && b[i] <= '9':
		i = digits(b, i)
	default:
		return -1
	}
	if i < len(b) && b[i] == '.' {
		if j := digits(b, i+1); j > i+1 {
			i = j
		} else {
			return -1
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		j := digits(b, i)
		if j == i {
			return -1
		}
		i = j
	}
	return i
}

// digits is the index after the digits starting at b[i].
func digits(b []byte, i int) int {
	for i < len(b) && b[i] >= '0' && b[i] <= '9' {
		i++
	}
	return i
}

// rawLiteral is the index after lit at b[i], or -1.
func rawLiteral(b []byte, i int, lit string) int {
	if !bytes.HasPrefix(b[i:], []byte(lit)) {
		return -1
	}
	return i + len(lit)
}

// Canonical reports whether b is one JSON value that [Marshal] writes
// as it is, for a json.RawMessage: valid, compact, no byte it escapes.
// It may say false of such a value; never true of another.
func Canonical(b []byte) bool { return canonicalRaw(b) }

// PlainString reports whether [Marshal] writes s as its bytes between
// quotes: no quote, backslash or control character, none of <, > and &,
// valid UTF-8 without U+2028 or U+2029.
func PlainString(s string) bool {
	b := unsafe.Slice(unsafe.StringData(s), len(s)) // read only
	return plainRaw(b) && bytes.IndexByte(b, '"') < 0 && bytes.IndexByte(b, '\\') < 0
}
