package activity

import (
	"testing"

	"tuttid/agent"
	"tuttid/logtest"
)

// TestWorkspaceWideEventReachesSessionSubscriptions: an event of no
// session (ACCOUNT_UPDATED) reaches every subscription of its workspace,
// live and replayed, those of one session included.
func TestWorkspaceWideEventReachesSessionSubscriptions(t *testing.T) {
	b := New(Options{Logger: logtest.Discard()})
	defer b.Close()
	all := subscribe(t, t.Context(), b, Filter{WorkspaceID: "w"})
	one := subscribe(t, t.Context(), b, Filter{WorkspaceID: "w", AgentSessionID: "s"})
	b.Publish(t.Context(), Event{Kind: MessageAdded, WorkspaceID: "w", AgentSessionID: "other"})
	acct := &agent.Account{SignedIn: true}
	b.Publish(t.Context(), Event{Kind: AccountUpdated, WorkspaceID: "w", Account: acct})
	if got := recv(t, one, 1); got[0].Kind != AccountUpdated || got[0].Account != acct {
		t.Errorf("session subscription got %+v, want ACCOUNT_UPDATED", got)
	}
	if got := recv(t, all, 2); got[1].Kind != AccountUpdated {
		t.Errorf("workspace subscription got %+v", got)
	}
	from := int64(0)
	replay := subscribe(t, t.Context(), b, Filter{WorkspaceID: "w", AgentSessionID: "s", AfterSeq: &from})
	if got := recv(t, replay, 1); got[0].Kind != AccountUpdated {
		t.Errorf("replay got %+v, want ACCOUNT_UPDATED only", got)
	}
}
