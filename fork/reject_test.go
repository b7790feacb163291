package fork_test

import (
	"strings"
	"testing"

	"tuttid/apperr"
	"tuttid/ent/agentsession"
	"tuttid/ent/turn"
	"tuttid/fork"
	"tuttid/store/storetest"
	"tuttid/validate"
)

func TestForkRejectsBeforeCallingProvider(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("x", validate.MaxIDLen+1)
	withRunningTurn := func(status agentsession.Status) func(e *env) {
		return func(e *env) {
			p := defaultParent()
			p.Status = status
			p.Turns = append(p.Turns, storetest.Turn{ID: "t3", Status: turn.StatusIN_PROGRESS, Messages: []storetest.Message{
				{ID: "t3-user", Role: "user", Text: "Now add OAuth"},
				{ID: "t3-assistant", Role: "assistant", Text: "Working on", Status: "in_progress"},
			}})
			e.st.Session(p)
		}
	}
	parentWith := func(edit func(*storetest.Session)) func(e *env) {
		return func(e *env) {
			p := defaultParent()
			edit(&p)
			e.st.Session(p)
		}
	}
	defaultSetup := func(e *env) { e.st.Session(defaultParent()) }
	cases := []struct {
		name  string
		setup func(e *env)
		edit  func(in *fork.Input)
		want  apperr.Code
	}{
		{"working parent, whole conversation", withRunningTurn(agentsession.StatusWORKING), nil, apperr.ForkSessionNotIdle},
		{"working parent, from a completed turn", withRunningTurn(agentsession.StatusWORKING),
			func(in *fork.Input) { in.LastTurnID = "t1" }, apperr.ForkSessionNotIdle},
		{"working parent status without a stored running turn", parentWith(func(p *storetest.Session) { p.Status = agentsession.StatusWORKING }),
			nil, apperr.ForkSessionNotIdle},
		{"ready parent with a running turn", withRunningTurn(agentsession.StatusREADY), nil, apperr.ForkSessionNotIdle},
		{"failed parent", parentWith(func(p *storetest.Session) { p.Status = agentsession.StatusFAILED }), nil, apperr.ForkSessionNotIdle},
		{"lastTurnId of an in-progress turn", withRunningTurn(agentsession.StatusWORKING),
			func(in *fork.Input) { in.LastTurnID = "t3" }, apperr.ForkTurnInProgress},
		{"unknown lastTurnId", defaultSetup, func(in *fork.Input) { in.LastTurnID = "t-nope" }, apperr.ForkTurnNotFound},
		{"lastTurnId of an interrupted turn", parentWith(func(p *storetest.Session) {
			p.Turns = append(p.Turns, storetest.Turn{ID: "t3", Status: turn.StatusINTERRUPTED})
		}), func(in *fork.Input) { in.LastTurnID = "t3" }, apperr.ForkTurnNotFound},
		{"lastTurnId of a failed turn", parentWith(func(p *storetest.Session) {
			p.Turns = append(p.Turns, storetest.Turn{ID: "t3", Status: turn.StatusFAILED})
		}), func(in *fork.Input) { in.LastTurnID = "t3" }, apperr.ForkTurnNotFound},
		{"lastTurnId of another session's turn", func(e *env) {
			e.st.Session(defaultParent())
			e.st.Session(storetest.Session{ID: "other", Workspace: wsID, Thread: "thread-other", Turns: []storetest.Turn{{ID: "t-other", Status: turn.StatusCOMPLETED}}})
		}, func(in *fork.Input) { in.LastTurnID = "t-other" }, apperr.ForkTurnNotFound},
		{"missing parent", defaultSetup, func(in *fork.Input) { in.ParentSessionID = "no-such-session" }, apperr.ForkParentNotFound},
		{"parent in another workspace", defaultSetup, func(in *fork.Input) { in.WorkspaceID = otherWsID }, apperr.ForkParentNotFound},
		{"missing workspace", defaultSetup, func(in *fork.Input) { in.WorkspaceID = "no-such-ws" }, apperr.ForkParentNotFound},
		{"non-codex provider", parentWith(func(p *storetest.Session) { p.Provider = "claude" }), nil, apperr.ForkUnsupportedProvider},
		{"empty providerSessionId", parentWith(func(p *storetest.Session) { p.NoThread = true }), nil, apperr.ForkProviderSessionMissing},
		{"existing targetAgentSessionId", func(e *env) {
			e.st.Session(defaultParent())
			e.st.Session(storetest.Session{ID: "taken", Workspace: wsID, Thread: "thread-taken"})
		}, func(in *fork.Input) { in.ChildSessionID = "taken" }, apperr.ForkTargetConflict},
		{"targetAgentSessionId of a session in another workspace", func(e *env) {
			e.st.Session(defaultParent())
			e.st.Session(storetest.Session{ID: "taken", Workspace: otherWsID, Thread: "thread-taken"})
		}, func(in *fork.Input) { in.ChildSessionID = "taken" }, apperr.ForkTargetConflict},
		{"targetAgentSessionId equal to the parent's", defaultSetup, func(in *fork.Input) { in.ChildSessionID = parentID }, apperr.ForkTargetConflict},
		{"empty requestId", defaultSetup, func(in *fork.Input) { in.RequestID = "" }, apperr.InvalidInput},
		{"computerUse (Codex's app-server has none)", defaultSetup, func(in *fork.Input) { in.Settings.ComputerUse = ptr(true) }, apperr.InvalidInput},
		{"blank requestId", defaultSetup, func(in *fork.Input) { in.RequestID = "   " }, apperr.InvalidInput},
		{"requestId with a space", defaultSetup, func(in *fork.Input) { in.RequestID = "req 1" }, apperr.InvalidInput},
		{"over-long requestId", defaultSetup, func(in *fork.Input) { in.RequestID = long }, apperr.InvalidInput},
		{"empty workspaceId", defaultSetup, func(in *fork.Input) { in.WorkspaceID = "" }, apperr.InvalidInput},
		{"over-long workspaceId", defaultSetup, func(in *fork.Input) { in.WorkspaceID = long }, apperr.InvalidInput},
		{"empty agentSessionId", defaultSetup, func(in *fork.Input) { in.ParentSessionID = "" }, apperr.InvalidInput},
		{"over-long agentSessionId", defaultSetup, func(in *fork.Input) { in.ParentSessionID = long }, apperr.InvalidInput},
		{"over-long targetAgentSessionId", defaultSetup, func(in *fork.Input) { in.ChildSessionID = long }, apperr.InvalidInput},
		{"over-long lastTurnId", defaultSetup, func(in *fork.Input) { in.LastTurnID = long }, apperr.InvalidInput},
		{"over-long title", defaultSetup, func(in *fork.Input) { in.Title = ptr(strings.Repeat("t", validate.MaxTitleLen+1)) }, apperr.InvalidInput},
		{"bad permission mode", defaultSetup, func(in *fork.Input) { in.Settings.PermissionModeID = ptr("yolo") }, apperr.InvalidInput},
		{"bad reasoning effort", defaultSetup, func(in *fork.Input) { in.Settings.ReasoningEffort = ptr("extreme") }, apperr.InvalidInput},
		{"over-long model", defaultSetup, func(in *fork.Input) { in.Settings.Model = ptr(strings.Repeat("m", validate.MaxModelLen+1)) }, apperr.InvalidInput},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t)
			c.setup(e)
			before := e.counts()
			in := input("req-reject")
			if c.edit != nil {
				c.edit(&in)
			}
			e.forkErr(in, c.want)
			if n := e.rt.ForkCalls(); n != 0 {
				t.Errorf("provider fork calls = %d, want 0", n)
			}
			if after := e.counts(); after != before {
				t.Errorf("rows changed: before %+v, after %+v", before, after)
			}
			if evs := e.pub.Events(); len(evs) != 0 {
				t.Errorf("published %d events on a rejection", len(evs))
			}
		})
	}
}
