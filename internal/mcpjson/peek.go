package mcpjson

import (
	"bytes"

	json "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// Decoder is what an UnmarshalJSONFrom method reads from.
type Decoder = jsontext.Decoder

// UnmarshalDecode reads the next value from dec into v with dec's own
// options (those of the Unmarshal or UnmarshalShared that called the
// method): a union's variant decoded in the same pass as the value that
// holds it.
func UnmarshalDecode(dec *Decoder, v any) error { return json.UnmarshalDecode(dec, v) }

// PeekMember is Member of the object dec is about to read, when the
// whole of it is in dec's buffer (it is for Unmarshal and
// UnmarshalShared, whose buffer is their input); nothing is read. A
// union picks its variant by it and decodes that variant in the one pass
// of the decoder, instead of reading the value, probing it for its
// discriminator and decoding it once more (a 64 kB text block scanned
// three times).
func PeekMember(dec *Decoder, name string) (val []byte, ok bool) {
	if dec.PeekKind() != '{' {
		return nil, false
	}
	return Member(dec.UnreadBuffer(), name)
}

// Member finds the member called name of the JSON object that data
// starts with (after white space and a separator, as a decoder's unread
// buffer does), without decoding it: val is the member's raw value, nil
// if the object has no such member. ok is false unless the answer is
// certain: the object must end within data, no member name may hold an
// escape (it could spell name), and name must appear at most once.
//
// Member does not validate: strings are skipped by their closing quote
// (bytes.IndexByte), so a 64 kB text costs little. For valid JSON the
// answer is the decoder's; for invalid JSON it may be anything, and the
// caller must still decode the value (which then fails).
func Member(data []byte, name string) (val []byte, ok bool) {
	i := skipSpace(data, 0)
	if i >= len(data) || data[i] != '{' {
		return nil, false
	}
	i++
	found := false
	for {
		i = skipSpace(data, i) // also the comma between members
		if i >= len(data) {
			return nil, false
		}
		if data[i] == '}' {
			return val, true
		}
		if data[i] != '"' {
			return nil, false
		}
		end, ok := skipString(data, i)
		if !ok {
			return nil, false
		}
		n := data[i+1 : end-1]
		if bytes.IndexByte(n, '\\') >= 0 {
			return nil, false
		}
		i = skipSpace(data, end) // and the colon
		start := i
		if i, ok = skipValue(data, i); !ok {
			return nil, false
		}
		if string(n) == name {
			if found {
				return nil, false
			}
			found, val = true, data[start:i]
		}
	}
}

// skipSpace skips white space and the separators ':' and ','.
func skipSpace(b []byte, i int) int {
	for i < len(b) {
		switch b[i] {
		case ' ', '\t', '\n', '\r', ':', ',':
			i++
		default:
			return i
		}
	}
	return i
}

// skipString returns the index after the string that starts at b[i], a
// quote: its closing quote is the first one not escaped.
func skipString(b []byte, i int) (int, bool) {
	j := i + 1
	for {
		k := bytes.IndexByte(b[j:], '"')
		if k < 0 {
			return len(b), false
		}
		q := j + k
		n := 0
		for p := q - 1; p > i && b[p] == '\\'; p-- {
			n++
		}
		if n%2 == 0 {
			return q + 1, true
		}
		j = q + 1
	}
}

// skipValue returns the index after the value that starts at b[i].
func skipValue(b []byte, i int) (int, bool) {
	if i >= len(b) {
		return i, false
	}
	switch b[i] {
	case '"':
		return skipString(b, i)
	case '{', '[':
		depth := 0
		for i < len(b) {
			switch b[i] {
			case '"':
				j, ok := skipString(b, i)
				if !ok {
					return j, false
				}
				i = j
				continue
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					return i + 1, true
				}
			}
			i++
		}
		return i, false
	}
	for j := i; j < len(b); j++ {
		switch b[j] {
		case ',', '}', ']', ' ', '\t', '\n', '\r':
			return j, j > i
		}
	}
	return len(b), false
}
