package schemas

import (
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

// pointerEscaper escapes a JSON pointer reference token (RFC 6901 §3).
var pointerEscaper = strings.NewReplacer("~", "~0", "/", "~1")

// Pointer joins reference tokens, such as a jsonschema instance location,
// into a JSON pointer: "" for none, "/a/b~1c" for "a" and "b/c".
func Pointer(tokens ...string) string {
	var b strings.Builder
	for _, t := range tokens {
		b.WriteByte('/')
		pointerEscaper.WriteString(&b, t)
	}
	return b.String()
}

var english = message.NewPrinter(language.English)

// Problem is what e itself says is wrong, in English, without its causes.
func Problem(e *jsonschema.ValidationError) string {
	return e.ErrorKind.LocalizedString(english)
}

// Failure is one leaf of a validation error's tree of causes.
type Failure struct {
	Pointer string // where in the instance, a JSON pointer ("" for the whole)
	Problem string // what is wrong there, in English
}

// Failures lists the leaves of e's tree of causes in order: the failures a
// person has to fix, without the "does not match any of" wrappers.
func Failures(e *jsonschema.ValidationError) []Failure {
	if len(e.Causes) == 0 {
		return []Failure{{Pointer: Pointer(e.InstanceLocation...), Problem: Problem(e)}}
	}
	var out []Failure
	for _, c := range e.Causes {
		out = append(out, Failures(c)...)
	}
	return out
}
