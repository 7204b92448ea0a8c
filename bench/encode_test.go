package bench

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/mcpx-dev/mcpx/generated/convert"
	"github.com/mcpx-dev/mcpx/generated/mcp"
	"github.com/mcpx-dev/mcpx/testkit/revs"
)

// encode is the path a result takes to a peer of rev: convert.Downgrade,
// as the edge calls it, then json.Marshal.
func encode(rev mcp.Revision, r *mcp.ListToolsResult) ([]byte, error) {
	wire, err := convert.Downgrade(rev, r)
	if err != nil {
		return nil, err
	}
	return json.Marshal(wire)
}

// BenchmarkEncodeToolsList measures encoding a 50-tool tools/list result:
// "hub" marshals the hub value as is; each revision goes through encode: its
// generated downgrade, then json.Marshal of the result.
func BenchmarkEncodeToolsList(b *testing.B) {
	res := toolsList()
	b.Run("hub", func(b *testing.B) {
		out, err := json.Marshal(res)
		if err != nil {
			b.Fatal(err)
		}
		b.SetBytes(int64(len(out)))
		b.ReportAllocs()
		for b.Loop() {
			if _, err := json.Marshal(res); err != nil {
				b.Fatal(err)
			}
		}
	})
	for _, rev := range mcp.Revisions {
		b.Run(string(rev), func(b *testing.B) {
			out, err := encode(rev, res)
			if err != nil {
				b.Fatal(err)
			}
			b.SetBytes(int64(len(out)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := encode(rev, res); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func TestEncodeToolsList(t *testing.T) {
	res := toolsList()
	hub, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{`"title":`, `"ttlMs":`, `"cacheScope":`, `"resultType":`, `"outputSchema":`, `"icons":`, `"annotations":`, `"_meta":`} {
		if !strings.Contains(string(hub), key) {
			t.Errorf("hub encoding lacks %s: the fixture is not what the benchmark claims", key)
		}
	}
	for _, rev := range mcp.Revisions {
		out, err := encode(rev, res)
		if err != nil {
			t.Fatalf("%s: %v", rev, err)
		}
		if !json.Valid(out) {
			t.Fatalf("%s: invalid JSON: %s", rev, out)
		}
		var back struct {
			Tools []struct {
				Name        string          `json:"name"`
				InputSchema json.RawMessage `json:"inputSchema"`
			} `json:"tools"`
		}
		if err := json.Unmarshal(out, &back); err != nil {
			t.Fatalf("%s: %v", rev, err)
		}
		if len(back.Tools) != len(res.Tools) {
			t.Fatalf("%s: %d tools, want %d", rev, len(back.Tools), len(res.Tools))
		}
		for i, tool := range back.Tools {
			if tool.Name != res.Tools[i].Name || len(tool.InputSchema) == 0 {
				t.Errorf("%s: tool %d is %q with %d bytes of inputSchema, want %q", rev, i, tool.Name, len(tool.InputSchema), res.Tools[i].Name)
			}
		}
		switch {
		case rev == mcp.Rev20241105:
			for _, key := range []string{`"title"`, `"ttlMs"`, `"cacheScope"`, `"resultType"`, `"outputSchema"`, `"annotations"`, `"icons"`} {
				if strings.Contains(string(out), key) {
					t.Errorf("%s: encoding has %s", rev, key)
				}
			}
		case revs.IsModern(rev):
			for _, key := range []string{`"title":`, `"ttlMs":`, `"cacheScope":`, `"resultType":`} {
				if !strings.Contains(string(out), key) {
					t.Errorf("%s: encoding lacks %s", rev, key)
				}
			}
		}
	}
}

// toolsList builds a realistic tools/list result as a 2026-07-28 server
// would send it: 50 tools from ten services, with titles, descriptions of
// realistic length, input schemas of 3-6 properties (nested objects, enums,
// arrays), output schemas on some, annotations, icons on some, _meta on some,
// and ttlMs, cacheScope and resultType set.
func toolsList() *mcp.ListToolsResult {
	services := []struct{ prefix, product, host string }{
		{"github", "GitHub", "github.com"},
		{"gitlab", "GitLab", "gitlab.com"},
		{"jira", "Jira", "atlassian.net"},
		{"linear", "Linear", "linear.app"},
		{"slack", "Slack", "slack.com"},
		{"notion", "Notion", "notion.so"},
		{"drive", "Google Drive", "drive.google.com"},
		{"postgres", "PostgreSQL", "db.internal"},
		{"s3", "Amazon S3", "s3.amazonaws.com"},
		{"calendar", "Google Calendar", "calendar.google.com"},
	}
	var tools []mcp.Tool
	for i, s := range services {
		fill := strings.NewReplacer("{product}", s.product, "{host}", s.host).Replace
		for j, tmpl := range templates {
			n := i*len(templates) + j
			t := mcp.Tool{
				Name:        s.prefix + "_" + tmpl.verb,
				Title:       tmpl.title + " (" + s.product + ")",
				Description: fill(tmpl.description),
				InputSchema: json.RawMessage(fill(tmpl.input)),
				Annotations: &mcp.ToolAnnotations{
					Title:          tmpl.title,
					ReadOnlyHint:   mcp.Ptr(tmpl.readOnly),
					OpenWorldHint:  mcp.Ptr(true),
					IdempotentHint: mcp.Ptr(tmpl.readOnly),
				},
			}
			if !tmpl.readOnly {
				t.Annotations.DestructiveHint = mcp.Ptr(tmpl.verb == "delete_item")
			}
			if tmpl.output != "" {
				t.OutputSchema = json.RawMessage(tmpl.output)
			}
			if n%3 == 0 {
				t.Icons = []mcp.Icon{
					{Src: "https://" + s.host + "/favicon.svg", MIMEType: "image/svg+xml", Sizes: []string{"any"}},
					{Src: "https://" + s.host + "/icon-dark-48.png", MIMEType: "image/png", Sizes: []string{"48x48"}, Theme: mcp.ThemeDark},
				}
			}
			if n%4 == 0 {
				t.Meta = mcp.Meta{
					"com.example.gateway/upstream":  json.RawMessage(`"` + s.prefix + `"`),
					"com.example.gateway/rateLimit": json.RawMessage(`{"requestsPerMinute":600,"burst":20}`),
				}
			}
			tools = append(tools, t)
		}
	}
	return &mcp.ListToolsResult{
		Tools:      tools,
		NextCursor: "eyJvZmZzZXQiOjUwLCJuYW1lc3BhY2UiOiJkZWZhdWx0In0",
		TTLMs:      300000,
		CacheScope: mcp.CacheScopePrivate,
		ResultType: "complete",
		Meta:       mcp.Meta{"com.example.gateway/namespace": json.RawMessage(`"default"`)},
	}
}

// templates are five kinds of tool each service offers; {product} stands
// for the product and {host} for its host.
var templates = []struct {
	verb, title, description, input, output string
	readOnly                                bool
}{{
	verb:     "search_items",
	title:    "Search items",
	readOnly: true,
	description: "Search {product} for items matching a free-text query and optional filters. " +
		"Results are ranked by relevance and paginated; pass the returned cursor to fetch the next page. " +
		"Use this before fetching or updating an item when you do not know its identifier. " +
		"Only items the authenticated account can see on {host} are returned.",
	input: `{"type":"object","properties":{` +
		`"query":{"type":"string","description":"Free-text query, matched against names, bodies and comments in {product}.","minLength":1},` +
		`"filters":{"type":"object","description":"Narrow the search.","properties":{"state":{"type":"string","enum":["open","closed","all"],"default":"open"},"labels":{"type":"array","items":{"type":"string"}},"updatedAfter":{"type":"string","format":"date-time"}},"additionalProperties":false},` +
		`"sort":{"type":"string","enum":["relevance","created","updated"],"default":"relevance"},` +
		`"limit":{"type":"integer","minimum":1,"maximum":100,"default":20},` +
		`"cursor":{"type":"string","description":"Opaque cursor from a previous call."}},` +
		`"required":["query"],"additionalProperties":false}`,
	output: `{"type":"object","properties":{"items":{"type":"array","items":{"type":"object","properties":{"id":{"type":"string"},"name":{"type":"string"},"url":{"type":"string","format":"uri"},"score":{"type":"number"}},"required":["id","name"]}},"nextCursor":{"type":"string"}},"required":["items"]}`,
}, {
	verb:     "get_item",
	title:    "Get item",
	readOnly: true,
	description: "Fetch one {product} item by its identifier, with its metadata, body and the most recent activity. " +
		"Set includeHistory to also return the full change history, which can be large for long-lived items.",
	input: `{"type":"object","properties":{` +
		`"id":{"type":"string","description":"The {product} item identifier."},` +
		`"includeHistory":{"type":"boolean","default":false},` +
		`"fields":{"type":"array","items":{"type":"string","enum":["body","owner","labels","links","attachments"]},"uniqueItems":true}},` +
		`"required":["id"],"additionalProperties":false}`,
}, {
	verb:  "create_item",
	title: "Create item",
	description: "Create a new item in {product}. The item is created on behalf of the authenticated account and " +
		"appears immediately to everyone with access to the target container. Returns the new item's identifier and URL " +
		"on {host}. Prefer updating an existing item over creating a near-duplicate; search first.",
	input: `{"type":"object","properties":{` +
		`"container":{"type":"string","description":"Project, repository, channel or folder to create the item in."},` +
		`"name":{"type":"string","minLength":1,"maxLength":256},` +
		`"body":{"type":"string","description":"Markdown body."},` +
		`"priority":{"type":"string","enum":["urgent","high","medium","low","none"],"default":"none"},` +
		`"assignee":{"type":"object","properties":{"id":{"type":"string"},"email":{"type":"string","format":"email"}},"minProperties":1},` +
		`"labels":{"type":"array","items":{"type":"string"},"maxItems":20}},` +
		`"required":["container","name"],"additionalProperties":false}`,
	output: `{"type":"object","properties":{"id":{"type":"string"},"url":{"type":"string","format":"uri"},"createdAt":{"type":"string","format":"date-time"}},"required":["id","url"]}`,
}, {
	verb:  "update_item",
	title: "Update item",
	description: "Update fields of an existing {product} item. Only the fields present in changes are modified; " +
		"omit a field to leave it unchanged and set it to null to clear it. Fails if the item changed since " +
		"expectedVersion, when given, so concurrent edits are not lost.",
	input: `{"type":"object","properties":{` +
		`"id":{"type":"string"},` +
		`"changes":{"type":"object","properties":{"name":{"type":"string"},"body":{"type":"string"},"state":{"type":"string","enum":["open","in_progress","done","closed"]},"labels":{"type":"object","properties":{"add":{"type":"array","items":{"type":"string"}},"remove":{"type":"array","items":{"type":"string"}}}}},"minProperties":1},` +
		`"expectedVersion":{"type":"integer","minimum":0},` +
		`"notify":{"type":"boolean","default":true}},` +
		`"required":["id","changes"],"additionalProperties":false}`,
}, {
	verb:  "delete_item",
	title: "Delete item",
	description: "Permanently delete a {product} item. This cannot be undone from {host}; " +
		"ask the user to confirm before calling. Set dryRun to see what would be deleted, including dependent items.",
	input: `{"type":"object","properties":{` +
		`"id":{"type":"string"},` +
		`"dryRun":{"type":"boolean","default":false},` +
		`"reason":{"type":"string","enum":["duplicate","spam","obsolete","other"]}},` +
		`"required":["id"],"additionalProperties":false}`,
	output: `{"type":"object","properties":{"deleted":{"type":"array","items":{"type":"string"}},"dryRun":{"type":"boolean"}},"required":["deleted","dryRun"]}`,
}}
