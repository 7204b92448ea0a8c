package openapi

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpx-dev/mcpx/generated/mcp"
	"github.com/mcpx-dev/mcpx/runtime/catalog"
)

// petDoc is a small OpenAPI 3.1 document: path, query, header and body
// parameters, a $ref, an error status, a slow endpoint, and two
// operations mcpx cannot serve (an XML body, a cookie parameter).
const petDoc = `{
  "openapi": "3.1.0",
  "info": {"title": "Pets", "version": "1"},
  "servers": [{"url": "/api"}],
  "paths": {
    "/pets": {
      "get": {"operationId": "listPets", "summary": "List pets", "description": "Every pet, filtered.",
        "parameters": [
          {"name": "limit", "in": "query", "schema": {"type": "integer", "maximum": 100}},
          {"name": "tag", "in": "query", "schema": {"type": "array", "items": {"type": "string"}}},
          {"name": "X-Trace", "in": "header", "schema": {"type": "string"}}],
        "responses": {"200": {"description": "ok", "content": {"application/json": {"schema": {"type": "array", "items": {"$ref": "#/components/schemas/Pet"}}}}}}},
      "post": {"operationId": "createPet",
        "requestBody": {"required": true, "content": {"application/json": {"schema": {"$ref": "#/components/schemas/NewPet"}}}},
        "responses": {"201": {"description": "made", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Pet"}}}}}}
    },
    "/pets/{petId}": {
      "parameters": [{"name": "petId", "in": "path", "required": true, "schema": {"type": "string"}}],
      "get": {"operationId": "getPet", "responses": {"200": {"description": "ok", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Pet"}}}}, "404": {"description": "none"}}},
      "delete": {"operationId": "deletePet", "responses": {"204": {"description": "gone"}}}
    },
    "/slow": {"get": {"responses": {"200": {"description": "late"}}}},
    "/away": {"get": {"operationId": "goAway", "responses": {"200": {"description": "moved"}}}},
    "/upload": {"post": {"operationId": "upload", "requestBody": {"content": {"application/xml": {}}}, "responses": {"200": {"description": "ok"}}}},
    "/session": {"get": {"operationId": "withCookie", "parameters": [{"name": "sid", "in": "cookie", "schema": {"type": "string"}}], "responses": {"200": {"description": "ok"}}}}
  },
  "components": {"schemas": {
    "Pet": {"type": "object", "required": ["id", "name"], "properties": {"id": {"type": "string"}, "name": {"type": "string"}, "tag": {"type": ["string", "null"]}}},
    "NewPet": {"type": "object", "required": ["name"], "properties": {"name": {"type": "string"}, "tag": {"type": "string"}}}
  }}
}`

// petAPI serves petDoc at /openapi.json and its operations under /api.
func petAPI(t *testing.T) *httptest.Server {
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte(`{"leaked":true}`)) }))
	t.Cleanup(other.Close)
	mux := http.NewServeMux()
	mux.HandleFunc("GET /openapi.json", func(w http.ResponseWriter, r *http.Request) { w.Write([]byte(petDoc)) })
	mux.HandleFunc("GET /api/pets", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode([]map[string]string{{"id": "1", "name": "Rex", "tag": strings.Join(r.URL.Query()["tag"], "+") + "|" + r.URL.Query().Get("limit") + "|" + r.Header.Get("X-Trace") + "|" + r.Header.Get("X-Api-Key")}})
	})
	mux.HandleFunc("POST /api/pets", func(w http.ResponseWriter, r *http.Request) {
		var in map[string]string
		json.NewDecoder(r.Body).Decode(&in)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(201)
		json.NewEncoder(w).Encode(map[string]string{"id": "2", "name": in["name"]})
	})
	mux.HandleFunc("GET /api/pets/{id}", func(w http.ResponseWriter, r *http.Request) {
		if r.PathValue("id") != "1" {
			http.Error(w, `{"message":"no pet `+r.PathValue("id")+`"}`, 404)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"id":"1","name":"Rex"}`))
	})
	mux.HandleFunc("DELETE /api/pets/{id}", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(204) })
	mux.HandleFunc("GET /api/slow", func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-time.After(5 * time.Second):
		case <-r.Context().Done():
		}
	})
	mux.HandleFunc("GET /api/away", func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, other.URL, http.StatusFound) })
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

func load(t *testing.T, src Source) *catalog.Catalog {
	t.Helper()
	c, err := Load(context.Background(), src, nil)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func callTool(t *testing.T, c *catalog.Catalog, name, args string) *mcp.CallToolResult {
	t.Helper()
	r, err := c.CallTool(context.Background(), &mcp.CallToolRequestParams{Name: name, Arguments: json.RawMessage(args)})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return r
}

func text(r *mcp.CallToolResult) string {
	if len(r.Content) == 0 {
		return ""
	}
	if tc, ok := r.Content[0].Value.(*mcp.TextContent); ok {
		return tc.Text
	}
	return ""
}

func TestOperationsBecomeTools(t *testing.T) {
	api := petAPI(t)
	c := load(t, Source{Document: api.URL + "/openapi.json"})
	tools, _ := c.ListTools(context.Background())
	byName := map[string]mcp.Tool{}
	var names []string
	for _, tl := range tools {
		byName[tl.Name] = tl
		names = append(names, tl.Name)
	}
	// Paths sorted, methods in order; the XML and cookie operations are
	// skipped; the slow one is named from its method and path.
	if got := strings.Join(names, " "); got != "goAway listPets createPet getPet deletePet get_slow" {
		t.Fatalf("tools: %s", got)
	}
	lp := byName["listPets"]
	if lp.Description != "List pets\n\nEvery pet, filtered." || *lp.Annotations.ReadOnlyHint != true || *lp.Annotations.IdempotentHint != true {
		t.Errorf("listPets: %+v %+v", lp, lp.Annotations)
	}
	if dp := byName["deletePet"]; dp.Annotations.DestructiveHint == nil || !*dp.Annotations.DestructiveHint {
		t.Error("deletePet is not destructive")
	}
	for name, tl := range byName {
		if strings.Contains(string(tl.InputSchema), "$ref") || strings.Contains(string(tl.OutputSchema), "$ref") {
			t.Errorf("%s: a $ref is left: %s %s", name, tl.InputSchema, tl.OutputSchema)
		}
	}
	var in struct {
		Properties map[string]map[string]any `json:"properties"`
		Required   []string                  `json:"required"`
	}
	json.Unmarshal(byName["createPet"].InputSchema, &in)
	if in.Properties["body"]["required"] == nil || len(in.Required) != 1 || in.Required[0] != "body" {
		t.Errorf("createPet inputSchema %s", byName["createPet"].InputSchema)
	}
	json.Unmarshal(byName["getPet"].InputSchema, &in)
	if _, ok := in.Properties["petId"]; !ok || in.Required[0] != "petId" {
		t.Errorf("getPet inputSchema (the path item's parameter) %s", byName["getPet"].InputSchema)
	}
	if !strings.Contains(string(byName["listPets"].OutputSchema), `"result"`) || !strings.Contains(string(byName["getPet"].OutputSchema), `"name"`) {
		t.Errorf("outputSchemas: %s / %s", byName["listPets"].OutputSchema, byName["getPet"].OutputSchema)
	}
}

func TestCalls(t *testing.T) {
	api := petAPI(t)
	c := load(t, Source{Document: api.URL + "/openapi.json", Headers: map[string]string{"X-Api-Key": "k"}, Timeout: 500 * time.Millisecond})

	r := callTool(t, c, "getPet", `{"petId":"1"}`)
	if r.IsError != nil || string(r.StructuredContent) != `{"id":"1","name":"Rex"}` {
		t.Errorf("getPet: %+v %s", r, r.StructuredContent)
	}
	r = callTool(t, c, "listPets", `{"limit":5,"tag":["a","b"],"X-Trace":"t1"}`)
	if !strings.Contains(string(r.StructuredContent), `"result":[`) || !strings.Contains(text(r), `a+b|5|t1|k`) {
		t.Errorf("listPets: %s / %s", r.StructuredContent, text(r))
	}
	r = callTool(t, c, "createPet", `{"body":{"name":"Tom"}}`)
	if !strings.Contains(string(r.StructuredContent), `"name":"Tom"`) {
		t.Errorf("createPet: %s", text(r))
	}
	r = callTool(t, c, "getPet", `{"petId":"9"}`)
	if r.IsError == nil || !strings.Contains(text(r), "404") || !strings.Contains(text(r), "no pet 9") {
		t.Errorf("a 404: %s", text(r))
	}
	r = callTool(t, c, "deletePet", `{"petId":"1"}`)
	if r.IsError != nil || !strings.Contains(text(r), "204") {
		t.Errorf("deletePet: %s", text(r))
	}
	r = callTool(t, c, "get_slow", `{}`)
	if r.IsError == nil || !strings.Contains(text(r), "did not answer within 500ms") || !strings.Contains(text(r), strings.TrimPrefix(api.URL, "http://")) {
		t.Errorf("slow: %s", text(r))
	}
	r = callTool(t, c, "goAway", `{}`)
	if r.IsError == nil || !strings.Contains(text(r), "another host") || strings.Contains(text(r), "leaked") {
		t.Errorf("a redirect elsewhere: %s", text(r))
	}
	// Arguments the schema refuses never reach the API.
	r = callTool(t, c, "listPets", `{"limit":500}`)
	if r.IsError == nil || !strings.Contains(text(r), "invalid arguments") {
		t.Errorf("limit 500: %s", text(r))
	}
}

func TestNetworkFailureNamesTheHost(t *testing.T) {
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	addr := ln.Addr().String()
	ln.Close()
	dir := t.TempDir()
	doc := filepath.Join(dir, "pets.json")
	os.WriteFile(doc, []byte(petDoc), 0o600)
	c := load(t, Source{Document: doc, BaseURL: "http://" + addr + "/api"})
	r := callTool(t, c, "getPet", `{"petId":"1"}`)
	if r.IsError == nil || !strings.Contains(text(r), addr) {
		t.Errorf("%s", text(r))
	}
}

func TestMalformedDocuments(t *testing.T) {
	dir := t.TempDir()
	for name, body := range map[string]string{
		"broken.json":  `{"openapi": "3.1.0", "paths": `,
		"swagger.json": `{"swagger": "2.0", "info": {"title": "x", "version": "1"}, "paths": {}}`,
	} {
		p := filepath.Join(dir, name)
		os.WriteFile(p, []byte(body), 0o600)
		_, err := Load(context.Background(), Source{Document: p, BaseURL: "http://x"}, nil)
		if err == nil || !strings.Contains(err.Error(), p) {
			t.Errorf("%s: %v", name, err)
		}
	}
	if _, err := Load(context.Background(), Source{Document: filepath.Join(dir, "missing.json")}, nil); err == nil {
		t.Error("a missing file loaded")
	}
	noServer := filepath.Join(dir, "noserver.json")
	os.WriteFile(noServer, []byte(`{"openapi":"3.0.3","info":{"title":"x","version":"1"},"paths":{}}`), 0o600)
	if _, err := Load(context.Background(), Source{Document: noServer}, nil); err == nil || !strings.Contains(err.Error(), "baseUrl") {
		t.Errorf("no server: %v", err)
	}
}
