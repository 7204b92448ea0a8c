package config

import (
	"encoding/hex"
	"fmt"
	"strings"

	"github.com/mcpx-dev/mcpx/runtime/auth"
)

// rawAuth is "mcpx.auth" as written (the schema has checked its shape).
type rawAuth struct {
	Resource             string   `json:"resource"`
	AuthorizationServers []string `json:"authorizationServers"`
	Scopes               []string `json:"scopes"`
	Tokens               []struct {
		Name   string   `json:"name"`
		SHA256 string   `json:"sha256"`
		Token  string   `json:"token"`
		Scopes []string `json:"scopes"`
	} `json:"tokens"`
	JWT *struct {
		Issuer      string `json:"issuer"`
		JWKSURL     string `json:"jwksUrl"`
		Audience    string `json:"audience"`
		GroupsClaim string `json:"groupsClaim"`
	} `json:"jwt"`
}

// rawRule is one entry of "mcpx.access".
type rawRule struct {
	Principals []string `json:"principals"`
	Namespaces []string `json:"namespaces"`
	Tools      []string `json:"tools"`
	Prompts    []string `json:"prompts"`
	Resources  []string `json:"resources"`
}

// minTokenLen keeps guessable static tokens out: 16 characters of a
// random token are ~96 bits.
const minTokenLen = 16

// maxList bounds the tokens and the access rules of a file.
const maxList = 1024

func (p *parser) auth(r *rawAuth) *auth.Config {
	if r == nil {
		return nil
	}
	c := &auth.Config{Resource: r.Resource, AuthorizationServers: r.AuthorizationServers, Scopes: r.Scopes}
	if len(r.Tokens) > maxList {
		p.add("/mcpx/auth/tokens", "has %d tokens; at most %d are allowed", len(r.Tokens), maxList)
		return nil
	}
	if len(r.Tokens) == 0 && r.JWT == nil {
		p.add("/mcpx/auth", "accepts no one: give \"tokens\", \"jwt\", or both")
	}
	for i, t := range r.Tokens {
		path := fmt.Sprintf("/mcpx/auth/tokens/%d", i)
		st := auth.StaticToken{Name: t.Name, Scopes: t.Scopes}
		if (t.SHA256 == "") == (t.Token == "") {
			p.add(path, "give exactly one of \"sha256\" and \"token\"")
			continue
		}
		if t.SHA256 != "" {
			b, _ := hex.DecodeString(t.SHA256) // the schema checked it is 64 hex digits
			copy(st.SHA256[:], b)
		} else {
			tok := p.expand(path+"/token", "", t.Token)
			if len(tok) < minTokenLen {
				// The token itself is not in the message: it may be a secret.
				p.add(path+"/token", "is %d characters; a token must have at least %d (use a random one, such as `openssl rand -hex 32` prints)", len(tok), minTokenLen)
			}
			st.SHA256 = auth.TokenHash(tok)
		}
		for j, u := range c.Tokens {
			if u.Name == st.Name {
				p.add(path+"/name", "%q is also the name of token %d", st.Name, j)
			}
		}
		c.Tokens = append(c.Tokens, st)
	}
	if j := r.JWT; j != nil {
		c.JWT = &auth.JWTConfig{Issuer: j.Issuer, JWKSURL: j.JWKSURL, Audience: j.Audience, GroupsClaim: j.GroupsClaim}
	}
	return c
}

// access turns "mcpx.access" into a policy, a namespace granted whole
// becoming the patterns of its names: its prefix for tools and prompts,
// mcpx://<name>/ for resources.
func (p *parser) access(rules []rawRule, hasAuth bool, servers []Server) *auth.Policy {
	if rules == nil {
		return nil
	}
	if len(rules) > maxList {
		p.add("/mcpx/access", "has %d rules; at most %d are allowed", len(rules), maxList)
		return nil
	}
	if !hasAuth {
		p.add("/mcpx/access", "applies to authenticated principals; set mcpx.auth too")
	}
	byName := map[string]*Server{}
	for i := range servers {
		byName[servers[i].Name] = &servers[i]
	}
	pol := &auth.Policy{}
	for i, r := range rules {
		path := fmt.Sprintf("/mcpx/access/%d", i)
		rule := auth.Rule{Principals: r.Principals, Tools: r.Tools, Prompts: r.Prompts, Resources: r.Resources}
		for j, ns := range r.Namespaces {
			s := byName[ns]
			switch {
			case s == nil:
				p.add(fmt.Sprintf("%s/namespaces/%d", path, j), "%q is not a server of this file", ns)
				continue
			case s.Root || s.Prefix == "":
				p.add(fmt.Sprintf("%s/namespaces/%d", path, j), "%q has no prefix, so its names cannot be told from others'; list its tools in \"tools\"", ns)
				continue
			}
			rule.Tools = append(rule.Tools, s.Prefix+"*")
			rule.Prompts = append(rule.Prompts, s.Prefix+"*")
			rule.Resources = append(rule.Resources, "mcpx://"+ns+"/*")
		}
		for _, list := range [][]string{r.Tools, r.Prompts, r.Resources} {
			for _, pat := range list {
				if !auth.ValidPattern(pat) {
					p.add(path, "%q is not a valid pattern", pat)
				}
			}
		}
		if len(r.Principals) == 0 {
			p.add(path+"/principals", "names no one; give at least one principal")
		}
		for j, who := range r.Principals {
			if !validPrincipal(who) {
				p.add(fmt.Sprintf("%s/principals/%d", path, j), "%q: write sub:<subject>, token:<name>, group:<name> or *", who)
			}
		}
		pol.Rules = append(pol.Rules, rule)
	}
	return pol
}

func validPrincipal(s string) bool {
	if s == "*" {
		return true
	}
	for _, k := range []string{"sub:", "token:", "group:"} {
		if len(s) > len(k) && s[:len(k)] == k {
			return true
		}
	}
	return false
}

// OAuth is a server's "mcpx.oauth": the client credentials grant mcpx
// uses to get its own token for the server.
type OAuth struct {
	TokenURL     string   `json:"tokenUrl"`
	ClientID     string   `json:"clientId"`
	ClientSecret string   `json:"clientSecret"`
	Scopes       []string `json:"scopes"`
	Resource     string   `json:"resource"`
}

func (p *parser) oauth(path, server string, r *raw) *OAuth {
	o := r.MCPX.OAuth
	if o == nil {
		return nil
	}
	if r.URL == "" {
		p.add(path, "only a remote server (one with \"url\") takes this")
		return nil
	}
	if _, ok := r.Headers["Authorization"]; ok {
		p.add(path, "the server's headers set Authorization too; use one of them")
	}
	out := &OAuth{
		TokenURL:     p.expand(path+"/tokenUrl", server, o.TokenURL),
		ClientID:     p.expand(path+"/clientId", server, o.ClientID),
		ClientSecret: p.expand(path+"/clientSecret", server, o.ClientSecret),
		Scopes:       o.Scopes,
		Resource:     p.expand(path+"/resource", server, o.Resource),
	}
	if !strings.HasPrefix(out.TokenURL, "https://") && !strings.HasPrefix(out.TokenURL, "http://") {
		p.add(path+"/tokenUrl", "must be an http:// or https:// URL")
	}
	return out
}
