package server

// Remover is implemented by a namespace made of parts that can be taken
// away while it serves (the gateway's upstreams, on a config reload).
// OnRemove registers f, called with the part's name once it is gone and
// its lists no longer hold anything of it; the returned function
// unregisters f. The edge uses it to end the subscriptions/listen streams
// whose event source that part was.
type Remover interface {
	OnRemove(f func(name string)) (unregister func())
}
