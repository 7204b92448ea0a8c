package closedworld

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/mcpx-dev/mcpx/schemas"
	"github.com/mcpx-dev/mcpx/testkit/revs"
)

// validator returns the default validator, or fails the test saying how to
// get the schema files.
func validator(t *testing.T) *Validator {
	t.Helper()
	v, err := Default()
	if err != nil {
		t.Fatalf("loading the schemas from %s failed: %v\nrun `make schemas` to fetch the schema files", schemas.SourceDir(), err)
	}
	return v
}

// Revision lists by role, from the generated tables (testkit/revs).
var (
	all    = revs.Strings(revs.All())
	legacy = revs.Strings(revs.Legacy())
	modern = revs.Strings(revs.Modern())
)

// revsWith and revsWithout are the revisions whose table gives hub type
// typ the member, and the others.
func revsWith(typ, member string) []string    { return revs.Strings(revs.WithMember(typ, member)) }
func revsWithout(typ, member string) []string { return revs.Strings(revs.WithoutMember(typ, member)) }

const (
	tool        = `{"name":"get_weather","description":"Current weather","inputSchema":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}}`
	titledTool  = `{"name":"get_weather","title":"Weather","inputSchema":{"type":"object"}}`
	textContent = `[{"type":"text","text":"22.5 degrees"}]`
	taskFields  = `"taskId":"786512e2","status":"working","createdAt":"2025-11-25T10:30:00Z","lastUpdatedAt":"2025-11-25T10:40:00Z"`
)

// callToolResult is a CallToolResult for rev with the given _meta object
// (raw JSON, or "" for none).
func callToolResult(rev, meta string) string {
	s := `{"content":` + textContent
	if revs.HasMember(rev, "CallToolResult", "resultType") {
		s += `,"resultType":"complete"`
	}
	if meta != "" {
		s += `,"_meta":` + meta
	}
	return s + "}"
}

// listResult wraps a list result body for rev, adding the fields a modern
// revision requires of a cacheable result.
func listResult(rev, body string) string {
	if revs.IsModern(rev) {
		body += `,"resultType":"complete","ttlMs":60000,"cacheScope":"public"`
	}
	return "{" + body + "}"
}

type check struct {
	name     string
	rev, def string
	instance string
	ok       bool
	want     string // substring of the error when !ok
}

func runChecks(t *testing.T, v *Validator, checks []check) {
	t.Helper()
	for _, c := range checks {
		t.Run(c.name+" ("+c.rev+")", func(t *testing.T) {
			err := v.Validate(c.rev, c.def, []byte(c.instance))
			switch {
			case c.ok && err != nil:
				t.Fatalf("want valid, got: %v", err)
			case !c.ok && err == nil:
				t.Fatalf("want an error containing %q, got none", c.want)
			case !c.ok && !strings.Contains(err.Error(), c.want):
				t.Fatalf("error %q does not contain %q", err, c.want)
			}
		})
	}
}

func TestValidate(t *testing.T) {
	v := validator(t)
	var checks []check
	add := func(name string, revs []string, def string, instance func(rev string) string, ok bool, want string) {
		for _, rev := range revs {
			checks = append(checks, check{name, rev, def, instance(rev), ok, want})
		}
	}
	same := func(s string) func(string) string { return func(string) string { return s } }

	add("a plain tool is valid in every revision", all, "Tool", same(tool), true, "")
	add("a tool with a title is too new", revsWithout("Tool", "title"), "Tool", same(titledTool), false,
		"Tool: /title: member not declared by this revision")
	add("a tool with a title is fine from 2025-06-18", revsWith("Tool", "title"), "Tool", same(titledTool), true, "")

	caps := `{"tools":{"listChanged":true},"extensions":{"io.modelcontextprotocol/tasks":{}}}`
	add("server capabilities with extensions are too new", legacy, "ServerCapabilities", same(caps), false, "/extensions: member not declared")
	add("server capabilities with extensions are fine in a modern revision", modern, "ServerCapabilities", same(caps), true, "")

	add("a tool list with ttlMs is too new", legacy, "ListToolsResult", same(`{"tools":[`+tool+`],"ttlMs":60000}`), false, "/ttlMs: member not declared")
	add("a tool list with ttlMs and cacheScope is modern", modern, "ListToolsResult",
		same(`{"resultType":"complete","tools":[`+tool+`],"ttlMs":60000,"cacheScope":"public"}`), true, "")

	serverInfo := `{"io.modelcontextprotocol/serverInfo":{"name":"mcpx","version":"1.0.0"}}`
	add("serverInfo in a result's _meta is too new", legacy, "CallToolResult",
		func(rev string) string { return callToolResult(rev, serverInfo) }, false,
		"/_meta/io.modelcontextprotocol~1serverInfo: reserved _meta key not declared by this revision")
	add("serverInfo in a result's _meta is modern", modern, "CallToolResult",
		func(rev string) string { return callToolResult(rev, serverInfo) }, true, "")
	add("serverInfo in _meta is still checked against Implementation", modern, "CallToolResult",
		func(rev string) string {
			return callToolResult(rev, `{"io.modelcontextprotocol/serverInfo":{"name":"mcpx"}}`)
		}, false, "missing property 'version'")

	add("an ordinary _meta key is fine everywhere", all, "CallToolResult",
		func(rev string) string { return callToolResult(rev, `{"com.example/x":{"anything":[1,2,3]}}`) }, true, "")

	relatedTask := `{"io.modelcontextprotocol/related-task":{"taskId":"786512e2"}}`
	add("related-task in _meta is 2025-11-25 by the overlay", []string{"2025-11-25"}, "CallToolResult",
		func(rev string) string { return callToolResult(rev, relatedTask) }, true, "")
	add("related-task in _meta is declared by the tasks extension", modern, "CallToolResult",
		func(rev string) string { return callToolResult(rev, relatedTask) }, true, "")
	add("related-task in _meta is too new", []string{"2025-06-18"}, "CallToolResult",
		func(rev string) string { return callToolResult(rev, relatedTask) }, false, "reserved _meta key not declared")

	freeSchema := `{"name":"t","inputSchema":{"type":"object","properties":{"when":{"type":"string","format":"date"}},"additionalProperties":false,"$defs":{"n":{"type":"integer"}},"if":{"required":["when"]}}}`
	add("an input schema may use any JSON Schema keyword (open place)", all, "Tool", same(freeSchema), true, "")
	call := `"method":"tools/call","params":{"name":"t","arguments":{"deep":{"x":{"y":[{"z":1}]}}}}`
	add("tool arguments are open", []string{"2024-11-05"}, "CallToolRequest", same(`{`+call+`}`), true, "")
	add("tool arguments are open", []string{"2025-11-25"}, "CallToolRequest", same(`{"jsonrpc":"2.0","id":1,`+call+`}`), true, "")
	// Before 2025-11-25 a request definition is only method and params; the
	// JSON-RPC envelope is JSONRPCRequest's. Validate the two separately.
	add("legacy request definitions do not declare the JSON-RPC envelope", []string{"2024-11-05", "2025-06-18"}, "CallToolRequest",
		same(`{"jsonrpc":"2.0","id":1,`+call+`}`), false, "CallToolRequest: /id: member not declared")
	add("the legacy JSON-RPC envelope is JSONRPCRequest", []string{"2024-11-05", "2025-06-18"}, "JSONRPCRequest",
		same(`{"jsonrpc":"2.0","id":1,`+call+`}`), true, "")

	audio := `{"content":[{"type":"audio","data":"UklGRg==","mimeType":"audio/wav"}]}`
	add("an audio block is not a 2024-11-05 content block", []string{"2024-11-05"}, "CallToolResult", same(audio), false,
		"/content/0: schema-invalid: 'anyOf' failed")
	add("an audio block is a 2025-03-26 content block", []string{"2025-03-26"}, "CallToolResult", same(audio), true, "")
	add("a text block with a field too new for it", []string{"2024-11-05"}, "CallToolResult",
		same(`{"content":[{"type":"text","text":"a"},{"type":"text","text":"b","_meta":{}}]}`), false,
		"2024-11-05 CallToolResult: /content/1/_meta: member not declared by this revision")

	add("a resource template with uri instead of uriTemplate", all, "ListResourceTemplatesResult",
		func(rev string) string {
			return listResult(rev, `"resourceTemplates":[{"uri":"file:///{path}","name":"files"}]`)
		}, false, "missing property 'uriTemplate'")
	add("a resource template with uriTemplate", all, "ListResourceTemplatesResult",
		func(rev string) string {
			return listResult(rev, `"resourceTemplates":[{"uriTemplate":"file:///{path}","name":"files"}]`)
		}, true, "")

	add("a tool without a name is schema-invalid", all, "Tool", same(`{"inputSchema":{"type":"object"}}`), false,
		"Tool: (root): schema-invalid: missing property 'name'")
	add("format byte is asserted", all, "ImageContent",
		same(`{"type":"image","data":"not base64!","mimeType":"image/png"}`), false, "/data: schema-invalid")
	add("format uri is asserted", all, "Root", same(`{"uri":"not a uri"}`), false, "/uri: schema-invalid")

	add("a legacy task result pools Result and Task (allOf)", []string{"2025-11-25"}, "GetTaskResult",
		same(`{`+taskFields+`,"ttl":null,"pollInterval":500,"_meta":{"com.example/x":1}}`), true, "")
	add("a legacy task result with the extension's field names", []string{"2025-11-25"}, "GetTaskResult",
		same(`{`+taskFields+`,"ttl":null,"pollIntervalMs":500}`), false, "/pollIntervalMs: member not declared")

	add("the tasks extension's Task", modern, "Task", same(`{`+taskFields+`,"ttlMs":60000,"pollIntervalMs":500}`), true, "")
	// The extension's results carry resultType by the overlay
	// (add-result-type), which the validator reads as the generator does.
	add("the tasks extension's CreateTaskResult", modern, "CreateTaskResult", same(`{"resultType":"task",`+taskFields+`,"ttlMs":null,"_meta":{"com.example/x":1}}`), true, "")
	add("the tasks extension's CreateTaskResult needs resultType", modern, "CreateTaskResult", same(`{`+taskFields+`,"ttlMs":null}`), false, "missing property 'resultType'")
	add("the tasks extension's GetTaskResult (completed)", modern, "GetTaskResult",
		same(`{"resultType":"complete",`+strings.Replace(taskFields, "working", "completed", 1)+`,"ttlMs":null,"result":{"content":[]}}`), true, "")
	add("the tasks extension's acknowledgements carry resultType", modern, "UpdateTaskResult", same(`{"resultType":"complete"}`), true, "")
	add("the tasks extension's Task is closed by its own schema", modern, "Task",
		same(`{`+taskFields+`,"ttlMs":1,"ttl":1}`), false, "schema-invalid: additional properties 'ttl' not allowed")
	add("the tasks extension's GetTaskResult is still closed", modern, "GetTaskResult",
		same(`{"resultType":"complete",`+taskFields+`,"ttlMs":1,"ttl":1}`), false, "additional properties 'ttl' not allowed")

	runChecks(t, v, checks)
}

func TestLoadWithoutSchemaFiles(t *testing.T) {
	_, err := Load(t.TempDir())
	if err == nil || !errors.Is(err, schemas.ErrMissing) || !strings.Contains(err.Error(), "make schemas") {
		t.Fatalf("want a missing-file error that says to run `make schemas`, got %v", err)
	}
}

func TestErrorMessage(t *testing.T) {
	v := validator(t)
	err := v.Validate("2025-03-26", "ListToolsResult", []byte(`{"tools":[`+tool+`,`+titledTool+`]}`))
	const want = "2025-03-26 ListToolsResult: /tools/1/title: member not declared by this revision"
	if err == nil || err.Error() != want {
		t.Fatalf("got %v, want %s", err, want)
	}
	var e *Error
	if !errors.As(err, &e) || e.Revision != "2025-03-26" || e.Definition != "ListToolsResult" || e.Pointer != "/tools/1/title" {
		t.Fatalf("got %#v", e)
	}
}

func TestSchemaErrorsWrapJSONSchema(t *testing.T) {
	v := validator(t)
	err := v.Validate("2024-11-05", "Tool", []byte(`{"inputSchema":{"type":"object"}}`))
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		t.Fatalf("want a *jsonschema.ValidationError inside, got %T: %v", err, err)
	}
}

func TestUnknownRevisionOrDefinition(t *testing.T) {
	v := validator(t)
	for _, c := range []struct{ name, rev, def, want string }{
		{"unknown revision", "2099-01-01", "Tool", `unknown revision "2099-01-01"`},
		{"unknown definition", "2025-06-18", "NoSuchThing", `2025-06-18: no definition "NoSuchThing"`},
		{"extension definition outside 2026-07-28", "2025-06-18", "Task", `2025-06-18: no definition "Task"`},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := v.Validate(c.rev, c.def, []byte(`{}`))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got %v, want %q", err, c.want)
			}
			if v.Has(c.rev, c.def) {
				t.Fatalf("Has(%q, %q) = true", c.rev, c.def)
			}
		})
	}
}

func TestHas(t *testing.T) {
	v := validator(t)
	for _, c := range []struct {
		rev, def string
		want     bool
	}{
		{"2024-11-05", "Tool", true},
		{"2024-11-05", "AudioContent", false},
		{"2025-03-26", "AudioContent", true},
		{"2026-07-28", "DiscoverResult", true},
		{"2026-07-28", "Task", true},             // tasks extension
		{"2026-07-28", "TaskStatus", true},       // tasks extension
		{"2026-07-28", "InputRequests", true},    // both; the core one wins
		{"2025-11-25", "CreateTaskResult", true}, // the legacy tasks utility
		{"2025-11-25", "TaskStatusNotificationParams", true},
		{"2025-06-18", "CreateTaskResult", false},
	} {
		if got := v.Has(c.rev, c.def); got != c.want {
			t.Errorf("Has(%q, %q) = %v, want %v", c.rev, c.def, got, c.want)
		}
	}
}

func TestMalformedInstances(t *testing.T) {
	v := validator(t)
	for _, c := range []struct{ name, instance string }{
		{"empty input", ``},
		{"truncated object", `{"name":`},
		{"trailing garbage", `{"name":"x","inputSchema":{"type":"object"}} x`},
		{"not JSON", `nul`},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := v.Validate("2025-06-18", "Tool", []byte(c.instance))
			if err == nil || !strings.Contains(err.Error(), "2025-06-18 Tool: instance is not valid JSON") {
				t.Fatalf("got %v", err)
			}
		})
	}
	for _, c := range []struct{ name, instance string }{
		{"null", `null`},
		{"an array", `[{"name":"x"}]`},
		{"a string", `"Tool"`},
		{"a _meta that is not an object", `{"name":"x","inputSchema":{"type":"object"},"_meta":5}`},
		{"an inputSchema that is an array", `{"name":"x","inputSchema":[]}`},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := v.Validate("2025-06-18", "Tool", []byte(c.instance))
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("want an *Error, got %T: %v", err, err)
			}
		})
	}
}

// TestDrafts checks that each file is compiled in the dialect its $schema
// names.
func TestDrafts(t *testing.T) {
	v := validator(t)
	for _, c := range []struct {
		rev, def string
		want     int
	}{
		{"2024-11-05", "Tool", 7},
		{"2025-03-26", "Tool", 7},
		{"2025-06-18", "Tool", 7},
		{"2025-11-25", "Tool", 2020},
		{"2026-07-28", "Tool", 2020},
		{"2026-07-28", "Task", 2020},
	} {
		_, d, err := v.lookup(c.rev, c.def)
		if err != nil {
			t.Fatal(err)
		}
		sch, err := v.compile(d.url + "#" + fragment(schemas.Pointer(d.defsKey, c.def)))
		if err != nil {
			t.Fatal(err)
		}
		if sch.DraftVersion != c.want {
			t.Errorf("%s %s compiled as draft %d, want %d", c.rev, c.def, sch.DraftVersion, c.want)
		}
	}
}

// TestOverlayMatters loads the schemas with an overlay that lacks the open
// places and meta keys, and with one that opens a place by a synthesized
// name, to show the overlay, not an accident of the schema, decides.
func TestOverlayMatters(t *testing.T) {
	empty, err := load(schemas.SourceDir(), []byte(`{"entries":[]}`))
	if err != nil {
		t.Fatalf("%v\nrun `make schemas` to fetch the schema files", err)
	}
	runChecks(t, empty, []check{
		{"without the overlay an input schema is walked", "2024-11-05", "Tool",
			`{"name":"t","inputSchema":{"type":"object","additionalProperties":false}}`, false, "/inputSchema/additionalProperties: member not declared"},
		{"without the overlay related-task is unknown", "2025-11-25", "CallToolResult",
			callToolResult("2025-11-25", `{"io.modelcontextprotocol/related-task":{"taskId":"t"}}`), false, "reserved _meta key not declared"},
		// Known defect of the pinned extension schema, pinned here so that a
		// new pin that fixes it is noticed (and the add-result-type entries
		// can go): zod's intersection of the open Result base with the strict
		// task object puts "additionalProperties": false in one allOf branch,
		// so "resultType" (which the extension's text says a server MUST
		// send) is rejected by plain JSON Schema.
		{"without the overlay the extension's CreateTaskResult rejects resultType", "2026-07-28", "CreateTaskResult",
			`{"resultType":"task","taskId":"t","status":"working","createdAt":"2026-01-01T00:00:00Z","lastUpdatedAt":"2026-01-01T00:00:00Z","ttlMs":null}`, false, "additional properties 'resultType' not allowed"},
	})

	// 2024-11-05 InitializeRequest.params is an inline object, so its
	// synthesized name is InitializeRequestParams.
	opened, err := load(schemas.SourceDir(), []byte(`{"entries":[{"kind":"open","at":"InitializeRequestParams.capabilities","why":"test"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	init := `{"method":"initialize","params":{"protocolVersion":"2024-11-05","clientInfo":{"name":"c","version":"1"},"capabilities":{"roots":{"listChanged":true},"elicitation":{}}}}`
	runChecks(t, empty, []check{{"capabilities are walked", "2024-11-05", "InitializeRequest", init, false, "/params/capabilities/elicitation: member not declared"}})
	runChecks(t, opened, []check{{"an open place named by synthesis is not walked", "2024-11-05", "InitializeRequest", init, true, ""}})
}

// exampleDefects are upstream examples (at the pinned commit) that say more
// than their definition declares. Each is expected to fail with the given
// error, so that a fixed example is noticed.
var exampleDefects = map[string]string{
	// ListRootsRequest is an input request in 2026-07-28, embedded in an
	// InputRequiredResult; it declares only method and params, yet the
	// example carries a JSON-RPC id (CreateMessageRequest's and
	// ElicitRequest's examples do not).
	"ListRootsRequest/list-roots-request.json": "2026-07-28 ListRootsRequest: /id: member not declared by this revision",
	// The result lacks ttlMs and cacheScope, which ReadResourceResult
	// requires; it is schema-valid only as an InputRequiredResult (whose
	// resultType is any string), and InputRequiredResult has no contents.
	"ReadResourceResultResponse/read-resource-result-response.json": "2026-07-28 ReadResourceResultResponse: /result/contents: member not declared by this revision",
}

// TestSpecExamples validates every example the 2026-07-28 schema ships with.
func TestSpecExamples(t *testing.T) {
	v := validator(t)
	mirror := os.Getenv("MCPX_SCHEMA_MIRROR")
	if mirror == "" {
		mirror = filepath.Join(filepath.Dir(schemas.SourceDir()), "..", "shared", "spec")
	}
	dir := filepath.Join(mirror, "schemas", "2026-07-28", "examples")
	defs, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		t.Skipf("no spec mirror with examples at %s (set MCPX_SCHEMA_MIRROR to a copy of ../shared/spec)", dir)
	}
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, d := range defs {
		if !d.IsDir() {
			continue
		}
		def := d.Name()
		files, err := filepath.Glob(filepath.Join(dir, def, "*.json"))
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			name := def + "/" + filepath.Base(f)
			t.Run(name, func(t *testing.T) {
				if !v.Has("2026-07-28", def) {
					t.Skipf("2026-07-28 has no definition %s", def)
				}
				b, err := os.ReadFile(f)
				if err != nil {
					t.Fatal(err)
				}
				err = v.Validate("2026-07-28", def, b)
				if want, ok := exampleDefects[name]; ok {
					if err == nil || !strings.Contains(err.Error(), want) {
						t.Fatalf("known defect: want an error containing %q, got %v (fixed upstream? then drop it from exampleDefects)", want, err)
					}
					return
				}
				if err != nil {
					t.Fatal(err)
				}
			})
			n++
		}
	}
	if n == 0 {
		t.Fatalf("no examples under %s", dir)
	}
}

// TestConcurrentUse: eight goroutines validate valid and invalid instances
// of several definitions in every revision with one validator at once, and
// every answer is the one a sequential Validate gives: nil for a valid
// instance, the same error for an invalid one. Run under -race (make test
// does), it also finds unguarded shared state.
func TestConcurrentUse(t *testing.T) {
	type input struct{ rev, def, instance string }
	var inputs []input
	for _, rev := range all {
		inputs = append(inputs,
			input{rev, "CallToolResult", callToolResult(rev, `{"com.example/x":1}`)},
			input{rev, "CallToolResult", callToolResult(rev, `{"io.modelcontextprotocol/serverInfo":{"name":"mcpx","version":"1"}}`)},
			input{rev, "CallToolResult", `{"content":"not a list"}`},
			input{rev, "Tool", tool},
			input{rev, "Tool", titledTool},
			input{rev, "ListToolsResult", `{"tools":[` + tool + `],"ttlMs":60000}`},
			input{rev, "ServerCapabilities", `{"tools":{"listChanged":true},"extensions":{}}`},
		)
	}
	answer := func(v *Validator, in input) string {
		if err := v.Validate(in.rev, in.def, []byte(in.instance)); err != nil {
			return err.Error()
		}
		return ""
	}
	v := validator(t)
	want := make([]string, len(inputs))
	valid := 0
	for i, in := range inputs {
		if want[i] = answer(v, in); want[i] == "" {
			valid++
		}
	}
	if valid == 0 || valid == len(inputs) {
		t.Fatalf("%d of %d inputs are valid; the test needs both kinds", valid, len(inputs))
	}
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for j := range 3 * len(inputs) {
				k := (g*7 + j) % len(inputs) // each goroutine in its own order
				if got := answer(v, inputs[k]); got != want[k] {
					in := inputs[k]
					t.Errorf("%s %s %s: concurrently %q, sequentially %q", in.rev, in.def, in.instance, got, want[k])
				}
			}
		})
	}
	wg.Wait()
}

// FuzzValidate checks that no instance makes Validate panic.
func FuzzValidate(f *testing.F) {
	for _, s := range []string{
		tool, titledTool, `{}`, `[]`, `null`, `{"_meta":{"io.mcp/x":[{}]}}`,
		callToolResult("2026-07-28", `{"io.modelcontextprotocol/serverInfo":{"name":"a","version":"1"}}`),
		`{"content":[{"type":"resource","resource":{"uri":"a:b","text":"x","blob":"AAAA"}}]}`,
		`{` + taskFields + `,"ttlMs":null,"inputRequests":{"a":{"method":"roots/list","params":{}}}}`,
	} {
		f.Add(s)
	}
	v, err := Default()
	if err != nil {
		f.Fatalf("%v\nrun `make schemas` to fetch the schema files", err)
	}
	defs := []struct{ rev, def string }{
		{"2024-11-05", "CallToolResult"}, {"2025-06-18", "Tool"}, {"2025-11-25", "GetTaskResult"},
		{"2026-07-28", "CallToolResult"}, {"2026-07-28", "GetTaskResult"}, {"2026-07-28", "ReadResourceResultResponse"},
	}
	f.Fuzz(func(t *testing.T, instance string) {
		for _, d := range defs {
			_ = v.Validate(d.rev, d.def, []byte(instance))
		}
	})
}

// TestInheritedParamsMeta: up to 2025-06-18 a method's params may carry the
// _meta the abstract Request declares (progressToken), though the method's
// own params do not list it; reserved keys in it still need declaring.
func TestInheritedParamsMeta(t *testing.T) {
	v, err := Default()
	if err != nil {
		t.Fatalf("%v\nrun `make schemas` to fetch the schema files", err)
	}
	runChecks(t, v, []check{
		{"progressToken on a 2024-11-05 tools/call", "2024-11-05", "CallToolRequest",
			`{"method":"tools/call","params":{"name":"x","_meta":{"progressToken":1}}}`, true, ""},
		{"a reserved key there is still checked", "2024-11-05", "CallToolRequest",
			`{"method":"tools/call","params":{"name":"x","_meta":{"io.modelcontextprotocol/serverInfo":{}}}}`, false, "reserved _meta key not declared"},
		{"no _meta on a result that lacks it", "2024-11-05", "CompleteResult",
			`{"completion":{"values":[]},"nope":1}`, false, "member not declared"},
	})
}
