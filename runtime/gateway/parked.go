package gateway

import (
	"errors"
	"sync"
	"time"
)

// ParkStatus is where a parked call stands.
type ParkStatus uint8

const (
	// Parked: a question of the upstream's waits for the client's retry.
	Parked ParkStatus = iota + 1
	// Running: the retry delivered the answer; the upstream works on.
	Running
	// Expired: no retry came before the deadline; the call was cancelled.
	// Kept a while so that a late retry is told so.
	Expired
)

// ParkedCall is the record of a legacy upstream's call that asked a
// 2026-07-28 client something (bridge 2): plain data, so that a store
// shared by replicas could hold it. The call itself (the goroutine waiting
// for the upstream, the upstream's question waiting for its answer) lives
// in the process that made it.
type ParkedCall struct {
	ID        string // random; the sealed requestState names it
	Namespace string
	Method    string
	// Round is the round whose requestState may resume the call; each
	// delivered answer moves it on, so a state resumes at most once.
	Round int
	// Key is the inputRequests key of the question waiting, Question its
	// method.
	Key, Question string
	Status        ParkStatus
	// Deadline is when a Parked call expires; for an Expired one, when
	// it did.
	Deadline time.Time
}

// ParkedCalls holds the records of the parked calls. Each method is
// atomic with respect to the others.
type ParkedCalls interface {
	// Park stores rec, a new call or one between rounds; a new one past
	// the limit is ErrParkFull.
	Park(rec ParkedCall) error
	// Claim moves call id from Parked at round to Running, at most once
	// per round, returning the record as it was before; the error says
	// why not (ErrNoParked, ErrParkExpired, ErrParkUsed).
	Claim(id string, round int) (ParkedCall, error)
	// Expire marks call id Expired at now.
	Expire(id string, now time.Time)
	// Forget drops call id.
	Forget(id string)
}

var (
	ErrParkFull    = errors.New("too many calls are parked")
	ErrNoParked    = errors.New("no such parked call")
	ErrParkExpired = errors.New("the parked call expired")
	ErrParkUsed    = errors.New("the parked call's round was already resumed")
)

// memoryParked is ParkedCalls in this process's memory: limit records
// that are not Expired; expired ones are dropped keep after expiring.
type memoryParked struct {
	limit int
	keep  time.Duration

	mu   sync.Mutex
	recs map[string]ParkedCall
	live int // records not Expired
}

// NewMemoryParked returns in-memory ParkedCalls holding at most limit
// calls that have not expired, and telling a late retry a call expired for
// keep after it did.
func NewMemoryParked(limit int, keep time.Duration) ParkedCalls {
	return &memoryParked{limit: limit, keep: keep, recs: map[string]ParkedCall{}}
}

func (p *memoryParked) Park(rec ParkedCall) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	old, ok := p.recs[rec.ID]
	if !ok || old.Status == Expired {
		p.prune(time.Now())
		if p.live >= p.limit {
			return ErrParkFull
		}
		p.live++
	}
	p.recs[rec.ID] = rec
	return nil
}

// prune drops the expired records kept long enough; p.mu is held.
func (p *memoryParked) prune(now time.Time) {
	for id, r := range p.recs {
		if r.Status == Expired && now.Sub(r.Deadline) > p.keep {
			delete(p.recs, id)
		}
	}
}

func (p *memoryParked) Claim(id string, round int) (ParkedCall, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	r, ok := p.recs[id]
	switch {
	case !ok:
		return r, ErrNoParked
	case r.Status == Expired:
		return r, ErrParkExpired
	case r.Status != Parked || r.Round != round:
		return r, ErrParkUsed
	}
	n := r
	n.Status = Running
	p.recs[id] = n
	return r, nil
}

func (p *memoryParked) Expire(id string, now time.Time) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if r, ok := p.recs[id]; ok && r.Status != Expired {
		r.Status, r.Deadline = Expired, now
		p.recs[id] = r
		p.live--
	}
}

func (p *memoryParked) Forget(id string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if r, ok := p.recs[id]; ok {
		if r.Status != Expired {
			p.live--
		}
		delete(p.recs, id)
	}
}
