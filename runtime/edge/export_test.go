package edge

// FollowedTaskIDs is how many task ids listens follow now (listentasks.go).
func (e *Edge) FollowedTaskIDs() int {
	tl := &e.tasks.listens
	tl.mu.Lock()
	defer tl.mu.Unlock()
	return len(tl.m)
}
