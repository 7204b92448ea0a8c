package mcpjson

import json "github.com/go-json-experiment/json"

// UnmarshalSharedAsIs is UnmarshalShared without lifting: the decoder's
// own reading of data, which the lifted decode must equal.
func UnmarshalSharedAsIs(data []byte, v any) error { return json.Unmarshal(data, v, sharedRaw) }

// UnmarshalLifted is UnmarshalShared's lifted decode alone: done is
// false when it left v to the decoder.
func UnmarshalLifted(data []byte, v any) (done bool, err error) { return unmarshalLifted(data, v) }
