package fork

// Crash points of the saga, named for Config.Crash. The crash tests stop a
// real tuttid at each (TUTTID_CRASH_AT) and check what a restart finds.
const (
	// CrashBeforeProvider: the journal entry is stored, Codex not yet called.
	CrashBeforeProvider = "fork.before_provider"
	// CrashProviderSent: thread/fork was written to Codex, not yet answered
	// (fired by the runtime; see server.Config.CrashAt).
	CrashProviderSent = "fork.provider_sent"
	// CrashProviderAnswered: Codex answered and the child thread id is in
	// the journal; the child is not yet stored.
	CrashProviderAnswered = "fork.provider_answered"
	// CrashCommitted: the child, lineage and journal entry are committed;
	// nothing is published or answered yet.
	CrashCommitted = "fork.committed"
)

func (s *Service) crashPoint(point string) {
	if s.crash != nil {
		s.crash(point)
	}
}
