package server

import "context"

// Subscriber is implemented by a namespace whose resources clients may
// follow (the gateway: by following its upstreams'). The edge calls
// Subscribe once for each client that starts following a URI (a legacy
// session's resources/subscribe, a 2026-07-28 listen's
// resourceSubscriptions) and Unsubscribe once when that client stops or
// goes away, so a namespace may count clients per URI and follow a URI
// at its source only while one does.
//
// Updates delivers the URIs (as clients name them) whose resource
// changed; the edge sends notifications/resources/updated to the clients
// that follow each one. Each caller of Updates gets every update (one
// namespace may be served by several edges: stdio and HTTP, tests).
//
// The edge declares resources.subscribe only when Capabilities does.
type Subscriber interface {
	// Subscribe starts following uri for one more client; an error (a
	// URI that cannot be followed, a source that refused) leaves nothing
	// to unsubscribe.
	Subscribe(ctx context.Context, uri string) error
	// Unsubscribe ends one client's Subscribe of uri.
	Unsubscribe(uri string)
	// Updates delivers updated URIs until ctx ends; the channel is not
	// closed.
	Updates(ctx context.Context) <-chan string
}
