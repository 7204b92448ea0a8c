// Package cluster is what mcpx replicas behind one load balancer share
// besides the task store: a bus (events published to every replica, and
// requests sent to one replica, answered by it) and records kept with a
// time to live (the legacy sessions). Each has an in-memory
// implementation, the default (one replica, or several in one process for
// tests: [Hub]), and one on Redis ([NewRedis]), chosen by the same
// --store URL as the task store.
//
// The bus is for what is worth losing rather than waiting for: a replica
// that is down, slow or not yet subscribed misses an event (a list
// change, a notification for a stream), as a client on a broken
// connection would. A request to a replica that is gone fails at once
// with [ErrGone] (nobody was listening), or after its timeout when the
// replica went away while answering.
package cluster

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"time"
)

// Event is one message published on a topic.
type Event struct {
	From string // the publishing replica's id
	Data []byte
}

// Handler answers a request sent to this replica by replica from.
type Handler func(ctx context.Context, from string, data []byte) ([]byte, error)

// Bus connects this replica to the others.
type Bus interface {
	// ID is this replica's id, unique among the replicas.
	ID() string
	// Publish sends data to every replica subscribed to topic, this one
	// included (a subscriber tells its own by Event.From).
	Publish(ctx context.Context, topic string, data []byte) error
	// Subscribe delivers topic's events until cancel. The channel is
	// buffered; an event that finds it full is dropped (a slow reader
	// holds up no one).
	Subscribe(topic string) (events <-chan Event, cancel func())
	// Handle makes h answer the requests named name sent to this replica.
	Handle(name string, h Handler)
	// Request sends data to replica's handler for name and waits for its
	// answer, until ctx ends or the bus's timeout passes. ctx ending ends
	// the handler's ctx too (over Redis, by a cancel sent after the
	// request). A replica that is not there is ErrGone at once; a
	// handler's error is a *RemoteError.
	Request(ctx context.Context, replica, name string, data []byte) ([]byte, error)
	// Close leaves the bus.
	Close() error
}

var (
	// ErrGone: the replica a request was for is not on the bus (it
	// stopped, or never was), or did not answer in time.
	ErrGone = errors.New("the replica is gone")
	// ErrUnavailable: the bus (Redis) cannot be reached now.
	ErrUnavailable = errors.New("the cluster bus is unavailable")
	// ErrNotFound: no record under the key (records.go).
	ErrNotFound = errors.New("no such record")
)

// RemoteError is a request's handler's error, as the other replica said it.
type RemoteError struct {
	Replica, Msg string
}

func (e *RemoteError) Error() string { return "replica " + e.Replica + ": " + e.Msg }

// DefaultTimeout bounds a request when Options.Timeout is 0.
const DefaultTimeout = 2 * time.Minute

// subBuffer is how many events wait for a slow subscriber.
const subBuffer = 256

// NewID is a fresh random replica id.
func NewID() string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

func gone(replica string) error {
	return fmt.Errorf("%w: replica %s does not answer", ErrGone, replica)
}

func timeoutOf(d time.Duration) time.Duration {
	if d > 0 {
		return d
	}
	return DefaultTimeout
}
