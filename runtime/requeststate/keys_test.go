package requeststate

import (
	"encoding/base64"
	"strings"
	"testing"
)

// TestParseKeys: each alphabet and padding is read; a key that is empty,
// not base64 or shorter than 32 bytes, and too many keys, are refused
// with a message saying which key and how to make one.
func TestParseKeys(t *testing.T) {
	k := make([]byte, 32)
	for i := range k {
		k[i] = byte(250 - i) // both alphabets' extra characters
	}
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		keys, err := ParseKeys(" " + enc.EncodeToString(k) + " ")
		if err != nil || len(keys) != 1 || string(keys[0]) != string(k) {
			t.Errorf("%s: %v, %v", enc.EncodeToString(k), keys, err)
		}
	}
	two := base64.StdEncoding.EncodeToString(keyB) + ", " + base64.StdEncoding.EncodeToString(keyA)
	if keys, err := ParseKeys(two); err != nil || len(keys) != 2 || string(keys[0]) != string(keyB) {
		t.Errorf("two keys: %v", err)
	}
	short := base64.StdEncoding.EncodeToString(make([]byte, 16))
	for _, tc := range []struct{ setting, says string }{
		{"", "the key is empty"},
		{"not base64!", "the key is not base64"},
		{short, "the key is 16 bytes; a state key is at least 32"},
		{two + ",", "key 3 of 3 is empty"},
		{base64.StdEncoding.EncodeToString(keyA) + "," + short, "key 2 of 2 is 16 bytes"},
		{strings.Repeat(base64.StdEncoding.EncodeToString(keyA)+",", MaxKeys) + "x", "lists 9 keys; at most 8"},
	} {
		_, err := ParseKeys(tc.setting)
		if err == nil || !strings.Contains(err.Error(), tc.says) {
			t.Errorf("%q: %v, want %q", tc.setting, err, tc.says)
		}
		if err != nil && !strings.Contains(tc.says, "lists") && !strings.Contains(err.Error(), KeyHint) {
			t.Errorf("%q: %v does not say how to make a key", tc.setting, err)
		}
	}
}

// TestLoad: the configured key comes first, then MCPX_STATE_KEY, else the
// process's own random key; a bad MCPX_STATE_KEY is an error naming it.
func TestLoad(t *testing.T) {
	a, b := base64.StdEncoding.EncodeToString(keyA), base64.StdEncoding.EncodeToString(keyB)
	env := func(v string) func(string) (string, bool) {
		return func(name string) (string, bool) {
			if name == EnvKey && v != "" {
				return v, true
			}
			return "", false
		}
	}
	bnd := bind(t, "tools/call", call, "ns")
	byA, _ := sealer(t, keyA).Seal(bnd, Payload{}, 0)
	for _, tc := range []struct {
		configured, env string
		src             Source
		opensA          bool
	}{
		{a, b, FromConfig, true},
		{b, a, FromConfig, false},
		{"", a, FromEnv, true},
		{"", " ", FromRandom, false},
		{"", "", FromRandom, false},
	} {
		s, src, err := Load(tc.configured, env(tc.env))
		if err != nil || src != tc.src {
			t.Errorf("%+v: %v from %s", tc, err, src)
			continue
		}
		if _, err := s.Open(byA, bnd); (err == nil) != tc.opensA {
			t.Errorf("%+v: opening key A's state: %v", tc, err)
		}
	}
	if _, _, err := Load("", env("short")); err == nil || !strings.HasPrefix(err.Error(), "MCPX_STATE_KEY: ") {
		t.Errorf("a bad MCPX_STATE_KEY: %v", err)
	}
	if _, err := New(); err == nil {
		t.Error("New with no key")
	}
	if _, err := New(keyA[:31]); err == nil {
		t.Error("New with a 31-byte key")
	}
}
