package requeststate

import (
	"encoding/base64"
	"fmt"
	"strings"
)

const (
	// MinKeyLen is the shortest key, in bytes: HMAC-SHA256's own output
	// length, and AES-256's key.
	MinKeyLen = 32
	// MaxKeys bounds the keys one setting lists: rotation needs two.
	MaxKeys = 8
	// EnvKey is the environment variable that gives the key when the
	// configuration does not.
	EnvKey = "MCPX_STATE_KEY"
	// KeyHint says how to make a key.
	KeyHint = "generate one with `openssl rand -base64 32`"
)

// ParseKeys reads the state key setting (mcpx.stateKey, or MCPX_STATE_KEY):
// one or more keys separated by commas, each the base64 of at least
// [MinKeyLen] random bytes (standard or URL-safe alphabet, padding
// optional; spaces around a key are ignored). The first key seals; every
// key opens. That is how a key is rotated across replicas without
// refusing the rounds in flight: give every replica "NEW,OLD", and once
// every state sealed under OLD has expired (its TTL), "NEW". A state
// sealed under a key no longer listed is refused.
func ParseKeys(s string) ([][]byte, error) {
	parts := strings.Split(s, ",")
	if len(parts) > MaxKeys {
		return nil, fmt.Errorf("lists %d keys; at most %d are read (the first seals, the others only open)", len(parts), MaxKeys)
	}
	keys := make([][]byte, 0, len(parts))
	for i, part := range parts {
		which := "the key"
		if len(parts) > 1 {
			which = fmt.Sprintf("key %d of %d", i+1, len(parts))
		}
		part = strings.TrimSpace(part)
		if part == "" {
			return nil, fmt.Errorf("%s is empty; %s", which, KeyHint)
		}
		k, ok := decodeKey(part)
		switch {
		case !ok:
			return nil, fmt.Errorf("%s is not base64; %s", which, KeyHint)
		case len(k) < MinKeyLen:
			return nil, fmt.Errorf("%s is %d bytes; a state key is at least %d (%s)", which, len(k), MinKeyLen, KeyHint)
		}
		keys = append(keys, k)
	}
	return keys, nil
}

func decodeKey(s string) ([]byte, bool) {
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		if k, err := enc.DecodeString(s); err == nil {
			return k, true
		}
	}
	return nil, false
}

// Source says where a sealer's keys came from.
type Source string

const (
	FromConfig Source = "mcpx.stateKey"
	FromEnv    Source = EnvKey
	// FromRandom: neither was set; the key is the process's own.
	FromRandom Source = "random"
)

// Load returns the sealer a process uses: with the keys of configured
// (mcpx.stateKey, already checked by the config) when it is not "", else
// those of $MCPX_STATE_KEY when getenv has it not empty, else a random key
// of the process's own ([Random]), whose states open in no other process.
// Replicas that share rounds must be given the same keys.
func Load(configured string, getenv func(string) (string, bool)) (*Sealer, Source, error) {
	src, setting := FromConfig, configured
	if setting == "" && getenv != nil {
		if v, ok := getenv(EnvKey); ok && strings.TrimSpace(v) != "" {
			src, setting = FromEnv, v
		}
	}
	if setting == "" {
		return Random(), FromRandom, nil
	}
	keys, err := ParseKeys(setting)
	if err != nil {
		return nil, src, fmt.Errorf("%s: %w", src, err)
	}
	s, err := New(keys...)
	return s, src, err
}
