package mcpjson

import (
	"bytes"
	stdjson "encoding/json"
	"reflect"
	"strings"
	"sync"
)

// rawCutMin is the size from which UnmarshalRead leaves a raw member
// out of what the decoder reads again.
const rawCutMin = 4096

// UnmarshalRead is UnmarshalShared for data the decoder has read already,
// as a part of a message that jsonrpc.Decode decoded (its params): a
// member of v's struct that is a json.RawMessage, with a value of
// rawCutMin bytes or more (a tools/call's arguments), is not scanned once
// more. The other members are decoded from a copy of data without it,
// and the member is then set to its slice of data, the value it would
// have been given; so are the errors, the members being read in the same
// order. Only what the decoder has read may be given: the member's value
// is not checked again.
//
// Anything UnmarshalRead is not sure of (v not a pointer to such a
// struct, data not an object it can look through, the member twice, a
// member name with an escape) is UnmarshalShared.
func UnmarshalRead(data []byte, v any) error {
	if len(data) < rawCutMin {
		return UnmarshalShared(data, v)
	}
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Pointer || rv.IsNil() || rv.Elem().Kind() != reflect.Struct {
		return UnmarshalShared(data, v)
	}
	fields := rawFields(rv.Elem().Type())
	if len(fields) == 0 {
		return UnmarshalShared(data, v)
	}
	type cut struct {
		field int
		val   []byte
	}
	var cuts [4]cut
	n := 0
	rest := make([]byte, 0, 256)
	rest = append(rest, '{')
	seen := 0 // fields cut, by bit
	ok := members(data, func(name, member, val []byte) bool {
		f, is := fields[string(name)]
		if is && seen&(1<<f) != 0 {
			return false // twice: the decoder says so
		}
		if is && len(val) >= rawCutMin && n < len(cuts) {
			seen |= 1 << f
			cuts[n] = cut{f, val}
			n++
			return true
		}
		if is {
			seen |= 1 << f
		}
		if len(rest) > 1 {
			rest = append(rest, ',')
		}
		rest = append(rest, member...)
		return true
	})
	if !ok || n == 0 {
		return UnmarshalShared(data, v)
	}
	if err := UnmarshalShared(append(rest, '}'), v); err != nil {
		return err
	}
	s := rv.Elem()
	for _, c := range cuts[:n] {
		s.Field(c.field).SetBytes(c.val)
	}
	return nil
}

var rawFieldsOf sync.Map // reflect.Type -> map[string]int

var rawMessageType = reflect.TypeFor[stdjson.RawMessage]()

// rawFields are t's json.RawMessage fields by JSON name, or nil when t
// has a field UnmarshalRead cannot be sure how the decoder names (no
// name in its tag, embedded, other options than omitempty and omitzero)
// or too many of them.
func rawFields(t reflect.Type) map[string]int {
	if m, ok := rawFieldsOf.Load(t); ok {
		return m.(map[string]int)
	}
	var m map[string]int
	for i := range t.NumField() {
		f := t.Field(i)
		tag, has := f.Tag.Lookup("json")
		name, opts, _ := strings.Cut(tag, ",")
		for _, o := range strings.Split(opts, ",") {
			if o != "" && o != "omitempty" && o != "omitzero" {
				has = false
			}
		}
		switch {
		case !f.IsExported() && !f.Anonymous:
			continue // not decoded
		case f.Anonymous || !has || name == "" || name == "-" || strings.ContainsAny(name, `"\'`):
			m = nil
			rawFieldsOf.Store(t, m)
			return m
		case f.Type == rawMessageType && i < 62:
			if m == nil {
				m = map[string]int{}
			}
			m[name] = i
		}
	}
	rawFieldsOf.Store(t, m)
	return m
}

// Members calls fn with the name (without its quotes) and the raw value
// of each member of the object data holds, white space around it
// allowed, until fn says stop; false when it stopped, or data is not an
// object Members can look through: one that ends within data, with no
// member name holding an escape. It does not validate, as [Member] does
// not: data must be JSON the decoder has read (a message's params that
// jsonrpc.Decode read), or its answer is anything.
func Members(data []byte, fn func(name, val []byte) bool) bool {
	return members(data, func(name, _, val []byte) bool { return fn(name, val) })
}

// Elements calls fn with each element of the JSON array data holds,
// white space around it allowed, until fn says stop; false when it
// stopped, or data is not an array Elements can look through. As
// [Members], it does not validate: data must be JSON the decoder has read.
func Elements(data []byte, fn func(val []byte) bool) bool {
	i := skipSpace(data, 0)
	if i >= len(data) || data[i] != '[' {
		return false
	}
	i++
	for {
		i = skipSpace(data, i)
		if i >= len(data) {
			return false
		}
		if data[i] == ']' {
			return skipSpace(data, i+1) == len(data)
		}
		start := i
		var ok bool
		if i, ok = skipValue(data, i); !ok {
			return false
		}
		if !fn(data[start:i]) {
			return false
		}
	}
}

// members calls fn with each member of the object data holds (after
// white space): its name (without quotes), the whole member (name,
// colon and value, as in data) and its value; false when data is not an
// object members can look through (Member's rules), or fn said stop.
func members(data []byte, fn func(name, member, val []byte) bool) bool {
	i := skipSpace(data, 0)
	if i >= len(data) || data[i] != '{' {
		return false
	}
	i++
	for {
		i = skipSpace(data, i)
		if i >= len(data) {
			return false
		}
		if data[i] == '}' {
			return skipSpace(data, i+1) == len(data)
		}
		if data[i] != '"' {
			return false
		}
		start := i
		end, ok := skipString(data, i)
		if !ok {
			return false
		}
		name := data[i+1 : end-1]
		for i = end; i < len(data) && (data[i] == ' ' || data[i] == '\t' || data[i] == '\n' || data[i] == '\r'); i++ {
		}
		if i >= len(data) || data[i] != ':' || bytes.IndexByte(name, '\\') >= 0 {
			return false
		}
		i = skipSpace(data, i+1)
		vstart := i
		if i, ok = skipValue(data, i); !ok {
			return false
		}
		if !fn(name, data[start:i], data[vstart:i]) {
			return false
		}
	}
}
