package streamhttp

// OpenStreams is how many stream slots are taken now.
func (h *Handler) OpenStreams() int { return len(h.streams) }

// OpenSessions is how many legacy sessions are held now.
func (h *Handler) OpenSessions() int { return h.sessions.len() }

// ReadLimited is readLimited, for TestReadBodyGrowth.
var ReadLimited = readLimited
