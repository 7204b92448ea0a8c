package server

import (
	"bytes"
	"encoding/json"
)

// TasksExtension is the id of the 2026-07-28 tasks extension
// (SEP-2663), as capabilities declare it.
const TasksExtension = "io.modelcontextprotocol/tasks"

// Extension is the settings of extension id in a capabilities'
// extensions member (client's or server's), and whether it is declared.
func Extension(extensions json.RawMessage, id string) (json.RawMessage, bool) {
	// Asked of the upstream's and the client's capabilities on every call:
	// JSON that cannot name id (it lacks id's bytes and has no escape that
	// could spell them) is not decoded into a map.
	if bytes.IndexByte(extensions, '\\') < 0 && !bytes.Contains(extensions, []byte(id)) {
		return nil, false
	}
	var ext map[string]json.RawMessage
	if len(extensions) == 0 || json.Unmarshal(extensions, &ext) != nil {
		return nil, false
	}
	v, ok := ext[id]
	return v, ok
}
