package config

import (
	"strings"
	"testing"

	"github.com/mcpx-dev/mcpx/runtime/auth"
)

const twoServers = `"mcpServers": {"files": {"command": "x"}, "web": {"url": "http://h/mcp", "mcpx": {"prefix": "w_"}}}`

func TestAuthBlock(t *testing.T) {
	env := func(k string) (string, bool) {
		if k == "CI_TOKEN" {
			return "0123456789abcdef-ci", true
		}
		return "", false
	}
	sum := auth.TokenHash("another-token-0123")
	c, err := Parse("f.json", []byte(`{`+twoServers+`, "mcpx": {"auth": {
		"resource": "https://mcp.example.com/mcp", "scopes": ["mcp"],
		"tokens": [{"name": "ci", "token": "${CI_TOKEN}"}, {"name": "ops", "sha256": "`+hexOf(sum)+`", "scopes": ["mcp"]}],
		"jwt": {"issuer": "https://issuer.example"}},
		"access": [{"principals": ["group:dev", "token:ci"], "namespaces": ["files", "web"], "tools": ["x__*"]}]}}`), env)
	if err != nil {
		t.Fatal(err)
	}
	a := c.Auth
	if a == nil || a.Resource != "https://mcp.example.com/mcp" || len(a.Tokens) != 2 || a.JWT == nil || a.JWT.Issuer != "https://issuer.example" {
		t.Fatalf("auth %+v", a)
	}
	if a.Tokens[0].SHA256 != auth.TokenHash("0123456789abcdef-ci") || a.Tokens[1].SHA256 != sum {
		t.Error("token hashes")
	}
	r := c.Access.Rules[0]
	if strings.Join(r.Tools, " ") != "x__* files__* w_*" || strings.Join(r.Resources, " ") != "mcpx://files/* mcpx://web/*" {
		t.Errorf("rule %+v", r)
	}
}

func hexOf(b [32]byte) string {
	const digits = "0123456789abcdef"
	out := make([]byte, 64)
	for i, c := range b {
		out[2*i], out[2*i+1] = digits[c>>4], digits[c&15]
	}
	return string(out)
}

func TestAuthProblems(t *testing.T) {
	for _, c := range []struct{ mcpx, want string }{
		{`{"auth": {}}`, "/mcpx/auth: accepts no one"},
		{`{"auth": {"tokens": [{"name": "a", "token": "short"}]}}`, "at least 16"},
		{`{"auth": {"tokens": [{"name": "a"}]}}`, "exactly one of"},
		{`{"auth": {"tokens": [{"name": "a", "token": "${NOPE}"}]}}`, "environment variable NOPE is not set"},
		{`{"auth": {"tokens": [{"name": "a", "token": "0123456789abcdefg"}, {"name": "a", "token": "0123456789abcdefh"}]}}`, "also the name"},
		{`{"auth": {"tokens": [{"name": "a", "sha256": "xyz"}]}}`, "/mcpx/auth/tokens/0/sha256"},
		{`{"access": [{"principals": ["*"], "tools": ["*"]}]}`, "set mcpx.auth too"},
		{`{"auth": {"jwt": {"issuer": "https://i"}}, "access": [{"principals": ["alice"]}]}`, "write sub:<subject>"},
		{`{"auth": {"jwt": {"issuer": "https://i"}}, "access": [{"principals": ["*"], "namespaces": ["nope"]}]}`, "not a server"},
		{`{"auth": {"jwt": {"issuer": "https://i"}}, "access": [{"principals": ["*"], "tools": ["[a"]}]}`, "not a valid pattern"},
		{`{"auth": {"jwt": {"issuer": "https://i"}}, "access": [{"principals": []}]}`, "names no one"},
	} {
		_, err := Parse("f.json", []byte(`{`+twoServers+`, "mcpx": `+c.mcpx+`}`), func(string) (string, bool) { return "", false })
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.mcpx, err, c.want)
		}
		if err != nil && strings.Contains(err.Error(), "short") && strings.Contains(c.mcpx, "short") {
			t.Errorf("the token itself is in the message: %v", err)
		}
	}
}

func TestServerOAuth(t *testing.T) {
	env := func(k string) (string, bool) { return map[string]string{"SECRET": "s3"}[k], k == "SECRET" }
	c, err := Parse("f.json", []byte(`{"mcpServers": {"web": {"url": "https://h/mcp", "mcpx": {"oauth": {
		"tokenUrl": "https://as.example/token", "clientId": "mcpx", "clientSecret": "${SECRET}", "scopes": ["a"]}}}}}`), env)
	if err != nil {
		t.Fatal(err)
	}
	if o := c.Servers[0].OAuth; o == nil || o.ClientSecret != "s3" || o.TokenURL != "https://as.example/token" || o.Scopes[0] != "a" {
		t.Fatalf("%+v", c.Servers[0].OAuth)
	}
	for _, bad := range []struct{ server, want string }{
		{`{"command": "x", "mcpx": {"oauth": {"tokenUrl": "https://t", "clientId": "a", "clientSecret": "b"}}}`, "only a remote server"},
		{`{"url": "https://h", "headers": {"Authorization": "Bearer x"}, "mcpx": {"oauth": {"tokenUrl": "https://t", "clientId": "a", "clientSecret": "b"}}}`, "use one of them"},
		{`{"url": "https://h", "mcpx": {"oauth": {"tokenUrl": "https://t", "clientId": "a"}}}`, "clientSecret"},
	} {
		_, err := Parse("f.json", []byte(`{"mcpServers": {"web": `+bad.server+`}}`), env)
		if err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("%s: %v, want %q", bad.server, err, bad.want)
		}
	}
}

func TestStore(t *testing.T) {
	env := func(k string) (string, bool) { return map[string]string{"PW": "s3"}[k], k == "PW" }
	c, err := Parse("f.json", []byte(`{"mcpServers": {}, "mcpx": {"store": "redis://:${PW}@r:6379/0"}}`), env)
	if err != nil || c.Store != "redis://:s3@r:6379/0" {
		t.Fatalf("%q %v", c.Store, err)
	}
	if _, err := Parse("f.json", []byte(`{"mcpServers": {}, "mcpx": {"store": "postgres://x"}}`), env); err == nil || !strings.Contains(err.Error(), "redis://") {
		t.Errorf("a store that is not redis: %v", err)
	}
}
