package gateway

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
)

// MaxName is the longest tool or prompt name the gateway exposes.
const MaxName = 64

// ValidName reports whether name may be exposed as it is: it matches
// ^[a-zA-Z0-9_-]{1,64}$.
func ValidName(name string) bool {
	if len(name) == 0 || len(name) > MaxName {
		return false
	}
	for i := 0; i < len(name); i++ {
		if !nameByte(name[i]) {
			return false
		}
	}
	return true
}

func nameByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-'
}

// ExposedName is the name a tool or prompt called name gets under prefix:
// prefix+name when that is a valid name, else [Shorten] of it. It depends
// on nothing but its arguments, so it is the same across restarts.
//
//	ExposedName("github__", "create_issue") == "github__create_issue"
//	ExposedName("github__", "create.issue") == "github__create_issue_" + hash8("github__create.issue")
func ExposedName(prefix, name string) string {
	full := prefix + name
	if ValidName(full) {
		return full
	}
	return Shorten(full, full)
}

// Shorten makes a valid name out of s: a readable head of s, with every
// character a name may not hold replaced by "_" and cut so that the whole
// fits in [MaxName], then "_" and the first 8 hex digits of the SHA-256 of
// key. The exposed name of an invalid prefixed name is Shorten(full, full).
func Shorten(s, key string) string {
	sum := sha256.Sum256([]byte(key))
	suffix := "_" + hex.EncodeToString(sum[:4])
	var b strings.Builder
	for _, r := range s {
		if b.Len() >= MaxName-len(suffix) {
			break
		}
		if r < 0x80 && nameByte(byte(r)) {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	return b.String() + suffix
}

// disambiguate is the name a tool or prompt gets when the name it would
// have is already taken (by mcpx's own tools or an earlier upstream): its
// name, shortened with a hash of the upstream and the original name, so it
// differs from the name it collided with and stays the same across
// restarts for the same configuration.
func disambiguate(name, upstream, original string) string {
	return Shorten(name, "mcpx collision\x00"+upstream+"\x00"+original)
}
