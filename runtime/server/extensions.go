package server

import "encoding/json"

// TasksExtension is the id of the 2026-07-28 tasks extension
// (SEP-2663), as capabilities declare it.
const TasksExtension = "io.modelcontextprotocol/tasks"

// Extension is the settings of extension id in a capabilities'
// extensions member (client's or server's), and whether it is declared.
func Extension(extensions json.RawMessage, id string) (json.RawMessage, bool) {
	var ext map[string]json.RawMessage
	if len(extensions) == 0 || json.Unmarshal(extensions, &ext) != nil {
		return nil, false
	}
	v, ok := ext[id]
	return v, ok
}
