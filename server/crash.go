package server

import "tuttid/fork"

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

// crashOnSent fires fork.CrashProviderSent once thread/fork is written to
// Codex: tuttid dies while Codex is forking.
func crashOnSent(point string) func(string) {
	if point != fork.CrashProviderSent {
		return nil
	}
	hook := crashAt(point)
	return func(method string) {
		if method == "thread/fork" {
			hook(point)
		}
	}
}
