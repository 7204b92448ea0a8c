package tasks

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// Memory is a [Store] in this process's memory, bounded by count: at most
// Max live tasks, each kept for its TTL. A full store first drops the
// tasks that expired, then refuses (ErrFull); it never evicts a live one.
type Memory struct {
	// Max is how many tasks it holds at most; 0 means DefaultMax.
	Max int
	// Now is the clock; nil means time.Now.
	Now func() time.Time

	mu    sync.Mutex
	byID  map[string]*Record
	order []string // ids by creation, for List; pruned lazily
}

// DefaultMax is Memory's bound when Max is 0.
const DefaultMax = 1024

var _ Store = (*Memory)(nil)

func (m *Memory) now() time.Time {
	if m.Now != nil {
		return m.Now()
	}
	return time.Now()
}

func (m *Memory) max() int {
	if m.Max > 0 {
		return m.Max
	}
	return DefaultMax
}

// Create implements [Store].
func (m *Memory) Create(_ context.Context, rec *Record) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.byID == nil {
		m.byID = map[string]*Record{}
	}
	if _, taken := m.byID[rec.ID]; taken {
		return ErrExists
	}
	if len(m.byID) >= m.max() {
		m.expireLocked(m.now())
		if len(m.byID) >= m.max() {
			return fmt.Errorf("%w: it holds %d tasks, the most it may (mcpx.maxTasks), and none has expired", ErrFull, len(m.byID))
		}
	}
	m.byID[rec.ID] = rec.clone()
	m.order = append(m.order, rec.ID)
	return nil
}

// Get implements [Store].
func (m *Memory) Get(_ context.Context, id string) (*Record, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	r, ok := m.byID[id]
	now := m.now()
	if !ok || r.Expired(now) {
		return nil, ErrNotFound
	}
	r.FailLapsed(now) // kept: the record is the store's own
	return r.clone(), nil
}

// Update implements [Store].
func (m *Memory) Update(_ context.Context, id string, fn func(*Record) error) (*Record, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	r, ok := m.byID[id]
	now := m.now()
	if !ok || r.Expired(now) {
		return nil, ErrNotFound
	}
	r.FailLapsed(now)
	c := r.clone()
	if err := fn(c); err != nil {
		return nil, err
	}
	c.ID = id // the id is the key; fn may not move the record
	m.byID[id] = c
	return c.clone(), nil
}

// List implements [Store]. The cursor is the id of the last task of the
// previous page.
func (m *Memory) List(_ context.Context, owner, cursor string, limit int) ([]*Record, string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.now()
	start := 0
	if cursor != "" {
		found := false
		for j, id := range m.order {
			if id == cursor {
				start, found = j+1, true
				break
			}
		}
		if !found {
			return nil, "", fmt.Errorf("invalid cursor %q: pass a nextCursor from a previous page", cursor)
		}
	}
	var out []*Record
	for j := start; j < len(m.order); j++ {
		r, ok := m.byID[m.order[j]]
		if !ok || r.Owner != owner || r.Expired(now) {
			continue
		}
		if limit > 0 && len(out) == limit {
			return out, out[len(out)-1].ID, nil
		}
		r.FailLapsed(now)
		out = append(out, r.clone())
	}
	return out, "", nil
}

// Expire implements [Store].
func (m *Memory) Expire(_ context.Context, now time.Time) ([]string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.expireLocked(now), nil
}

func (m *Memory) expireLocked(now time.Time) []string {
	var gone []string
	for id, r := range m.byID {
		if r.Expired(now) {
			delete(m.byID, id)
			gone = append(gone, id)
		}
	}
	if len(gone) > 0 {
		kept := m.order[:0]
		for _, id := range m.order {
			if _, ok := m.byID[id]; ok {
				kept = append(kept, id)
			}
		}
		m.order = kept
	}
	return gone
}

// Len is how many tasks the store holds, expired ones not yet removed
// included.
func (m *Memory) Len() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.byID)
}
