// Package requeststate seals and opens mcpx's own requestState, the opaque
// string a 2026-07-28 InputRequiredResult hands the client and the client
// echoes on its retry (MRTR page, "Multi Round-Trip Requests"). The page
// makes the state attacker-controlled input that a server MUST verify, and
// asks that it carry an expiry and the identity of the request it answers.
//
// # What a state binds
//
// A state opens only on the request it was issued for, in the namespace it
// was issued in, before it expires: the method, a SHA-256 of the params
// without _meta, inputResponses and requestState (see [Bind]), the
// namespace and the expiry are sealed into it and compared on [Sealer.Open].
// mcpx has no authenticated principal to add, so anyone holding a state
// can replay it on the same request until it expires; binding does not
// make it single-use (the page's warning), so a bridge that must consume
// something once enforces that itself. No session is involved: a state
// opens on any mcpx holding the key, which is what lets replicas share the
// rounds of one call.
//
// # What a state carries
//
// A [Payload]: what mcpx needs on the retry, such as an upstream's own
// requestState (which so reaches the client only inside mcpx's, encrypted,
// and returns to the upstream only from the namespace it came from) or the
// id of a call parked in mcpx between rounds.
//
// # Format 1
//
//	"mcpx1." base64url(keyID[4] | iv[16] | AES-256-CTR(plaintext) | HMAC-SHA256[32])
//
// The plaintext is a payload version byte (1), the expiry (Unix
// milliseconds, 8 bytes big-endian), then the method, the params digest
// (32 bytes), the namespace and the payload's fields, each string as a
// uvarint length and its bytes. The HMAC covers the prefix, the key id,
// the iv and the ciphertext (encrypt-then-MAC), so it covers every bound
// member; a state fails verification before anything in it is read. The
// encryption and MAC keys and the key id are derived from the configured
// key with HKDF-SHA256. The prefix names the format and the version byte
// the payload's layout, so that a later mcpx can change either and an
// older one refuses what it cannot read, saying so.
package requeststate

import (
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"crypto/hkdf"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/mcpx-dev/mcpx/runtime/jsonrpc"
	"github.com/mcpx-dev/mcpx/runtime/server"
)

const (
	// DefaultTTL is how long a state opens when its sealer is given no
	// other: long enough for a person to answer an elicitation.
	DefaultTTL = 10 * time.Minute
	// MaxLen bounds a sealed state, in bytes: [Sealer.Seal] refuses a
	// payload that would make it longer, and [Sealer.Open] reads no more.
	MaxLen = 256 << 10

	prefix         = "mcpx1."
	payloadVersion = 2 // 2 added the owner
	keyIDLen       = 4
	ivLen          = aes.BlockSize
	tagLen         = sha256.Size
)

// Payload is what a state carries for mcpx, opaque to the client.
type Payload struct {
	// Upstream is an upstream's own requestState, to be sent back to it
	// on the retry; "" when there is none. A built-in namespace, which is
	// its own upstream, keeps its answers so far here (catalog.Asker).
	Upstream string
	// Parked names a call parked in mcpx between rounds; "" when none.
	Parked string
}

// Why a state does not open. [Sealer.Open] returns an [*Error] that
// matches one of these with errors.Is.
var (
	ErrMalformed      = errors.New("requestState: not one mcpx issued")
	ErrFormat         = errors.New("requestState: a format this mcpx does not read")
	ErrOtherKey       = errors.New("requestState: sealed under another key")
	ErrTampered       = errors.New("requestState: altered")
	ErrExpired        = errors.New("requestState: expired")
	ErrOtherRequest   = errors.New("requestState: issued for another request")
	ErrOtherNamespace = errors.New("requestState: issued in another namespace")
	ErrOtherOwner     = errors.New("requestState: issued to another principal")
)

// Error is a state that does not open: Why is one of the Err values above,
// Reason the one sentence the client is told. It is also a
// [*server.InvalidParamsError] (errors.As), which the edge answers -32602
// with the reason, in every revision.
type Error struct {
	Why    error
	Reason string
}

func (e *Error) Error() string { return e.Reason }

func (e *Error) Unwrap() []error {
	return []error{e.Why, &server.InvalidParamsError{Reason: e.Reason}}
}

func refuse(why error, format string, args ...any) *Error {
	return &Error{Why: why, Reason: fmt.Sprintf(format, args...)}
}

// key is one configured key, expanded.
type key struct {
	id    [keyIDLen]byte
	block cipher.Block // AES-256; safe for concurrent use
	mac   []byte
}

func expand(secret []byte) (key, error) {
	var k key
	derive := func(info string, n int) []byte {
		b, err := hkdf.Key(sha256.New, secret, nil, "mcpx requestState 1 "+info, n)
		if err != nil {
			panic(err) // only for n beyond 255 hash lengths
		}
		return b
	}
	copy(k.id[:], derive("key id", keyIDLen))
	block, err := aes.NewCipher(derive("encryption", 32))
	if err != nil {
		return k, err
	}
	k.block, k.mac = block, derive("authentication", 32)
	return k, nil
}

// Sealer seals states with its first key and opens those sealed with any
// of its keys. It is safe for concurrent use.
type Sealer struct {
	keys []key
	// TTL is how long a state sealed without a ttl of its own opens;
	// [DefaultTTL] when zero.
	TTL  time.Duration
	now  func() time.Time
	fill func([]byte) // draws ivs: crypto/rand
}

// New returns a sealer for keys, each at least [MinKeyLen] bytes: the
// first seals, every one opens (see [ParseKeys] for rotation).
func New(keys ...[]byte) (*Sealer, error) {
	if len(keys) == 0 {
		return nil, errors.New("requestState: no key")
	}
	s := &Sealer{now: time.Now, fill: func(b []byte) { rand.Read(b) }}
	for i, k := range keys {
		if len(k) < MinKeyLen {
			return nil, fmt.Errorf("requestState: key %d is %d bytes; a state key is at least %d", i+1, len(k), MinKeyLen)
		}
		x, err := expand(k)
		if err != nil {
			return nil, err
		}
		s.keys = append(s.keys, x)
	}
	return s, nil
}

// Random returns a sealer with a key of its own, drawn from crypto/rand:
// what a process has when no key is configured. Its states open nowhere
// else, and not after a restart.
func Random() *Sealer {
	secret := make([]byte, MinKeyLen)
	rand.Read(secret)
	s, err := New(secret)
	if err != nil {
		panic(err)
	}
	return s
}

// Seal returns a state bound to b that carries p and opens for ttl (the
// sealer's TTL when ttl is not positive).
func (s *Sealer) Seal(b Binding, p Payload, ttl time.Duration) (string, error) {
	if ttl <= 0 {
		ttl = s.TTL
	}
	if ttl <= 0 {
		ttl = DefaultTTL
	}
	return s.seal(s.plaintext(payloadVersion, s.now().Add(ttl), b, p))
}

func (s *Sealer) plaintext(version byte, expiry time.Time, b Binding, p Payload) []byte {
	pt := make([]byte, 0, 1+8+3*binary.MaxVarintLen64+len(b.Method)+sha256.Size+len(b.Namespace)+len(b.Owner)+len(p.Upstream)+len(p.Parked)+binary.MaxVarintLen64)
	pt = append(pt, version)
	pt = binary.BigEndian.AppendUint64(pt, uint64(expiry.UnixMilli()))
	pt = appendString(pt, b.Method)
	pt = append(pt, b.Params[:]...)
	pt = appendString(pt, b.Namespace)
	pt = appendString(pt, b.Owner)
	pt = appendString(pt, p.Upstream)
	return appendString(pt, p.Parked)
}

func (s *Sealer) seal(pt []byte) (string, error) {
	k := s.keys[0]
	if n := len(prefix) + base64.RawURLEncoding.EncodedLen(keyIDLen+ivLen+len(pt)+tagLen); n > MaxLen {
		return "", fmt.Errorf("requestState: a state of %d bytes would be longer than %d", n, MaxLen)
	}
	raw := make([]byte, keyIDLen+ivLen+len(pt), keyIDLen+ivLen+len(pt)+tagLen)
	copy(raw, k.id[:])
	iv := raw[keyIDLen : keyIDLen+ivLen]
	s.fill(iv)
	cipher.NewCTR(k.block, iv).XORKeyStream(raw[keyIDLen+ivLen:], pt)
	raw = append(raw, tag(k, raw)...)
	return prefix + base64.RawURLEncoding.EncodeToString(raw), nil
}

// tag is the HMAC of the format prefix and raw (key id, iv, ciphertext).
func tag(k key, raw []byte) []byte {
	m := hmac.New(sha256.New, k.mac)
	m.Write([]byte(prefix))
	m.Write(raw)
	return m.Sum(nil)
}

// Open verifies state and returns its payload when it was sealed with one
// of s's keys, for the request b describes, and has not expired. Any other
// state is an [*Error] saying why, in one sentence.
func (s *Sealer) Open(state string, b Binding) (Payload, error) {
	var p Payload
	if len(state) > MaxLen {
		return p, refuse(ErrMalformed, "requestState is longer than any mcpx issues")
	}
	rest, ok := strings.CutPrefix(state, prefix)
	if !ok {
		if v, ok := otherFormat(state); ok {
			return p, refuse(ErrFormat, "requestState is in format %s, which this mcpx does not read (a newer mcpx issued it)", v)
		}
		return p, refuse(ErrMalformed, "requestState is not one mcpx issued")
	}
	raw, err := base64.RawURLEncoding.Strict().DecodeString(rest) // one spelling per state
	if err != nil || len(raw) < keyIDLen+ivLen+1+tagLen {
		return p, refuse(ErrMalformed, "requestState is not one mcpx issued")
	}
	body, sum := raw[:len(raw)-tagLen], raw[len(raw)-tagLen:]
	var k *key
	known := false
	for i := range s.keys {
		if bytes.Equal(s.keys[i].id[:], raw[:keyIDLen]) {
			known = true
			if hmac.Equal(tag(s.keys[i], body), sum) {
				k = &s.keys[i]
				break
			}
		}
	}
	switch {
	case !known:
		return p, refuse(ErrOtherKey, "requestState was sealed under a key this mcpx does not hold (it restarted without a configured mcpx.stateKey, or another gateway issued it)")
	case k == nil:
		return p, refuse(ErrTampered, "requestState has been altered")
	}
	pt := make([]byte, len(body)-keyIDLen-ivLen)
	cipher.NewCTR(k.block, body[keyIDLen:keyIDLen+ivLen]).XORKeyStream(pt, body[keyIDLen+ivLen:])
	if pt[0] != payloadVersion {
		return p, refuse(ErrFormat, "requestState holds a version %d payload, which this mcpx does not read (another version of mcpx issued it); send the request again without it", pt[0])
	}
	got, expiry, p, ok := parse(pt[1:])
	if !ok {
		// Verified, yet unreadable: only a faulty mcpx writes that.
		return Payload{}, refuse(ErrMalformed, "requestState is not one mcpx issued")
	}
	switch now := s.now(); {
	case !now.Before(expiry):
		return Payload{}, refuse(ErrExpired, "requestState expired %s ago; send the request again without it", now.Sub(expiry).Round(time.Second))
	case got.Method != b.Method:
		return Payload{}, refuse(ErrOtherRequest, "requestState was issued for a %s request, not %s", jsonrpc.Clip(got.Method), jsonrpc.Clip(b.Method))
	case got.Namespace != b.Namespace:
		return Payload{}, refuse(ErrOtherNamespace, "requestState was issued in namespace %s, not %s", jsonrpc.Quote(got.Namespace), jsonrpc.Quote(b.Namespace))
	case got.Owner != b.Owner:
		// Said without naming either: the owner is who someone else is.
		return Payload{}, refuse(ErrOtherOwner, "requestState was issued to another principal")
	case got.Params != b.Params:
		return Payload{}, refuse(ErrOtherRequest, "requestState was issued for a %s request with other params", jsonrpc.Clip(b.Method))
	}
	return p, nil
}

// otherFormat reports the version of a state in a format "mcpxN." other
// than this one.
func otherFormat(state string) (string, bool) {
	rest, ok := strings.CutPrefix(state, "mcpx")
	v, _, dot := strings.Cut(rest, ".")
	if !ok || !dot || v == "" || len(v) > 4 {
		return "", false
	}
	if _, err := strconv.ParseUint(v, 10, 16); err != nil {
		return "", false
	}
	return v, true
}

// parse reads a version 1 plaintext after its version byte.
func parse(pt []byte) (b Binding, expiry time.Time, p Payload, ok bool) {
	if len(pt) < 8 {
		return b, expiry, p, false
	}
	expiry = time.UnixMilli(int64(binary.BigEndian.Uint64(pt)))
	pt = pt[8:]
	if b.Method, pt, ok = readString(pt); !ok || len(pt) < sha256.Size {
		return b, expiry, p, false
	}
	copy(b.Params[:], pt)
	pt = pt[sha256.Size:]
	if b.Namespace, pt, ok = readString(pt); !ok {
		return b, expiry, p, false
	}
	if b.Owner, pt, ok = readString(pt); !ok {
		return b, expiry, p, false
	}
	if p.Upstream, pt, ok = readString(pt); !ok {
		return b, expiry, p, false
	}
	if p.Parked, pt, ok = readString(pt); !ok || len(pt) != 0 {
		return b, expiry, p, false
	}
	return b, expiry, p, true
}

func appendString(b []byte, s string) []byte {
	return append(binary.AppendUvarint(b, uint64(len(s))), s...)
}

func readString(b []byte) (string, []byte, bool) {
	n, w := binary.Uvarint(b)
	if w <= 0 || n > uint64(len(b)-w) {
		return "", b, false
	}
	return string(b[w : w+int(n)]), b[w+int(n):], true
}
