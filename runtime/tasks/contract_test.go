package tasks_test

import (
	"testing"

	"github.com/mcpx-dev/mcpx/runtime/tasks"
	"github.com/mcpx-dev/mcpx/runtime/tasks/storetest"
)

func TestMemoryContract(t *testing.T) {
	storetest.Run(t, func(t *testing.T, max int, c *storetest.Clock) tasks.Store {
		return &tasks.Memory{Max: max, Now: c.Now}
	})
}
