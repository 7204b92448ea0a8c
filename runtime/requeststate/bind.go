package requeststate

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"fmt"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/mcpx-dev/mcpx/internal/mcpjson"
)

// Binding names the request a state belongs to.
type Binding struct {
	Method string
	// Params is the SHA-256 of the request's canonical params ([Bind]).
	Params    [sha256.Size]byte
	Namespace string
	// Owner is the principal the request is from (auth.Owner); "" when
	// mcpx authenticates no one. Set by the caller after Bind.
	Owner string
}

// unbound are the params members a retry may change: _meta (progress
// token, the revision and capabilities a request carries), the answers and
// the state itself.
var unbound = []string{"_meta", "inputResponses", "requestState"}

// Bind returns the binding of a method request with params (a JSON object,
// or empty or null for none) in namespace. The digest is of the params
// without the unbound members, canonicalized by RFC 8785 (the JSON
// Canonicalization Scheme: members sorted, no whitespace, strings in their
// minimal escaping, fractional numbers in the shortest form that reads
// back as the same double), because a client MUST echo the state but need
// not reproduce the bytes of its first request: a client that decodes and
// re-encodes its request, as JSON libraries do, sends the same values in
// another order and spacing, and the binding is to the values. Integers
// are kept as written (jsontext.CanonicalizeRawInts(false)) rather than
// rounded to a double, so two ids beyond 2^53 stay apart. Params that are
// not an object, repeat a member name or are not valid UTF-8 have no
// binding.
func Bind(method string, params json.RawMessage, namespace string) (Binding, error) {
	b := Binding{Method: method, Namespace: namespace}
	members := map[string]jsontext.Value{}
	if p := bytes.TrimSpace(params); len(p) > 0 && !bytes.Equal(p, []byte("null")) {
		if err := mcpjson.Unmarshal(p, &members); err != nil {
			return b, fmt.Errorf("requestState: the params of %s are not a JSON object: %v", method, mcpjson.Describe(err))
		}
	}
	for _, k := range unbound {
		delete(members, k)
	}
	obj := []byte{'{'}
	for k, v := range members {
		if len(obj) > 1 {
			obj = append(obj, ',')
		}
		var err error
		if obj, err = jsontext.AppendQuote(obj, k); err != nil {
			return b, err
		}
		obj = append(append(obj, ':'), v...)
	}
	canon := jsontext.Value(append(obj, '}'))
	if err := canon.Canonicalize(jsontext.CanonicalizeRawInts(false)); err != nil {
		return b, fmt.Errorf("requestState: the params of %s: %v", method, err)
	}
	b.Params = sha256.Sum256(canon)
	return b, nil
}

// BindParams is [Bind] for hub params, as a handler has them: encoded
// with encoding/json first (members the hub type does not have are not
// bound, since mcpx does not read them).
func BindParams(method string, params any, namespace string) (Binding, error) {
	raw, err := json.Marshal(params)
	if err != nil {
		return Binding{Method: method, Namespace: namespace}, err
	}
	return Bind(method, raw, namespace)
}
