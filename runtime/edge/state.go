package edge

import (
	"slices"

	"github.com/mcpx-dev/mcpx/generated/mcp"
)

// SessionState is what a legacy session negotiated and set since, as
// plain data: what a replica that did not see the initialize needs to
// serve the session's plain requests (the transport keeps it in a store
// shared by replicas).
type SessionState struct {
	Revision     mcp.Revision           `json:"rev"`
	Capabilities mcp.ClientCapabilities `json:"caps"`
	Client       mcp.Implementation     `json:"client"`
	LogLevel     mcp.LoggingLevel       `json:"logLevel,omitempty"`
	// Subscriptions are the URIs the session follows (resources/subscribe)
	// on the replica that took them; see RestoreSession.
	Subscriptions []string `json:"subs,omitempty"`
}

// State is what s negotiated and set.
func (s *Session) State() SessionState {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := SessionState{Revision: s.rev, Capabilities: s.caps, Client: s.client, LogLevel: s.logLevel}
	for u := range s.subs {
		st.Subscriptions = append(st.Subscriptions, u)
	}
	slices.Sort(st.Subscriptions)
	return st
}

// RestoreSession is a session as st describes it, on a replica that did
// not serve its initialize. Its subscriptions are not taken over: each
// is followed upstream by the replica that took it, and its updates reach
// the session's stream from there.
func RestoreSession(st SessionState) *Session {
	return &Session{rev: st.Revision, caps: st.Capabilities, client: st.Client, logLevel: st.LogLevel}
}

// Update takes over what another replica set on the session since it was
// restored here: its log level.
func (s *Session) Update(st SessionState) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.logLevel = st.LogLevel
}
