package edge

import (
	"context"
	"time"

	"github.com/mcpx-dev/mcpx/runtime/tasks"
)

// Task status across replicas (issue 19). A task's call runs on one
// replica, and only that replica's Runner sees its changes; a 2026-07-28
// listen naming the task, or a legacy session's stream, may be on
// another. With Peers that are also TaskPeers, every change this
// replica's Runner makes is published, and the changes the others publish
// are delivered here as this replica's own: to the listens following the
// task (their owner rule was applied when they agreed to follow it) and
// to the task's legacy route, if the call runs here (a cancellation on
// another replica).
//
// A task failed because its lease lapsed changes no Runner: the replica
// running it is gone, and the first reader fails it in the store. So the
// listens following a task that has not ended are checked every third of
// the lease (lapseWatch): a task found ended is told to those that have
// not heard its end. Each listen hears a task's end once (notifyTask).

// TaskPeers carries task changes between replicas; an edge's Peers may
// implement it (package host's does).
type TaskPeers interface {
	// PublishTask tells the other replicas of a change of a task whose
	// call runs here; it must not wait.
	PublishTask(rec *tasks.Record)
	// PeerTasks are the changes the other replicas published.
	PeerTasks() <-chan *tasks.Record
}

func (e *Edge) taskPeers() TaskPeers {
	tp, _ := e.Peers.(TaskPeers)
	return tp
}

// watchPeerTasks delivers the other replicas' task changes until ctx
// ends. The runner's hook is set first, so that this replica's changes
// are published from the start.
func (e *Edge) watchPeerTasks(ctx context.Context) {
	tp := e.taskPeers()
	if tp == nil {
		return
	}
	e.taskSessions()
	ch := tp.PeerTasks()
	for {
		select {
		case <-ctx.Done():
			return
		case rec, ok := <-ch:
			if !ok {
				return
			}
			e.taskChanged(rec)
			e.listenTaskChanged(rec)
		}
	}
}

// publishTask passes a change of this replica's runner on to the others.
func (e *Edge) publishTask(rec *tasks.Record) {
	if tp := e.taskPeers(); tp != nil {
		tp.PublishTask(rec)
	}
}

// lapseEvery is how often the followed tasks are read for a lapsed lease:
// a third of it, within bounds.
func lapseEvery(lease time.Duration) time.Duration {
	return min(max(lease/3, 20*time.Millisecond), 10*time.Second)
}

// watchLapses starts the check of the followed tasks' leases, unless it
// runs or the runner has no lease (then nothing lapses). tl.mu is held.
func (e *Edge) watchLapses(tl *taskListens) {
	lease := e.runner().Lease
	if lease <= 0 || tl.watching {
		return
	}
	tl.watching = true
	go e.lapseWatch(tl, lapseEvery(lease))
}

// lapseWatch reads the tasks the listens here follow, every, until none
// is followed; a task found ended (its lease lapsed: the store fails it
// as it is read) is told to the listens that have not heard its end.
func (e *Edge) lapseWatch(tl *taskListens, every time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	for range t.C {
		tl.mu.Lock()
		if len(tl.m) == 0 {
			tl.watching = false
			tl.mu.Unlock()
			return
		}
		ids := make([]string, 0, len(tl.m))
		for id := range tl.m {
			ids = append(ids, id)
		}
		tl.mu.Unlock()
		for _, id := range ids {
			ctx, cancel := context.WithTimeout(context.Background(), every+time.Second)
			rec, err := e.runner().Store.Get(ctx, id) // the owner was checked when the listen agreed
			cancel()
			if err == nil && rec.Terminal() {
				e.listenTaskChanged(rec)
			}
		}
	}
}
