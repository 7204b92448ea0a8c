package requeststate

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/mcpx-dev/mcpx/runtime/server"
)

var (
	keyA = bytes.Repeat([]byte{'a'}, 32)
	keyB = bytes.Repeat([]byte{'b'}, 32)
)

func sealer(t *testing.T, keys ...[]byte) *Sealer {
	t.Helper()
	s, err := New(keys...)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func bind(t *testing.T, method, params, ns string) Binding {
	t.Helper()
	b, err := Bind(method, []byte(params), ns)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// refused checks that err is an *Error matching why and a
// *server.InvalidParamsError (the edge's -32602) with a reason of one
// sentence.
func refused(t *testing.T, what string, err, why error) {
	t.Helper()
	var e *Error
	var invalid *server.InvalidParamsError
	switch {
	case !errors.As(err, &e):
		t.Errorf("%s: %v, want an *Error", what, err)
	case !errors.Is(err, why):
		t.Errorf("%s: %v (%v), want %v", what, err, e.Why, why)
	case !errors.As(err, &invalid) || invalid.Reason != e.Reason:
		t.Errorf("%s: %v is no InvalidParamsError with its reason", what, err)
	case strings.Count(e.Reason, ". ") > 0 || strings.HasSuffix(e.Reason, ".") || !strings.HasPrefix(e.Reason, "requestState "):
		t.Errorf("%s: reason %q is not one sentence naming requestState", what, e.Reason)
	}
}

const call = `{"name":"ns__ask","arguments":{"city":"Paris","n":3}}`

// TestSealOpen: a state opens on its own request and carries its payload;
// it opens as well on a replica given the same key, with no session or
// other shared state between them.
func TestSealOpen(t *testing.T) {
	b := bind(t, "tools/call", call, "ns")
	p := Payload{Upstream: "the upstream's own state", Parked: "call-17"}
	state, err := sealer(t, keyA).Seal(b, p, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(state, "mcpx1.") {
		t.Errorf("state %q lacks its format prefix", state)
	}
	replica := sealer(t, keyA)
	got, err := replica.Open(state, bind(t, "tools/call", call, "ns"))
	if err != nil || got != p {
		t.Fatalf("Open: %+v, %v; want %+v", got, err, p)
	}
	empty, err := replica.Seal(b, Payload{}, 0)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := replica.Open(empty, b); err != nil || got != (Payload{}) {
		t.Errorf("an empty payload: %+v, %v", got, err)
	}
}

// TestPayloadNotShown: the payload (an upstream's requestState) is
// encrypted: neither the state nor its decoded bytes contain it, and two
// seals of one payload differ.
func TestPayloadNotShown(t *testing.T) {
	s := sealer(t, keyA)
	b := bind(t, "tools/call", call, "ns")
	secret := "upstream-secret-" + strings.Repeat("x", 40)
	one, _ := s.Seal(b, Payload{Upstream: secret}, 0)
	two, _ := s.Seal(b, Payload{Upstream: secret}, 0)
	raw, err := base64.RawURLEncoding.DecodeString(strings.TrimPrefix(one, prefix))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(one, "upstream-secret") || bytes.Contains(raw, []byte("upstream-secret")) || bytes.Contains(raw, []byte("tools/call")) {
		t.Errorf("the state shows what it carries: %q", raw)
	}
	if one == two {
		t.Error("two seals of one payload are the same string")
	}
}

// TestTampered: changing any byte of a state, or any character of its
// text, is refused; the key id's bytes say another key, every other byte
// that the state was altered.
func TestTampered(t *testing.T) {
	s := sealer(t, keyA)
	b := bind(t, "tools/call", call, "ns")
	state, _ := s.Seal(b, Payload{Upstream: "u"}, 0)
	raw, _ := base64.RawURLEncoding.DecodeString(strings.TrimPrefix(state, prefix))
	for i := range raw {
		for _, flip := range []byte{0x01, 0x80} {
			bad := bytes.Clone(raw)
			bad[i] ^= flip
			_, err := s.Open(prefix+base64.RawURLEncoding.EncodeToString(bad), b)
			why := ErrTampered
			if i < keyIDLen {
				why = ErrOtherKey
			}
			refused(t, fmt.Sprintf("byte %d", i), err, why)
		}
	}
	for _, bad := range []string{
		state[:len(state)-1],                         // cut short
		state + "A",                                  // lengthened
		state[:len(state)-3] + "***",                 // not base64url
		strings.Replace(state, "mcpx1.", "mcpx1", 1), // no dot
		"", "mcpx1.", "{}", "x", strings.Repeat("A", 300),
		prefix + strings.Repeat("A", MaxLen), // longer than any
	} {
		_, err := s.Open(bad, b)
		if !errors.Is(err, ErrTampered) && !errors.Is(err, ErrMalformed) && !errors.Is(err, ErrOtherKey) {
			t.Errorf("%.40q: %v, want it refused as altered or malformed", bad, err)
		}
		if e, ok := err.(*Error); ok {
			refused(t, "text", err, e.Why)
		}
	}
}

// TestExpired: a state opens until its expiry, not at it nor after.
func TestExpired(t *testing.T) {
	s := sealer(t, keyA)
	now := time.Date(2026, 7, 28, 12, 0, 0, 0, time.UTC)
	s.now = func() time.Time { return now }
	b := bind(t, "tools/call", call, "ns")
	state, _ := s.Seal(b, Payload{}, time.Minute)
	now = now.Add(time.Minute - time.Millisecond)
	if _, err := s.Open(state, b); err != nil {
		t.Errorf("a millisecond before expiry: %v", err)
	}
	now = now.Add(time.Millisecond)
	_, err := s.Open(state, b)
	refused(t, "at expiry", err, ErrExpired)
	now = now.Add(90 * time.Second)
	_, err = s.Open(state, b)
	refused(t, "after", err, ErrExpired)
	if !strings.Contains(err.Error(), "1m30s ago") {
		t.Errorf("reason %q does not say how long ago", err)
	}
	s.TTL = time.Second
	short, _ := s.Seal(b, Payload{}, 0)
	now = now.Add(time.Second)
	_, err = s.Open(short, b)
	refused(t, "the sealer's TTL", err, ErrExpired)
}

// TestOtherRequest: a state is refused on another method, on other
// params, and in another namespace, each saying which.
func TestOtherRequest(t *testing.T) {
	s := sealer(t, keyA)
	state, _ := s.Seal(bind(t, "tools/call", call, "ns"), Payload{}, 0)
	for _, tc := range []struct {
		about string
		b     Binding
		why   error
		says  string
	}{
		{"method", bind(t, "prompts/get", call, "ns"), ErrOtherRequest, "issued for a tools/call request, not prompts/get"},
		{"arguments", bind(t, "tools/call", `{"name":"ns__ask","arguments":{"city":"Rome","n":3}}`, "ns"), ErrOtherRequest, "other params"},
		{"tool", bind(t, "tools/call", `{"name":"ns__other","arguments":{"city":"Paris","n":3}}`, "ns"), ErrOtherRequest, "other params"},
		{"namespace", bind(t, "tools/call", call, "other"), ErrOtherNamespace, `issued in namespace "ns", not "other"`},
	} {
		_, err := s.Open(state, tc.b)
		refused(t, tc.about, err, tc.why)
		if err != nil && !strings.Contains(err.Error(), tc.says) {
			t.Errorf("%s: %q does not say %q", tc.about, err, tc.says)
		}
	}
}

// TestKeys: a state sealed under another key is refused, by a sealer of
// that other key and by a per-process random one; rotation lists the new
// key first: it seals under the new one and still opens the old one's
// states, until the old key is dropped.
func TestKeys(t *testing.T) {
	b := bind(t, "tools/call", call, "ns")
	old, _ := sealer(t, keyA).Seal(b, Payload{Parked: "p"}, 0)
	_, err := sealer(t, keyB).Open(old, b)
	refused(t, "another key", err, ErrOtherKey)
	_, err = Random().Open(old, b)
	refused(t, "a random key", err, ErrOtherKey)
	r1 := Random()
	fromR1, _ := r1.Seal(b, Payload{}, 0)
	_, err = Random().Open(fromR1, b)
	refused(t, "another process's random key", err, ErrOtherKey)
	if _, err := r1.Open(fromR1, b); err != nil {
		t.Errorf("a random key opens its own: %v", err)
	}

	rotating := sealer(t, keyB, keyA)
	if p, err := rotating.Open(old, b); err != nil || p.Parked != "p" {
		t.Errorf("rotating opens the old key's state: %+v, %v", p, err)
	}
	fresh, _ := rotating.Seal(b, Payload{}, 0)
	if _, err := sealer(t, keyB).Open(fresh, b); err != nil {
		t.Errorf("rotating seals under the new key: %v", err)
	}
	_, err = sealer(t, keyA).Open(fresh, b)
	refused(t, "the old key alone, a state of the new", err, ErrOtherKey)
}

// TestFormats: a state of another format, or a payload of another
// version, is refused saying so; a later format can be told apart.
func TestFormats(t *testing.T) {
	s := sealer(t, keyA)
	b := bind(t, "tools/call", call, "ns")
	_, err := s.Open("mcpx2.AAAA", b)
	refused(t, "format 2", err, ErrFormat)
	if !strings.Contains(err.Error(), "format 2") {
		t.Errorf("%q does not name the format", err)
	}
	v3, err := s.seal(s.plaintext(3, s.now().Add(time.Minute), b, Payload{}))
	if err != nil {
		t.Fatal(err)
	}
	_, err = s.Open(v3, b)
	refused(t, "payload version 3", err, ErrFormat)
	// A verified plaintext that does not parse (only a faulty mcpx
	// writes one) is refused, not read.
	bad, _ := s.seal(append(s.plaintext(payloadVersion, s.now().Add(time.Minute), b, Payload{}), 0))
	_, err = s.Open(bad, b)
	refused(t, "trailing bytes", err, ErrMalformed)
	if _, err := s.Seal(b, Payload{Upstream: strings.Repeat("u", MaxLen)}, 0); err == nil {
		t.Error("a payload beyond MaxLen was sealed")
	}
}

// TestOwner: a state opens only for the principal it was issued to.
func TestOwner(t *testing.T) {
	s := sealer(t, keyA)
	b := bind(t, "tools/call", call, "ns")
	b.Owner = "sub:alice"
	st, err := s.Seal(b, Payload{Upstream: "u"}, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Open(st, b); err != nil {
		t.Fatalf("the owner's retry: %v", err)
	}
	for _, other := range []string{"sub:bob", ""} {
		o := b
		o.Owner = other
		_, err := s.Open(st, o)
		refused(t, "owner "+other, err, ErrOtherOwner)
		if strings.Contains(err.Error(), "alice") {
			t.Errorf("%q names the owner", err)
		}
	}
}

// FuzzOpen: Open on arbitrary input never panics, and only a state Seal
// made opens.
func FuzzOpen(f *testing.F) {
	s, _ := New(keyA)
	// A fixed iv and clock: every fuzzing process seals the same good state.
	s.fill = func(b []byte) { copy(b, "0123456789abcdef") }
	s.now = func() time.Time { return time.Date(2026, 7, 28, 0, 0, 0, 0, time.UTC) }
	b, _ := Bind("tools/call", []byte(call), "ns")
	good, _ := s.Seal(b, Payload{Upstream: "u", Parked: "p"}, time.Hour)
	for _, seed := range []string{good, good[:len(good)-5], "mcpx1.", "mcpx1.AAAA", "mcpx2.x", "mcpx", "", "mcpx65535.", "mcpx1." + strings.Repeat("_", 80)} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, state string) {
		p, err := s.Open(state, b)
		if err == nil && state != good {
			// Open decodes strictly (no stray bits in the last
			// character), so no other text spells the same bytes.
			t.Fatalf("%q opened: %+v", state, p)
		}
		if err != nil {
			var e *Error
			if !errors.As(err, &e) || e.Reason == "" {
				t.Fatalf("%q: %v is no *Error with a reason", state, err)
			}
		}
	})
}
