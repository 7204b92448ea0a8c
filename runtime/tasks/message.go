package tasks

import (
	"context"

	"github.com/mcpx-dev/mcpx/generated/mcp"
)

// Describe sets the statusMessage of a working task (the tasks extension's
// Task: "Progress descriptions for \"working\""), as what the call behind
// it last reported; a task in any other status, or with that message
// already, is left as it is. Those who hear changes (OnChange) hear it.
func (r *Runner) Describe(ctx context.Context, id, message string) {
	r.init()
	rec, err := r.Store.Update(ctx, id, func(rec *Record) error {
		if rec.Status != mcp.TaskStatusWorking || rec.StatusMessage == message {
			return ErrTerminal // nothing to change
		}
		rec.StatusMessage, rec.LastUpdatedAt = message, r.now().UTC()
		return nil
	})
	if err == nil {
		r.notify(rec)
	}
}
