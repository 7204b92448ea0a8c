package server

import "context"

// Elsewhere is a namespace's answer to a request that another replica
// must serve: the retry of a call parked there (the gateway's bridge 2).
// The edge relays the request to that replica (its Peers) and answers
// with what it says.
type Elsewhere struct {
	Replica string
}

func (e *Elsewhere) Error() string {
	return "the request belongs to replica " + e.Replica
}

// Refresher is a namespace that can be told one of its lists changed on
// another replica: it reads the list again from its sources, quietly (the
// edge tells its own clients), before the edge tells its clients.
type Refresher interface {
	Refresh(ctx context.Context, method string) error
}
