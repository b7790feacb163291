package fork_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"

	"tuttid/activity"
	"tuttid/agent"
	"tuttid/agent/agenttest"
	"tuttid/apperr"
	"tuttid/ent"
	"tuttid/fork"
)

func TestForkProviderFailureMapsCodeAndStoresNothing(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name       string
		lastTurnID string
		script     agenttest.ForkAnswer
		want       apperr.Code
	}{
		{"provider failed", "", agenttest.ForkAnswer{Err: fmt.Errorf("thread/fork: %w", agent.ErrProviderFailed)}, apperr.ForkProviderFailed},
		{"provider error reply", "", agenttest.ForkAnswer{Err: fmt.Errorf("fork: %w", &agent.ProviderError{Method: "thread/fork", Code: -32000, Message: "boom"})}, apperr.ForkProviderFailed},
		{"runtime unavailable", "", agenttest.ForkAnswer{Err: fmt.Errorf("codex exited: %w", agent.ErrRuntimeUnavailable)}, apperr.RuntimeUnavailable},
		{"provider turn not found", "t1", agenttest.ForkAnswer{Err: &agent.ProviderError{Method: "thread/fork", Message: "no such turn", Kind: agent.ErrTurnNotFound}}, apperr.ForkTurnNotFound},
		{"provider turn in progress", "t2", agenttest.ForkAnswer{Err: &agent.ProviderError{Method: "thread/fork", Message: "turn running", Kind: agent.ErrTurnInProgress}}, apperr.ForkTurnInProgress},
		{"provider unsupported", "", agenttest.ForkAnswer{Err: fmt.Errorf("x: %w", agent.ErrUnsupportedProvider)}, apperr.ForkUnsupportedProvider},
		{"untyped error", "", agenttest.ForkAnswer{Err: errors.New("something odd")}, apperr.ForkProviderFailed},
		{"deadline not marked lost (the request never went out)", "", agenttest.ForkAnswer{Err: fmt.Errorf("codex app-server did not answer within 1m: %w", context.DeadlineExceeded)}, apperr.RuntimeUnavailable},
		{"invalid settings", "", agenttest.ForkAnswer{Err: fmt.Errorf("thread/fork: %w", agent.ErrInvalidSettings)}, apperr.InvalidInput},
		{"success without a thread id", "", agenttest.ForkAnswer{Result: agent.RuntimeForkResult{History: agent.SliceHistory(nil, 0)}}, apperr.ForkProviderFailed},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t)
			e.st.Session(defaultParent())
			before := e.counts()
			e.rt.ScriptForks(c.script)
			in := input("req-fail")
			in.LastTurnID = c.lastTurnID
			e.forkErr(in, c.want)
			if n := e.rt.ForkCalls(); n != 1 {
				t.Errorf("provider fork calls = %d, want 1", n)
			}
			if after := e.counts(); after != before {
				t.Errorf("rows changed: before %+v, after %+v", before, after)
			}
			if evs := e.pub.Events(); len(evs) != 0 {
				t.Errorf("published %d events on a failure", len(evs))
			}
		})
	}
}

func TestForkRequestIDIsReusableAfterProviderFailure(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.st.Session(defaultParent())
	e.rt.ScriptForks(agenttest.ForkAnswer{Err: fmt.Errorf("%w", agent.ErrProviderFailed)})
	e.forkErr(input("req-retry"), apperr.ForkProviderFailed)
	res := e.mustFork(input("req-retry"))
	if res.Replayed {
		t.Errorf("a retry after a failure was reported as a replay")
	}
	if n := e.rt.ForkCalls(); n != 2 {
		t.Errorf("provider fork calls = %d, want 2", n)
	}
}

func TestForkPersistenceFailureRollsBackAndLogsOrphan(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name    string
		history bool // provider turns, or the parent-cache fallback
	}{
		{"provider turns", true},
		{"parent cache fallback", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t)
			e.st.Session(defaultParent())
			before := e.counts()
			const orphan = "thread-orphan-1"
			e.rt.ScriptForks(agenttest.ForkAnswer{Result: agent.RuntimeForkResult{
				Session: agent.RuntimeSession{ThreadID: orphan, Status: agent.ThreadIdle},
				History: historyIf(c.history, []agent.RuntimeTurn{{ID: "t1", Status: agent.TurnCompleted, Messages: []agent.RuntimeMessage{
					{ID: "x1", TurnID: "t1", Role: "user", Text: "hi", Status: "completed"}}}}),
			}})
			if _, err := e.st.DB.ExecContext(e.ctx, `CREATE TRIGGER fail_lineage BEFORE INSERT ON workspace_agent_session_forks
				BEGIN SELECT RAISE(ABORT, 'injected'); END;`); err != nil {
				t.Fatalf("create trigger: %v", err)
			}
			in := input("req-persist")
			in.ChildSessionID = "child-persist"
			e.forkErr(in, apperr.ForkPersistenceFailed)

			if n := e.rt.ForkCalls(); n != 1 {
				t.Errorf("provider fork calls = %d, want 1", n)
			}
			if after := e.counts(); after != before {
				t.Errorf("rows changed (not rolled back): before %+v, after %+v", before, after)
			}
			if _, err := e.st.Client.AgentSession.Get(e.ctx, "child-persist"); !ent.IsNotFound(err) {
				t.Errorf("child session after a failed persist: err = %v, want not found", err)
			}
			if ms := e.messages("child-persist"); len(ms) != 0 {
				t.Errorf("child messages after a failed persist: %d", len(ms))
			}
			if evs := e.pub.Events(); len(evs) != 0 {
				t.Errorf("published %d events on a failure", len(evs))
			}
			var found map[string]any
			for _, rec := range e.logs.Records(t) {
				if rec["orphan_thread"] != nil {
					found = rec
				}
			}
			if found == nil {
				t.Fatalf("no log record with orphan_thread; logs: %v", e.logs.Records(t))
			}
			want := map[string]any{
				"level": "ERROR", "orphan_thread": orphan, "workspace": wsID,
				"session": parentID, "thread": parentThread,
				"child_session": "child-persist", "request": "req-persist",
			}
			for k, v := range want {
				if found[k] != v {
					t.Errorf("orphan log %s = %v, want %v", k, found[k], v)
				}
			}

			// Once storage works again, the request can be retried.
			if _, err := e.st.DB.ExecContext(e.ctx, `DROP TRIGGER fail_lineage`); err != nil {
				t.Fatal(err)
			}
			res := e.mustFork(in)
			if res.Replayed || res.Session.ID != "child-persist" {
				t.Errorf("retry: child %q replayed %v", res.Session.ID, res.Replayed)
			}
		})
	}
}

func TestForkLeavesParentUnchanged(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name       string
		history    bool
		lastTurnID string
	}{
		{"provider turns, whole conversation", true, ""},
		{"parent cache fallback, whole conversation", false, ""},
		{"parent cache fallback, from a turn", false, "t1"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t)
			e.st.Session(defaultParent())
			parentBefore := viewSession(e.session(parentID))
			msgsBefore := e.messages(parentID)
			turnsBefore := e.turns(parentID)
			if c.history {
				e.rt.ScriptForks(agenttest.ForkAnswer{Result: agent.RuntimeForkResult{
					Session: agent.RuntimeSession{ThreadID: "thread-child-h", Status: agent.ThreadIdle},
					History: agent.SliceHistory([]agent.RuntimeTurn{{ID: "t1", Status: agent.TurnCompleted, Messages: []agent.RuntimeMessage{
						// Same item id as a parent message: it must land
						// under the child only.
						{ID: "t1-user", TurnID: "t1", Role: "user", Text: "changed text", Status: "completed"}}}}, 0),
				}})
			}
			in := input("req-unchanged")
			in.LastTurnID = c.lastTurnID
			in.Settings.Model = ptr("other-model")
			in.Title = nil
			for i := range 2 { // a second fork: the parent still does not move
				in.RequestID = fmt.Sprintf("req-unchanged-%d", i)
				e.mustFork(in)
			}

			if after := viewSession(e.session(parentID)); after != parentBefore {
				t.Errorf("parent row changed\nbefore %+v\n after %+v", parentBefore, after)
			}
			msgsAfter := e.messages(parentID)
			if !slices.EqualFunc(msgsBefore, msgsAfter, sameMessage) {
				t.Errorf("parent messages changed\nbefore %+v\n after %+v", viewMessages(msgsBefore), viewMessages(msgsAfter))
			}
			turnsAfter := e.turns(parentID)
			if !slices.EqualFunc(turnsBefore, turnsAfter, sameTurn) {
				t.Errorf("parent turns changed\nbefore %+v\n after %+v", turnsBefore, turnsAfter)
			}
		})
	}
}

func sameMessage(a, b *ent.Message) bool {
	return a.ID == b.ID && a.MessageID == b.MessageID && a.AgentSessionID == b.AgentSessionID &&
		a.WorkspaceID == b.WorkspaceID && a.TurnID == b.TurnID && a.Role == b.Role && a.Kind == b.Kind &&
		a.Text == b.Text && string(a.Content) == string(b.Content) && a.Status == b.Status &&
		a.Version == b.Version && a.CreatedAt.Equal(b.CreatedAt) && a.UpdatedAt.Equal(b.UpdatedAt)
}

func sameTurn(a, b *ent.Turn) bool {
	return a.ID == b.ID && a.TurnID == b.TurnID && a.AgentSessionID == b.AgentSessionID && a.Status == b.Status &&
		a.Error == b.Error && a.StartedAt.Equal(b.StartedAt) &&
		(a.CompletedAt == nil) == (b.CompletedAt == nil) && (a.CompletedAt == nil || a.CompletedAt.Equal(*b.CompletedAt))
}

func TestForkPublishesCreatedAndForkedAfterCommit(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.st.Session(defaultParent())
	res := e.mustFork(input("req-pub"))
	evs := e.publishedChecks()
	if len(evs) != 2 {
		t.Fatalf("published %d events, want 2: %+v", len(evs), evs)
	}
	created, forked := evs[0], evs[1]
	if created.Event.Kind != activity.SessionCreated || created.Event.WorkspaceID != wsID ||
		created.Event.AgentSessionID != res.Session.ID || created.Event.Session == nil ||
		created.Event.Session.ID != res.Session.ID {
		t.Errorf("first event = %+v, want SESSION_CREATED of child %s", created.Event, res.Session.ID)
	}
	if forked.Event.Kind != activity.SessionForked || forked.Event.WorkspaceID != wsID || forked.Event.Fork == nil {
		t.Fatalf("second event = %+v, want SESSION_FORKED with a fork row", forked.Event)
	}
	if viewFork(forked.Event.Fork) != viewFork(e.lineage(res.Session.ID)) {
		t.Errorf("SESSION_FORKED fork = %+v, want the stored %+v", viewFork(forked.Event.Fork), viewFork(e.lineage(res.Session.ID)))
	}
	if forked.Event.Session == nil || forked.Event.Session.ID != res.Session.ID {
		t.Errorf("SESSION_FORKED session = %v, want the child", forked.Event.Session)
	}
	for _, p := range evs {
		if len(p.CommittedCheckErrs) > 0 {
			t.Errorf("%s: checking the commit: %v", p.Event.Kind, p.CommittedCheckErrs)
		}
		if !p.SessionCommitted {
			t.Errorf("%s published before the child was committed", p.Event.Kind)
		}
	}
	if !forked.LineageCommitted {
		t.Errorf("SESSION_FORKED published before the lineage row was committed")
	}
}

func TestForkPublishesNothingOnFailure(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name  string
		setup func(e *env)
		in    func() fork.Input
		want  apperr.Code
	}{
		{"rejected before the provider", func(e *env) {}, func() fork.Input {
			in := input("req-nopub")
			in.LastTurnID = "t-nope"
			return in
		}, apperr.ForkTurnNotFound},
		{"provider failure", func(e *env) {
			e.rt.ScriptForks(agenttest.ForkAnswer{Err: agent.ErrProviderFailed})
		}, func() fork.Input { return input("req-nopub") }, apperr.ForkProviderFailed},
		{"persistence failure", func(e *env) {
			if _, err := e.st.DB.ExecContext(e.ctx, `CREATE TRIGGER fail_lineage BEFORE INSERT ON workspace_agent_session_forks
				BEGIN SELECT RAISE(ABORT, 'injected'); END;`); err != nil {
				e.t.Fatal(err)
			}
		}, func() fork.Input { return input("req-nopub") }, apperr.ForkPersistenceFailed},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t)
			e.st.Session(defaultParent())
			c.setup(e)
			e.forkErr(c.in(), c.want)
			if evs := e.pub.Events(); len(evs) != 0 {
				t.Errorf("published %d events: %+v", len(evs), evs)
			}
		})
	}
}

func TestForkStoresChildWhenCallerCancelsAfterProviderForked(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.st.Session(defaultParent())
	ctx, cancel := context.WithCancel(e.ctx)
	defer cancel()
	// The caller goes away (a client disconnects) just as the provider
	// answers: the provider thread exists, so the child must be stored and
	// the request stay replayable, not leave an orphan thread.
	e.rt.BeforeForkReturns(cancel)
	res, err := e.svc.Fork(ctx, input("req-cancel"))
	if err != nil {
		t.Fatalf("Fork: %v (code %s)", err, apperr.CodeOf(err))
	}
	if res.Session.ProviderSessionID != agenttest.ChildThreadID(1) {
		t.Errorf("child thread = %q, want %q", res.Session.ProviderSessionID, agenttest.ChildThreadID(1))
	}
	again := e.mustFork(input("req-cancel"))
	if !again.Replayed || again.Session.ID != res.Session.ID {
		t.Errorf("retry: child %q replayed %v, want %q replayed", again.Session.ID, again.Replayed, res.Session.ID)
	}
	if n := e.rt.ForkCalls(); n != 1 {
		t.Errorf("provider fork calls = %d, want 1", n)
	}
}

// historyIf is a stream of turns when available, else no history.
func historyIf(available bool, turns []agent.RuntimeTurn) agent.HistoryStream {
	if !available {
		return nil
	}
	return agent.SliceHistory(turns, 0)
}
