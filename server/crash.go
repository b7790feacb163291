package server

import (
	"tuttid/fork"
	"tuttid/session"
)

// crashAt returns the fork service's crash hook for point, or nil. At the
// point the process kills itself with SIGKILL: no deferred function, no
// flush, exactly what a kill -9 from outside leaves.
func crashAt(point string) func(string) {
	if point == "" {
		return nil
	}
	return func(p string) {
		if p == point {
			killSelf()
		}
	}
}

// crashOnSent fires the crash points that follow a request written to
// Codex: fork.CrashProviderSent after thread/fork (tuttid dies while Codex
// is forking), session.CrashTurnStartSent after turn/start (while Codex
// starts the turn).
func crashOnSent(point string) func(string) {
	var method string
	switch point {
	case fork.CrashProviderSent:
		method = "thread/fork"
	case session.CrashTurnStartSent:
		method = "turn/start"
	default:
		return nil
	}
	hook := crashAt(point)
	return func(m string) {
		if m == method {
			hook(point)
		}
	}
}
