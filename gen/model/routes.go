package model

import (
	"fmt"
	"sort"
	"strings"
)

// Route is how the gateway forwards one client-to-server request, from the
// overlay's "route" entry for it: the generator fails on such a method
// without one, so a method a new revision adds is never silently dropped.
type Route struct {
	Method *HubMethod
	// By is one of RouteKinds: "name" (a tool or prompt name in Field),
	// "uri" (a URI in Field), "ref" (Field is a union whose variants carry
	// a name in Space or a uri), "task" (a task id in Field), "merge" (a
	// list every upstream contributes to, merged by hand-written code) or
	// "local" (mcpx answers it itself).
	By    string
	Space string // name: "tool" or "prompt"; ref: the space of a variant's name; task: "task"
	// Field is the params member that holds the key (name, uri, ref, task);
	// nil for merge and local.
	Field *Field
	// Fallback is what an upstream whose revision lacks the method (or
	// that answers -32601) gets: "refuse" (-32601 naming the upstream) or
	// "empty" (the result type's zero value).
	Fallback string
	Why      string
}

// RouteKinds lists the values of a route entry's "by".
var RouteKinds = []string{"name", "uri", "ref", "task", "merge", "local"}

// Forwarded reports whether the gateway sends the method to one upstream.
func (r *Route) Forwarded() bool { return r.By != "merge" && r.By != "local" }

// ClientRequest reports whether some revision has m as a request from
// client to server.
func (h *Hub) ClientRequest(m *HubMethod) bool {
	if m.Notification {
		return false
	}
	for _, w := range h.Wires {
		if wm := w.method(m.Name); wm != nil && wm.FromClient {
			return true
		}
	}
	return false
}

// Routes reads the overlay's route entries for every client-to-server
// request of the hub, in method order, and checks each against the
// method's params. Entries are marked used, so one naming a method that is
// not such a request is reported by [Overlay.Unused].
func (h *Hub) Routes() ([]*Route, error) {
	var out []*Route
	var errs []string
	for _, m := range h.Methods {
		if !h.ClientRequest(m) {
			continue
		}
		es := h.Overlay.Find("route", m.Name, "")
		switch len(es) {
		case 0:
			errs = append(errs, fmt.Sprintf("mcpx-gen: method %s (client to server, revisions %s) has no route in schemas/overlay.json: add {\"kind\": \"route\", \"at\": %q, \"by\": ...} saying how the gateway forwards it (by one of %s; \"local\" when mcpx answers it itself)",
				m.Name, strings.Join(m.Revs.Sorted(), ", "), m.Name, strings.Join(RouteKinds, ", ")))
			continue
		case 1:
		default:
			errs = append(errs, fmt.Sprintf("mcpx-gen: method %s has %d route entries in schemas/overlay.json; keep one", m.Name, len(es)))
			continue
		}
		r, err := route(m, es[0])
		if err != nil {
			errs = append(errs, err.Error())
			continue
		}
		out = append(out, r)
	}
	if len(errs) > 0 {
		sort.Strings(errs)
		return nil, fmt.Errorf("%s", strings.Join(errs, "\n"))
	}
	return out, nil
}

func route(m *HubMethod, e *Entry) (*Route, error) {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("mcpx-gen: schemas/overlay.json: route at %q: "+format, append([]any{m.Name}, args...)...)
	}
	r := &Route{Method: m, By: e.By, Space: e.Space, Fallback: e.Fallback, Why: e.Why}
	member := e.Field
	switch e.By {
	case "name":
		if e.Space != "tool" && e.Space != "prompt" {
			return nil, bad("by name needs \"space\": \"tool\" or \"prompt\", not %q", e.Space)
		}
		member = def(member, "name")
	case "uri":
		member = def(member, "uri")
		r.Space = def(r.Space, "uri")
	case "ref":
		member = def(member, "ref")
		if e.Space != "tool" && e.Space != "prompt" {
			return nil, bad("by ref needs \"space\" (the names a reference's name is in): \"tool\" or \"prompt\", not %q", e.Space)
		}
	case "task":
		member = def(member, "taskId")
		r.Space = def(r.Space, "task")
	case "merge", "local":
		if e.Field != "" || e.Space != "" || e.Fallback != "" {
			return nil, bad("by %s takes no field, space or fallback", e.By)
		}
		return r, nil
	default:
		return nil, bad("unknown \"by\" %q (want one of %s)", e.By, strings.Join(RouteKinds, ", "))
	}
	switch r.Fallback {
	case "":
		r.Fallback = "refuse"
	case "refuse", "empty":
	default:
		return nil, bad("unknown fallback %q (want refuse or empty)", r.Fallback)
	}
	if m.Params == nil || m.Params.Kind != Object {
		return nil, bad("by %s needs params with a member %q; the method has none", e.By, member)
	}
	f := m.Params.Field(member)
	if f == nil {
		return nil, bad("%s has no member %q to route by", m.Params.Name, member)
	}
	r.Field = f
	if e.By != "ref" {
		if f.Type.Kind != String {
			return nil, bad("%s.%s is a %s; routing by %s needs a string", m.Params.Name, member, f.Type.Kind, e.By)
		}
		return r, nil
	}
	if f.Type.Kind != Union || !f.Required {
		return nil, bad("%s.%s must be a required union of references to route by ref", m.Params.Name, member)
	}
	for _, v := range f.Type.Variants {
		if refKey(v) == nil {
			return nil, bad("variant %q of %s.%s has neither a string name nor a string uri", v.Tag, m.Params.Name, member)
		}
	}
	return r, nil
}

// RefKey is the member of a reference variant that names its target: a
// name (in the route's space) or a uri.
func RefKey(v *Variant) *Field { return refKey(v) }

func refKey(v *Variant) *Field {
	if v.Type.Kind != Object {
		return nil
	}
	for _, w := range []string{"name", "uri"} {
		if f := v.Type.Field(w); f != nil && f.Type.Kind == String && f.Required {
			return f
		}
	}
	return nil
}

func def(s, d string) string {
	if s == "" {
		return d
	}
	return s
}
