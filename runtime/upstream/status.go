package upstream

import (
	"sync/atomic"
	"time"
)

// The states an upstream is in, as [Client.Status] reports them.
const (
	StateIdle       = "idle"        // not started yet (a lazy upstream no client has needed)
	StateStarting   = "starting"    // connecting: the process starting, the handshake
	StateUp         = "up"          // connected and negotiated
	StateBackingOff = "backing_off" // failed; the next start waits for the backoff
	StateDown       = "down"        // failed, backoff over: the next call starts it again; or closed
)

// States lists every state, for a metric that names each.
var States = []string{StateIdle, StateStarting, StateUp, StateBackingOff, StateDown}

// Status is an upstream's state as of now.
type Status struct {
	State string
	// Reason is why it is not up (the last failure), "" when up.
	Reason string
	// Restarts counts the starts after the first: after a failure or the
	// connection's end.
	Restarts uint64
}

// status is what Status reads, kept apart from Client.mu, which ensure
// holds while connecting: reading it never waits on an upstream.
type status struct {
	state    atomic.Int32 // an index in States
	retryAt  atomic.Int64 // UnixNano the backoff ends, while failed
	reason   atomic.Pointer[string]
	restarts atomic.Uint64
}

const (
	stIdle int32 = iota
	stStarting
	stUp
	stFailed // backing off or down, by retryAt
	stClosed
)

func (s *status) set(st int32, reason string, retryAt time.Time) {
	if reason != "" || st == stUp {
		s.reason.Store(&reason)
	}
	if !retryAt.IsZero() {
		s.retryAt.Store(retryAt.UnixNano())
	}
	s.state.Store(st)
}

// Status reports the upstream's state; it takes no lock.
func (c *Client) Status() Status {
	st := Status{Restarts: c.status.restarts.Load()}
	if r := c.status.reason.Load(); r != nil {
		st.Reason = *r
	}
	switch c.status.state.Load() {
	case stIdle:
		st.State, st.Reason = StateIdle, "not started yet: it starts when a client first needs it"
	case stStarting:
		st.State = StateStarting
	case stUp:
		st.State, st.Reason = StateUp, ""
	case stFailed:
		st.State = StateDown
		if time.Now().UnixNano() < c.status.retryAt.Load() {
			st.State = StateBackingOff
		}
	case stClosed:
		st.State, st.Reason = StateDown, "closed"
	}
	return st
}

// Revision is the protocol revision the upstream speaks, "" before it
// answered a handshake; it takes no lock.
func (c *Client) Revision() string {
	if d := c.dialect.Load(); d != nil {
		return d.RevisionLabel()
	}
	return ""
}

// Kind is how mcpx reaches the upstream: stdio, http or sse.
func (c *Client) Kind() string {
	switch {
	case c.spec.Command != "":
		return "stdio"
	case c.spec.SSE:
		return "sse"
	}
	return "http"
}
