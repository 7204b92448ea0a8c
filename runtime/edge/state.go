package edge

import (
	"crypto/rand"
	"encoding/hex"

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
	// Key names the session to its tasks' owner records, on every
	// replica (a replica's own session numbers are not shared).
	Key string `json:"key,omitempty"`
	// The session's subscriptions are not here: which replica follows
	// each URI is the transport's to keep (Session.Following).
}

// State is what s negotiated and set.
func (s *Session) State() SessionState {
	s.mu.Lock()
	defer s.mu.Unlock()
	return SessionState{Revision: s.rev, Capabilities: s.caps, Client: s.client, LogLevel: s.logLevel, Key: s.ownerKeyLocked()}
}

// RestoreSession is a session as st describes it, on a replica that did
// not serve its initialize. Its subscriptions are not taken over: each
// is followed upstream by one replica, and its updates reach the
// session's stream from there (Edge.Follow takes one over).
func RestoreSession(st SessionState) *Session {
	return &Session{rev: st.Revision, caps: st.Capabilities, client: st.Client, logLevel: st.LogLevel, key: st.Key}
}

// ownerKey is the session's part of its tasks' owner (tasks.go): random,
// made on first use, and carried in the State, so that a copy of the
// session on another replica owns the same tasks.
func (s *Session) ownerKey() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.ownerKeyLocked()
}

func (s *Session) ownerKeyLocked() string {
	if s.key == "" {
		var b [16]byte
		rand.Read(b[:])
		s.key = hex.EncodeToString(b[:])
	}
	return s.key
}

// Update takes over what another replica set on the session since it was
// restored here: its log level.
func (s *Session) Update(st SessionState) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.logLevel = st.LogLevel
}
