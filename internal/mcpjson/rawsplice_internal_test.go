package mcpjson

import (
	"bytes"
	stdjson "encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

// rawDoc is shaped like a tools/call's params.
type rawDoc struct {
	Meta      map[string]stdjson.RawMessage `json:"_meta,omitempty"`
	Arguments stdjson.RawMessage            `json:"arguments,omitempty"`
	Name      string                        `json:"name"`
}

func rawValue(raw []byte) *rawDoc {
	return &rawDoc{Meta: map[string]stdjson.RawMessage{"progressToken": stdjson.RawMessage(`7`)}, Arguments: raw, Name: "echo"}
}

// longRaw puts v in a raw value long enough to be spliced.
func longRaw(v string) []byte {
	return []byte(`{"pad":"` + strings.Repeat("x", SplicedMin) + `","v":` + v + `}`)
}

// sameAsEncodingJSON checks that MarshalLong and MarshalSpliced write what
// Marshal writes (errors too), that, for valid UTF-8, this is what
// encoding/json writes, and that a raw value canonicalRaw accepts is one
// encoding/json writes unchanged.
func sameAsEncodingJSON(t *testing.T, raw []byte) {
	t.Helper()
	v := rawValue(raw)
	want, wantErr := Marshal(v)
	got, err := MarshalLong(v)
	if (err == nil) != (wantErr == nil) || err != nil && err.Error() != wantErr.Error() {
		t.Fatalf("%.40q…: MarshalLong error %v, Marshal's %v", raw, err, wantErr)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("%.40q…: MarshalLong\n%.200q\nMarshal\n%.200q", raw, got, want)
	}
	b, err := MarshalSpliced(v)
	if (err == nil) != (wantErr == nil) {
		t.Fatalf("%.40q…: MarshalSpliced error %v, Marshal's %v", raw, err, wantErr)
	}
	if err == nil {
		if !bytes.Equal(b.Bytes(), want) {
			t.Fatalf("%.40q…: MarshalSpliced\n%.200q\nMarshal\n%.200q", raw, b.Bytes(), want)
		}
		b.Free()
	}
	std, stdErr := stdjson.Marshal(v)
	if (stdErr == nil) != (wantErr == nil) {
		t.Fatalf("%.40q…: encoding/json error %v, Marshal's %v", raw, stdErr, wantErr)
	}
	if utf8.Valid(raw) && !bytes.Equal(std, want) {
		t.Fatalf("%.40q…: encoding/json\n%.200q\nMarshal\n%.200q", raw, std, want)
	}
	if canonicalRaw(raw) {
		if one, err := stdjson.Marshal(stdjson.RawMessage(raw)); err != nil || !bytes.Equal(one, raw) {
			t.Fatalf("%.40q…: canonicalRaw accepts what encoding/json writes as %.200q (%v)", raw, one, err)
		}
	}
}

func TestCanonicalRaw(t *testing.T) {
	for _, c := range []struct {
		v  string
		ok bool // canonicalRaw accepts it (inside longRaw)
	}{
		{`1`, true}, {`-0`, true}, {`1e5`, true}, {`-1.25E-7`, true}, {`0.5e+3`, true},
		{`01`, false}, {`1.`, false}, {`.5`, false}, {`1e`, false}, {`-`, false}, {`+1`, false}, {`1x`, false},
		{`true`, true}, {`false`, true}, {`null`, true}, {`tru`, false}, {`nul`, false}, {`truex`, false},
		{`""`, true}, {`"a b"`, true}, {`"\"\\\/\b\f\n\r\t"`, true}, {`"\u0041"`, true}, {`"\u003c"`, true},
		{`"\ud83d\ude00"`, true}, {`"\ud83d"`, false}, {`"\ude00"`, false}, {`"\ud83dx"`, false}, {`"\ud83d\u0041"`, false},
		{`"\x"`, false}, {`"\u12"`, false}, {`"\u12g4"`, false}, {`"\`, false}, {`"abc`, false}, {`"a\"`, false},
		{`"<"`, false}, {`">"`, false}, {`"&"`, false}, {`"\u2028"`, true}, {"\"\u2028\"", false}, {"\"\u2029\"", false},
		{"\"\u2027 é 😀\"", true}, {"\"\x01\"", false}, {"\"\t\"", false}, {"\"\x7f\"", true},
		{"\"\xff\"", false}, {"\"\xe2\x80\"", false}, {"\"\xed\xa0\x80\"", false},
		{`[]`, true}, {`{}`, true}, {`[1,[2,{"a":[]}],{}]`, true}, {`{"a":{"b":{"c":null}},"a":1}`, true},
		{`[1,]`, false}, {`[,1]`, false}, {`{"a"}`, false}, {`{"a":}`, false}, {`{"a":1,}`, false}, {`{1:2}`, false},
		{`[1}`, false}, {`{"a":1]`, false}, {`[`, false}, {`]`, false}, {`[1]]`, false}, {`1 2`, false},
		{` 1`, false}, {`[1, 2]`, false}, {"[1,\n2]", false}, {`{"a": 1}`, false}, {`{ }`, false},
		{`"a":1`, false}, {`[[[[[[[[[[1]]]]]]]]]]`, true},
		{strings.Repeat("[", rawDepthMax-1) + "1" + strings.Repeat("]", rawDepthMax-1), true}, // longRaw's object is one more
		{strings.Repeat("[", rawDepthMax) + "1" + strings.Repeat("]", rawDepthMax), false},    // valid, but deeper than it follows
	} {
		raw := longRaw(c.v)
		if got := canonicalRaw(raw); got != c.ok {
			t.Errorf("canonicalRaw(%q) = %v, want %v", c.v, got, c.ok)
		}
		sameAsEncodingJSON(t, raw)
		sameAsEncodingJSON(t, []byte(c.v)) // short: the encoder's
	}
	if !canonicalRaw([]byte(`{"a":"` + strings.Repeat(`x\"`, 2000) + `"}`)) {
		t.Error("escaped quotes throughout: not accepted")
	}
}

// TestRawSplicedCopiesIn: a long canonical raw value is copied in, not
// rewritten by the encoder (the equivalence tests pass either way); one
// canonicalRaw refuses, or a short one, is not.
func TestRawSplicedCopiesIn(t *testing.T) {
	for v, want := range map[string]int{
		`"x"`:        1,
		`[1, 2]`:     0,
		`"<"`:        0,
		"\"\u2028\"": 0,
	} {
		b, n, err := marshalSpliced(rawValue(longRaw(v)))
		if err != nil || n != want {
			t.Errorf("%s: %d spliced (%v), want %d", v, n, err, want)
		}
		b.Free()
	}
	b, n, err := marshalSpliced(rawValue([]byte(`{"a":1}`)))
	if err != nil || n != 0 {
		t.Errorf("short: %d spliced (%v), want 0", n, err)
	}
	b.Free()
}

func FuzzRawSplice(f *testing.F) {
	for _, s := range []string{`1`, `"a"`, `{"a":[1,2,{"b":null}]}`, `[1, 2]`, `"\ud83d\ude00"`, `"<&>"`, "\"\u2028\"", "\"\xff\"", `01`, `{"a":1,}`, `"\x"`, `[`} {
		f.Add([]byte(s))
		f.Add(longRaw(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		sameAsEncodingJSON(t, raw)
		if len(raw) < SplicedMin {
			sameAsEncodingJSON(t, longRaw(string(raw)))
		}
	})
}

func BenchmarkRawArguments(b *testing.B) {
	args := []byte(`{"text":"` + strings.Repeat(`0123456789abcdef`, 64<<10/16) + `","n":1}`)
	v := rawValue(args)
	b.Run("marshal", func(b *testing.B) {
		b.SetBytes(int64(len(args)))
		b.ReportAllocs()
		for range b.N {
			_, _ = Marshal(v)
		}
	})
	b.Run("long", func(b *testing.B) {
		b.SetBytes(int64(len(args)))
		b.ReportAllocs()
		for range b.N {
			_, _ = MarshalLong(v)
		}
	})
}

func BenchmarkCanonicalRaw(b *testing.B) {
	args := []byte(`{"text":"` + strings.Repeat(`0123456789abcdef`, 64<<10/16) + `","n":1}`)
	b.SetBytes(int64(len(args)))
	for range b.N {
		if !canonicalRaw(args) {
			b.Fatal("refused")
		}
	}
}

func BenchmarkPlainRaw(b *testing.B) {
	args := []byte(`{"text":"` + strings.Repeat(`0123456789abcdef`, 64<<10/16) + `","n":1}`)
	b.SetBytes(int64(len(args)))
	for range b.N {
		if !plainRaw(args) {
			b.Fatal("refused")
		}
	}
}

// TestPlainString: PlainString says true exactly where Marshal writes the
// string as its bytes between quotes.
func TestPlainString(t *testing.T) {
	for _, s := range []string{"", "echo", "up__echo", "échо", "a b/c", "\x7f", "a\"b", `a\b`, "a\nb", "a<b", "a>b", "a&b", "a\u2028b", "a\u2029b", "\xff", "\xed\xa0\x80"} {
		b, err := Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		if want := string(b) == `"`+s+`"`; PlainString(s) != want {
			t.Errorf("PlainString(%q) = %v, want %v (Marshal writes %s)", s, !want, want, b)
		}
	}
}
