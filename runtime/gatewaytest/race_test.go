//go:build race

package gatewaytest

// raceEnabled: the race detector is on (it drops sync.Pool entries at
// random and adds its own allocations, so memory figures mean little).
const raceEnabled = true
