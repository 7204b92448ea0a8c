package server

// A legacy client's notifications/roots/list_changed says its roots
// changed: whoever answered roots/list from it should ask again. The edge
// tells the namespace which client session it was ([Client]); the calls
// that session made carry the same id, so a namespace can tell the
// upstreams they used.

// RootsWatcher is implemented by a namespace that passes a client's
// roots change on (the gateway, to its legacy upstreams). RootsChanged
// must not block: the transport's reader calls it.
type RootsWatcher interface {
	RootsChanged(client uint64)
}
