package auth

import (
	"encoding/json"
	"net/http"
)

// WellKnown is the path of the Protected Resource Metadata document
// (RFC 9728 section 3); the resource's own path follows it.
const WellKnown = "/.well-known/oauth-protected-resource"

// ResourceMetadata is the Protected Resource Metadata document (RFC 9728
// section 2): what a client needs to find where to get a token for mcpx.
type ResourceMetadata struct {
	Resource               string   `json:"resource"`
	AuthorizationServers   []string `json:"authorization_servers,omitempty"`
	ScopesSupported        []string `json:"scopes_supported,omitempty"`
	BearerMethodsSupported []string `json:"bearer_methods_supported"`
	ResourceName           string   `json:"resource_name,omitempty"`
}

// Metadata serves the Protected Resource Metadata document, at WellKnown
// and at WellKnown followed by the resource's path; it is public (a client
// reads it before it has a token).
func (a *Authenticator) Metadata() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "use GET", http.StatusMethodNotAllowed)
			return
		}
		servers := a.cfg.AuthorizationServers
		if len(servers) == 0 && a.cfg.JWT != nil {
			servers = []string{a.cfg.JWT.Issuer}
		}
		doc := ResourceMetadata{
			Resource:               a.Resource(r),
			AuthorizationServers:   servers,
			ScopesSupported:        a.cfg.Scopes,
			BearerMethodsSupported: []string{"header"},
			ResourceName:           "mcpx",
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "max-age=300")
		_ = json.NewEncoder(w).Encode(doc)
	})
}
