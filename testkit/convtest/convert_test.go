// Package convtest checks the generated conversions against the schemas
// themselves: every downgraded message is closed-world valid for its
// revision and has the members the revision tables give it, every upgrade
// round-trips, the specification's examples decode and re-encode
// unchanged, and the facts docs/revisions.md states
// (#per-revision-fields, #the-modern-envelope) hold. Everything is
// decoded as production decodes, through internal/mcpjson.
package convtest

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/mcpx-dev/mcpx/generated/convert"
	"github.com/mcpx-dev/mcpx/generated/mcp"
	"github.com/mcpx-dev/mcpx/generated/revision"
	"github.com/mcpx-dev/mcpx/internal/mcpjson"
	"github.com/mcpx-dev/mcpx/schemas"
	"github.com/mcpx-dev/mcpx/testkit/closedworld"
)

func validator(t *testing.T) *closedworld.Validator {
	t.Helper()
	v, err := closedworld.Default()
	if err != nil {
		t.Fatalf("closed-world validator: %v (run `make schemas`)", err)
	}
	return v
}

// sent lists, per revision, what a server sends: results of client
// requests, and the params of server requests and notifications, with the
// schema definition and JSON-RPC envelope each is validated in.
type message struct {
	method, hubType string
	result          bool
}

func serverSent(tab *revision.Table) []message {
	var out []message
	for _, m := range tab.Methods {
		switch {
		case !m.Notification && m.FromClient && m.Result != "":
			out = append(out, message{m.Name, m.Result, true})
		}
		if m.FromServer && m.Params != "" {
			out = append(out, message{m.Name, m.Params, false})
		}
	}
	return out
}

func clientSent(tab *revision.Table) []message {
	var out []message
	for _, m := range tab.Methods {
		switch {
		case m.FromClient && m.Params != "":
			out = append(out, message{m.Name, m.Params, false})
		}
		if m.FromServer && !m.Notification && m.Result != "" {
			out = append(out, message{m.Name, m.Result, true})
		}
	}
	return out
}

// envelope wraps encoded params or a result as the revision's schema
// expects to meet them, returning the definition to validate against.
func envelope(tab *revision.Table, m message, body []byte, fromServer bool) (def string, frame, bare []byte) {
	if m.result {
		return m.hubType, body, body
	}
	meth, _ := tab.Method(m.method)
	def = ""
	switch {
	case meth.Notification && fromServer:
		def = "ServerNotification"
	case meth.Notification:
		def = "ClientNotification"
	case fromServer:
		def = "ServerRequest"
	default:
		def = "ClientRequest"
	}
	id := `"id":1,`
	if meth.Notification {
		id = ""
	}
	return def, []byte(fmt.Sprintf(`{"jsonrpc":"2.0",%s"method":%q,"params":%s}`, id, m.method, body)),
		[]byte(fmt.Sprintf(`{"method":%q,"params":%s}`, m.method, body))
}

// TestDowngradeIsClosedWorldValid: a fully populated hub value of every type
// a server sends, downgraded to each older revision, passes that
// revision's schema with no undeclared member anywhere.
func TestDowngradeIsClosedWorldValid(t *testing.T) {
	v := validator(t)
	for _, tab := range revision.Tables {
		rev := tab.Revision
		for _, m := range serverSent(tab) {
			if flattenedByStatus[m.hubType] {
				continue // see TestTaskResultsPerStatus
			}
			for i, hub := range filled(m.hubType) {
				name := fmt.Sprintf("%s/%s/%s/variant%d", rev, m.method, m.hubType, i)
				t.Run(name, func(t *testing.T) {
					wire, err := convert.Downgrade(rev, hub)
					if err != nil {
						t.Fatal(err)
					}
					b, err := json.Marshal(wire)
					if err != nil {
						if strings.Contains(err.Error(), "has no "+string(rev)+" form") {
							t.Skipf("no %s form (the edge must not send it): %v", rev, err)
						}
						t.Fatal(err)
					}
					def, msg, bare := envelope(tab, m, b, true)
					if !v.Has(string(rev), def) {
						def = "Result"
					}
					// Up to 2025-06-18 a request or notification definition
					// has only method and params; later ones the whole frame.
					if err := v.Validate(string(rev), def, msg); err != nil && v.Validate(string(rev), def, bare) != nil {
						t.Errorf("Downgrade(%s, %s) = %s\n%v", m.hubType, rev, msg, err)
					}
				})
			}
		}
	}
}

// flattenedByStatus are hub types the tasks extension defines as a union by
// status that the hub flattens into one struct (see gen/README.md): a value
// with every member set is no valid task, so they get one value per status.
var flattenedByStatus = map[string]bool{"GetTaskResult": true, "TaskStatusNotificationParams": true}

// TestTaskResultsPerStatus: a tasks/get result and a task status
// notification for each status, carrying only that status's payload, are
// closed-world valid for every revision that has them.
func TestTaskResultsPerStatus(t *testing.T) {
	v := validator(t)
	ttl := 60000.0
	base := func(status mcp.TaskStatus) mcp.GetTaskResult {
		return mcp.GetTaskResult{TaskID: "t1", Status: status, CreatedAt: "2026-01-01T00:00:00Z", LastUpdatedAt: "2026-01-01T00:00:01Z", TTLMs: &ttl, PollIntervalMs: mcp.Ptr(500.0), StatusMessage: "s"}
	}
	working, completed, failed, input, cancelled := base(mcp.TaskStatusWorking), base(mcp.TaskStatusCompleted), base(mcp.TaskStatusFailed), base(mcp.TaskStatusInputRequired), base(mcp.TaskStatusCancelled)
	completed.Result = json.RawMessage(`{"content":[{"type":"text","text":"done"}]}`)
	failed.Error = json.RawMessage(`{"code":-32603,"message":"upstream failed"}`)
	input.InputRequests = map[string]mcp.GetTaskResultInputRequestsValue{"q1": {Method: "elicitation/create", Params: json.RawMessage(`{"message":"ok?","requestedSchema":{"type":"object","properties":{}}}`)}}
	for _, res := range []mcp.GetTaskResult{working, completed, failed, input, cancelled} {
		for _, tab := range revision.Tables {
			if _, ok := tab.Method("tasks/get"); !ok {
				continue
			}
			t.Run(fmt.Sprintf("%s/%s", tab.Revision, res.Status), func(t *testing.T) {
				got := encode(t, tab.Revision, &res)
				if err := v.Validate(string(tab.Revision), "GetTaskResult", []byte(got)); err != nil {
					t.Errorf("%s\n%v", got, err)
				}
			})
		}
	}
}

// TestUpgradeRoundTrips: every type a client sends, fully populated and
// downgraded to a revision, encodes every object, at any depth, with exactly
// the members the revision tables (generated/revision) give its type in
// that revision, and no reserved _meta key only other revisions define;
// decoded as production decodes (internal/mcpjson) and upgraded back, it
// equals the original with the members the tables say that revision lacks
// (Type.Dropped) and those _meta keys cleared; downgrading it again gives
// the same JSON; and its hub JSON re-decodes to the same value.
func TestUpgradeRoundTrips(t *testing.T) {
	for _, tab := range revision.Tables {
		rev := tab.Revision
		for _, m := range clientSent(tab) {
			for i, hub := range filled(m.hubType) {
				t.Run(fmt.Sprintf("%s/%s/variant%d", rev, m.hubType, i), func(t *testing.T) {
					wire, err := convert.Downgrade(rev, hub)
					if err != nil {
						t.Fatal(err)
					}
					b, err := json.Marshal(wire)
					if err != nil {
						t.Skipf("no %s form: %v", rev, err)
					}
					if got := hubName(t, rev, reflect.ValueOf(wire).Elem()); got != m.hubType {
						t.Fatalf("%s's form of %s upgrades to mcp.%s", rev, m.hubType, got)
					}
					checkMembers(t, tab, m.hubType, reflect.ValueOf(wire))
					decoded := convert.New(rev, m.hubType)
					if err := mcpjson.Unmarshal(b, decoded); err != nil {
						t.Fatalf("decode %s %s: %v\n%s", rev, m.hubType, err, b)
					}
					up, err := convert.Upgrade(rev, decoded)
					if err != nil {
						t.Fatal(err)
					}
					want := filled(m.hubType)[i]
					clearLacking(tab, reflect.ValueOf(want))
					standIns(t, tab, reflect.ValueOf(want), reflect.ValueOf(up))
					if diff := cmp.Diff(want, up, cmp.Exporter(func(reflect.Type) bool { return true })); diff != "" {
						t.Errorf("upgrade(decode(downgrade(x))) != x without what %s lacks, for %s (-want +got):\n%s", rev, m.hubType, diff)
					}
					again, _ := convert.Downgrade(rev, up)
					b2, err := json.Marshal(again)
					if err != nil {
						t.Fatal(err)
					}
					if diff := jsonDiff(b, b2); diff != "" {
						t.Errorf("downgrade(upgrade(x)) != x for %s %s (-want +got):\n%s", rev, m.hubType, diff)
					}
					// Where the newest revision has the method too, the upgraded
					// value sent on to it is closed-world valid there.
					// The tasks extension's request definitions forbid the _meta
					// every modern request must carry (see schemas/overlay.json
					// add-meta), so its methods cannot pass; they are skipped.
					if newest := revision.Tables[0]; rev != newest.Revision && !strings.HasPrefix(m.method, "tasks/") {
						if nm, ok := newest.Method(m.method); ok && ((nm.FromClient && !m.result && nm.Params == m.hubType) || (nm.FromServer && m.result && nm.Result == m.hubType)) {
							if !nm.Notification {
								withRequestMeta(up, newest.Revision) // what the edge adds to every modern request
							}
							modern, err := convert.Downgrade(newest.Revision, up)
							if err != nil {
								t.Fatal(err)
							}
							mb, err := json.Marshal(modern)
							if err != nil {
								t.Fatal(err)
							}
							def, frame, _ := envelope(newest, message{m.method, m.hubType, m.result}, mb, false)
							if err := validator(t).Validate(string(newest.Revision), def, frame); err != nil {
								t.Errorf("%s %s upgraded and sent to %s: %s\n%v", rev, m.hubType, newest.Revision, frame, err)
							}
						}
					}
					hubJSON, err := json.Marshal(up)
					if err != nil {
						t.Fatal(err)
					}
					back := mcp.New(m.hubType)
					if err := mcpjson.Unmarshal(hubJSON, back); err != nil {
						t.Fatalf("hub JSON does not decode: %v\n%s", err, hubJSON)
					}
					if diff := cmp.Diff(up, back, cmp.Exporter(func(reflect.Type) bool { return true })); diff != "" {
						t.Errorf("hub JSON round trip (-want +got):\n%s", diff)
					}
				})
			}
		}
	}
}

// hubName is the hub type a wire struct of rev upgrades to: a wire type's
// Go name may differ from its hub name (ListPromptsRequestParams is
// PaginatedRequestParams, 2024-11-05's ResourceReference is
// ResourceTemplateReference, an inline TextContentAnnotations is
// Annotations), and the tables are keyed by hub name.
func hubName(t *testing.T, rev mcp.Revision, w reflect.Value) string {
	t.Helper()
	p := reflect.New(w.Type())
	p.Elem().Set(w)
	h, err := convert.Upgrade(rev, p.Interface())
	if err != nil {
		t.Fatalf("wire %s: %v", w.Type(), err)
	}
	return reflect.TypeOf(h).Elem().Name()
}

// checkMembers walks a downgraded wire value: every object it encodes must
// have exactly the members tab lists for its hub type (Type.Fields), and
// every _meta no reserved key that only other revisions define. Unions are
// checked through the variant they hold.
func checkMembers(t *testing.T, tab *revision.Table, path string, v reflect.Value) {
	t.Helper()
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			checkMembers(t, tab, path, v.Elem())
		}
	case reflect.Slice:
		if v.Type() == rawType {
			return
		}
		for i := 0; i < v.Len(); i++ {
			checkMembers(t, tab, fmt.Sprintf("%s[%d]", path, i), v.Index(i))
		}
	case reflect.Map:
		if v.Type() == metaType {
			for _, k := range v.MapKeys() {
				if foreignMetaKey(tab, k.String()) {
					t.Errorf("%s: reserved key %q, which %s does not define", path, k, tab.Revision)
				}
			}
			return
		}
		for _, k := range v.MapKeys() {
			checkMembers(t, tab, fmt.Sprintf("%s[%v]", path, k), v.MapIndex(k))
		}
	case reflect.Struct:
		st := v.Type()
		if !strings.HasPrefix(st.PkgPath(), "github.com/mcpx-dev/mcpx/generated/wire/") {
			return // a hub constant (ConstText, ...): a string on the wire
		}
		name := hubName(t, tab.Revision, v)
		ty, ok := tab.Type(name)
		switch {
		case !ok:
			t.Errorf("%s: %s has no %s in its table, yet encodes one (wire %s)", path, tab.Revision, name, st.Name())
		case len(ty.Variants) == 0:
			b, err := json.Marshal(v.Interface())
			if err != nil {
				t.Fatalf("%s: encode %s: %v", path, st.Name(), err)
			}
			var obj map[string]json.RawMessage
			if err := mcpjson.Unmarshal(b, &obj); err != nil {
				t.Fatalf("%s: %s is no object: %v\n%s", path, name, err, b)
			}
			got := slices.Sorted(maps.Keys(obj))
			want := slices.Sorted(slices.Values(ty.Fields))
			if !slices.Equal(got, want) {
				t.Errorf("%s: %s %s encodes members %q; the table has %q", path, tab.Revision, name, got, want)
			}
		}
		for i := 0; i < st.NumField(); i++ {
			f := st.Field(i)
			if !f.IsExported() {
				continue
			}
			p := path
			if name := strings.Split(f.Tag.Get("json"), ",")[0]; name != "" {
				p += "." + name // not a union's Value
			}
			checkMembers(t, tab, p, v.Field(i))
		}
	}
}

// clearLacking zeroes, in a hub value, what tab's revision lacks: the
// members its table lists as Dropped for each type, and the reserved _meta
// keys only other revisions define.
func clearLacking(tab *revision.Table, v reflect.Value) {
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			clearLacking(tab, v.Elem())
		}
	case reflect.Slice:
		if v.Type() == rawType {
			return
		}
		for i := 0; i < v.Len(); i++ {
			clearLacking(tab, v.Index(i))
		}
	case reflect.Map:
		if v.Type() == metaType {
			for _, k := range v.MapKeys() {
				if foreignMetaKey(tab, k.String()) {
					v.SetMapIndex(k, reflect.Value{})
				}
			}
			return
		}
		for _, k := range v.MapKeys() {
			e := reflect.New(v.Type().Elem()).Elem()
			e.Set(v.MapIndex(k))
			clearLacking(tab, e)
			v.SetMapIndex(k, e)
		}
	case reflect.Struct:
		st := v.Type()
		ty, _ := tab.Type(st.Name())
		for i := 0; i < st.NumField(); i++ {
			f := st.Field(i)
			if !f.IsExported() {
				continue
			}
			if contains(ty.Dropped, strings.Split(f.Tag.Get("json"), ",")[0]) {
				v.Field(i).SetZero()
				continue
			}
			clearLacking(tab, v.Field(i))
		}
	}
}

// standIns walks want and got, two values of one hub type, in step: where
// want holds a union variant whose type rev's table lacks (a variant only
// other revisions have), the downgrade sent a stand-in for it (an overlay
// fallback, lossy by design), so got must hold a variant rev has, and want
// takes it before the two are compared.
func standIns(t *testing.T, tab *revision.Table, want, got reflect.Value) {
	t.Helper()
	if want.Kind() != got.Kind() || want.Type() != got.Type() {
		return // the diff reports it
	}
	switch want.Kind() {
	case reflect.Pointer, reflect.Interface:
		if !want.IsNil() && !got.IsNil() {
			standIns(t, tab, want.Elem(), got.Elem())
		}
	case reflect.Slice:
		if want.Type() == rawType {
			return
		}
		for i := 0; i < min(want.Len(), got.Len()); i++ {
			standIns(t, tab, want.Index(i), got.Index(i))
		}
	case reflect.Map:
		if want.Type() == metaType {
			return
		}
		for _, k := range want.MapKeys() {
			g := got.MapIndex(k)
			if !g.IsValid() {
				continue
			}
			w, gc := reflect.New(want.Type().Elem()).Elem(), reflect.New(got.Type().Elem()).Elem()
			w.Set(want.MapIndex(k))
			gc.Set(g)
			standIns(t, tab, w, gc)
			want.SetMapIndex(k, w)
		}
	case reflect.Struct:
		if isUnion(want.Type()) {
			wv, gv := want.Field(0), got.Field(0)
			if !wv.IsNil() && wv.Elem().Kind() == reflect.Pointer {
				if _, has := tab.Type(wv.Elem().Type().Elem().Name()); !has {
					if gv.IsNil() || gv.Elem().Kind() != reflect.Pointer {
						t.Errorf("%s lacks %s: its stand-in upgraded to %v", tab.Revision, wv.Elem().Type().Elem().Name(), gv)
						return
					}
					if _, ok := tab.Type(gv.Elem().Type().Elem().Name()); !ok {
						t.Errorf("%s lacks %s, and its stand-in, a %s, is not one it has", tab.Revision, wv.Elem().Type().Elem().Name(), gv.Elem().Type().Elem().Name())
					}
					wv.Set(gv)
					return
				}
			}
		}
		for i := 0; i < want.NumField(); i++ {
			if want.Type().Field(i).IsExported() {
				standIns(t, tab, want.Field(i), got.Field(i))
			}
		}
	}
}

// foreignMetaKey reports whether key is a reserved _meta key some other
// revision's table defines and tab's does not.
func foreignMetaKey(tab *revision.Table, key string) bool {
	if contains(tab.MetaKeys, key) {
		return false
	}
	for _, o := range revision.Tables {
		if contains(o.MetaKeys, key) {
			return true
		}
	}
	return false
}

// jsonDiff compares two JSON texts as values, decoded as production
// decodes them; text that does not decode is a difference.
func jsonDiff(a, b []byte) string {
	var x, y any
	if err := mcpjson.Unmarshal(a, &x); err != nil {
		return fmt.Sprintf("want side does not decode: %v\n%s", err, a)
	}
	if err := mcpjson.Unmarshal(b, &y); err != nil {
		return fmt.Sprintf("got side does not decode: %v\n%s", err, b)
	}
	return cmp.Diff(x, y)
}

// mirror is the specification mirror the examples come from:
// $MCPX_SCHEMA_MIRROR, else ../shared/spec beside the repository.
func mirror() string {
	if m := os.Getenv(schemas.MirrorEnv); m != "" {
		return m
	}
	return filepath.Join(filepath.Dir(schemas.SourceDir()), "..", "shared", "spec")
}

// TestExamplesRoundTrip: every example of the newest revision that is a
// hub type decodes into it (through internal/mcpjson) and encodes back to
// equal JSON. The examples are not fetched with the schemas; they come
// from the specification mirror. Without it the test skips, saying so, and
// in CI (CI=true) it fails instead.
func TestExamplesRoundTrip(t *testing.T) {
	dir := filepath.Join(mirror(), "schemas", "2026-07-28", "examples")
	defs, err := os.ReadDir(dir)
	if err != nil {
		msg := fmt.Sprintf("the 2026-07-28 specification examples are missing: %v; they come from the specification mirror "+
			"(../shared/spec beside the repository, or the directory $%s names), which must hold schemas/2026-07-28/examples", err, schemas.MirrorEnv)
		if os.Getenv("CI") == "true" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	tested, total := 0, 0
	for _, d := range defs {
		files, _ := filepath.Glob(filepath.Join(dir, d.Name(), "*.json"))
		for _, file := range files {
			total++
			if mcp.New(d.Name()) == nil {
				if framed(t, d.Name(), file) {
					tested++
				} else {
					t.Logf("no hub type for %s/%s", d.Name(), filepath.Base(file))
				}
				continue
			}
			tested++
			t.Run(d.Name()+"/"+filepath.Base(file), func(t *testing.T) {
				want, err := os.ReadFile(file)
				if err != nil {
					t.Fatal(err)
				}
				v := mcp.New(d.Name())
				if err := mcpjson.Unmarshal(want, v); err != nil {
					t.Fatalf("decode into mcp.%s: %v", d.Name(), err)
				}
				got, err := json.Marshal(v)
				if err != nil {
					t.Fatal(err)
				}
				// Members the definition does not declare (an example of a
				// request may show the whole JSON-RPC frame) are outside the
				// hub type, so compare the declared ones.
				if diff := jsonDiff(declaredOnly(t, d.Name(), want), got); diff != "" {
					t.Errorf("mcp.%s round trip (-want +got):\n%s", d.Name(), diff)
				}
			})
		}
	}
	if tested != total {
		t.Errorf("%d of %d examples round-tripped; every example should reach a hub type", tested, total)
	}
	if tested < 100 {
		t.Errorf("only %d examples matched a hub type; the example set or the hub changed", tested)
	}
}

// framed round-trips a whole JSON-RPC example (a request, a notification or
// a result response): its params or result through the hub type the
// revision table names for its method. It reports whether the example was
// one.
func framed(t *testing.T, def, file string) bool {
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var frame struct {
		Method string          `json:"method"`
		Params json.RawMessage `json:"params"`
		Result json.RawMessage `json:"result"`
		Error  json.RawMessage `json:"error"`
	}
	if mcpjson.Unmarshal(b, &frame) != nil {
		return false
	}
	if unionMaps := map[string]any{"InputRequests": &map[string]mcp.InputRequest{}, "InputResponses": &map[string]mcp.InputResponse{}}; unionMaps[def] != nil {
		t.Run(def+"/"+filepath.Base(file), func(t *testing.T) {
			v := unionMaps[def]
			if err := mcpjson.Unmarshal(b, v); err != nil {
				t.Fatalf("decode into map of mcp union: %v", err)
			}
			got, _ := json.Marshal(v)
			if diff := jsonDiff(b, got); diff != "" {
				t.Errorf("%s round trip (-want +got):\n%s", def, diff)
			}
		})
		return true
	}
	hubType, part := "", frame.Params
	switch {
	case frame.Method != "":
		m, ok := revision.Lookup(mcp.Rev20260728).Method(frame.Method)
		if !ok || m.Params == "" || len(frame.Params) == 0 {
			return false
		}
		hubType = m.Params
	case len(frame.Result) > 0 && strings.HasSuffix(def, "ResultResponse"):
		hubType, part = strings.TrimSuffix(def, "Response"), frame.Result
	case len(frame.Error) > 0:
		hubType, part = "Error", frame.Error
	case strings.HasSuffix(def, "Error"): // a bare error object
		hubType, part = "Error", b
	default:
		return false
	}
	name := def + "/" + filepath.Base(file)
	t.Run(name, func(t *testing.T) {
		v := mcp.New(hubType)
		if err := mcpjson.Unmarshal(part, v); err != nil {
			t.Fatalf("decode into mcp.%s: %v", hubType, err)
		}
		got, _ := json.Marshal(v)
		diff := jsonDiff(declaredOnly(t, hubType, part), got)
		if why, known := knownBadExamples[name]; known {
			if diff == "" {
				t.Errorf("%s now round-trips; remove it from knownBadExamples (%s)", name, why)
			}
			t.Logf("known upstream defect: %s", why)
			return
		}
		if diff != "" {
			t.Errorf("mcp.%s round trip (-want +got):\n%s", hubType, diff)
		}
	})
	return true
}

// knownBadExamples are specification examples that break their own schema;
// they are checked to stay broken, so a fix upstream is noticed.
var knownBadExamples = map[string]string{
	"ReadResourceResultResponse/read-resource-result-response.json": "the result lacks ttlMs and cacheScope, which ReadResourceResult requires; the hub writes the required members, so the example cannot come back unchanged",
}

// withRequestMeta adds the _meta members every request of the modern
// revision rev must carry to a hub params value that has a _meta.
func withRequestMeta(v any, rev mcp.Revision) {
	f := reflect.ValueOf(v).Elem().FieldByName("Meta")
	if !f.IsValid() || f.Type() != reflect.TypeOf(mcp.Meta{}) {
		return
	}
	m := mcp.Meta{}
	for k, val := range f.Interface().(mcp.Meta) {
		m[k] = val
	}
	m[mcp.MetaKeyProtocolVersion], _ = json.Marshal(rev)
	m[mcp.MetaKeyClientCapabilities] = json.RawMessage(`{}`)
	f.Set(reflect.ValueOf(m))
}

func encode(t *testing.T, rev mcp.Revision, v any) string {
	t.Helper()
	w, err := convert.Downgrade(rev, v)
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(w)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestPinnedFacts holds the facts docs/revisions.md states, on the tables
// and on encoded messages.
func TestPinnedFacts(t *testing.T) {
	t.Run("ResourceTemplate is spelled uriTemplate in every revision", func(t *testing.T) {
		for _, tab := range revision.Tables {
			ty, ok := tab.Type("ResourceTemplate")
			if !ok || !contains(ty.Fields, "uriTemplate") || contains(ty.Fields, "uri") {
				t.Errorf("%s ResourceTemplate fields = %v", tab.Revision, ty.Fields)
			}
			got := encode(t, tab.Revision, &mcp.ListResourceTemplatesResult{ResourceTemplates: []mcp.ResourceTemplate{{Name: "n", URITemplate: "file:///{p}"}}})
			if !strings.Contains(got, `"uriTemplate":"file:///{p}"`) {
				t.Errorf("%s: %s", tab.Revision, got)
			}
		}
	})
	t.Run("ServerCapabilities.extensions does not reach 2025-11-25 or older", func(t *testing.T) {
		caps := &mcp.ServerCapabilities{Extensions: json.RawMessage(`{"io.modelcontextprotocol/tasks":{}}`), Tools: &mcp.ServerCapabilitiesTools{}}
		for _, tab := range revision.Tables {
			got := encode(t, tab.Revision, caps)
			if has := strings.Contains(got, "extensions"); has != (tab.Era == "modern") {
				t.Errorf("%s ServerCapabilities = %s", tab.Revision, got)
			}
		}
	})
	t.Run("resultType, ttlMs, cacheScope and the serverInfo key never reach a legacy revision", func(t *testing.T) {
		res := &mcp.ListToolsResult{ResultType: "complete", TTLMs: 60000, CacheScope: mcp.CacheScopePublic,
			Meta:  mcp.Meta{mcp.MetaKeyServerInfo: json.RawMessage(`{"name":"mcpx","version":"1"}`), "com.example/k": json.RawMessage(`1`)},
			Tools: []mcp.Tool{{Name: "t", InputSchema: json.RawMessage(`{"type":"object"}`)}}}
		for _, tab := range revision.Tables {
			got := encode(t, tab.Revision, res)
			for _, bad := range []string{"resultType", "ttlMs", "cacheScope", mcp.MetaKeyServerInfo} {
				if strings.Contains(got, bad) != (tab.Era == "modern") {
					t.Errorf("%s: %q present=%v in %s", tab.Revision, bad, !(tab.Era == "modern"), got)
				}
			}
			if !strings.Contains(got, "com.example/k") {
				t.Errorf("%s lost an ordinary _meta key: %s", tab.Revision, got)
			}
		}
	})
	t.Run("audio and resource_link fall back to text where a revision lacks them", func(t *testing.T) {
		res := &mcp.CallToolResult{Content: []mcp.ContentBlock{
			{Value: &mcp.AudioContent{Data: "aGk=", MIMEType: "audio/wav"}},
			{Value: &mcp.ResourceLink{Name: "readme", URI: "file:///r"}},
		}}
		got := encode(t, mcp.Rev20241105, res)
		if strings.Count(got, `"type":"text"`) != 2 || !strings.Contains(got, "file:///r") {
			t.Errorf("2024-11-05: %s", got)
		}
		got = encode(t, mcp.Rev20250326, res)
		if !strings.Contains(got, `"type":"audio"`) || strings.Contains(got, "resource_link") {
			t.Errorf("2025-03-26: %s", got)
		}
	})
	t.Run("the tasks extension's flat task handle nests, with ttl and pollInterval, for 2025-11-25", func(t *testing.T) {
		ttl := 5000.0
		got := encode(t, mcp.Rev20251125, &mcp.CreateTaskResult{TaskID: "t1", Status: mcp.TaskStatusWorking, CreatedAt: "2026-01-01T00:00:00Z", LastUpdatedAt: "2026-01-01T00:00:00Z", TTLMs: &ttl, PollIntervalMs: mcp.Ptr(250.0)})
		want := `{"task":{"createdAt":"2026-01-01T00:00:00Z","lastUpdatedAt":"2026-01-01T00:00:00Z","pollInterval":250,"status":"working","taskId":"t1","ttl":5000}}`
		if diff := jsonDiff([]byte(want), []byte(got)); diff != "" {
			t.Errorf("(-want +got):\n%s", diff)
		}
	})
	t.Run("non-object structuredContent is dropped for a legacy revision that has structuredContent (2025-06-18 on), kept for a modern one", func(t *testing.T) {
		res := &mcp.CallToolResult{Content: []mcp.ContentBlock{}, StructuredContent: json.RawMessage(`[1,2]`)}
		var n int
		for _, tab := range revision.Tables {
			if ty, ok := tab.Type("CallToolResult"); !ok || !contains(ty.Fields, "structuredContent") {
				continue
			}
			n++
			if got, want := encode(t, tab.Revision, res), tab.Era == "modern"; strings.Contains(got, "structuredContent") != want {
				t.Errorf("%s: %s", tab.Revision, got)
			}
		}
		if n < 3 { // 2025-06-18, 2025-11-25, 2026-07-28 at least
			t.Errorf("%d revisions have CallToolResult.structuredContent, want at least 3", n)
		}
	})
}

// TestTablesNameEveryRevision keeps the tables, the constants and the
// manifest they are generated from in step: one table per revision of
// schemas/manifest.json, in its order (newest first), of its era, and
// mcp.Revisions the same.
func TestTablesNameEveryRevision(t *testing.T) {
	m, err := schemas.Load()
	if err != nil {
		t.Fatal(err)
	}
	var got, want, consts []string
	for _, tab := range revision.Tables {
		got = append(got, string(tab.Revision)+" "+tab.Era)
	}
	for _, s := range m.Schemas {
		want = append(want, s.ID+" "+string(s.Era))
	}
	for _, r := range mcp.Revisions {
		era := "(no table)"
		if tab := revision.Lookup(r); tab != nil {
			era = tab.Era
		}
		consts = append(consts, string(r)+" "+era)
	}
	if !sort.StringsAreSorted(reverse(got)) || strings.Join(got, ", ") != strings.Join(want, ", ") {
		t.Errorf("tables = %v, want the manifest's %v, newest first", got, want)
	}
	if strings.Join(consts, ", ") != strings.Join(want, ", ") {
		t.Errorf("mcp.Revisions = %v, want the manifest's %v", consts, want)
	}
}

func reverse(s []string) []string {
	out := append([]string(nil), s...)
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	return out
}

func declaredOnly(t *testing.T, hubType string, b []byte) []byte {
	ty, ok := revision.Lookup(mcp.Rev20260728).Type(hubType)
	var m map[string]json.RawMessage
	if !ok || len(ty.Fields) == 0 || mcpjson.Unmarshal(b, &m) != nil {
		return b
	}
	for k := range m {
		if !contains(ty.Fields, k) {
			t.Logf("example member %q is not declared by 2026-07-28 %s", k, hubType)
			delete(m, k)
		}
	}
	out, _ := json.Marshal(m)
	return out
}
