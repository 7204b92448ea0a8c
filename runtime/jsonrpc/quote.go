package jsonrpc

import (
	"strconv"
	"unicode/utf8"
)

// MaxQuoted is how many bytes of a value the peer sent an error message
// repeats: a 4 MB method name or header is not sent back whole.
const MaxQuoted = 100

// Clip returns s, or its first MaxQuoted bytes (cut at a character
// boundary) followed by "…" when it is longer.
func Clip(s string) string {
	if len(s) <= MaxQuoted {
		return s
	}
	return clip(s) + "…"
}

// Quote returns s quoted as %q does, or its first MaxQuoted bytes quoted
// and followed by "…" when it is longer.
func Quote(s string) string {
	if len(s) <= MaxQuoted {
		return strconv.Quote(s)
	}
	return strconv.Quote(clip(s)) + "…"
}

// clip is the first MaxQuoted bytes of s, less a character cut in two.
func clip(s string) string {
	n := MaxQuoted
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
