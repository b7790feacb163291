package fork_test

import (
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"testing"
	"time"

	"tuttid/agent"
	"tuttid/agent/agenttest"
	"tuttid/ent/agentsession"
	"tuttid/ent/turn"
	"tuttid/fork"
	"tuttid/session"
	"tuttid/store/storetest"
)

func TestForkCreatesChildSessionLineageAndMessagesFromProviderTurns(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	parent := e.st.Session(defaultParent())
	forkedAt := time.UnixMilli(1782892812345)
	providerTurns := []agent.RuntimeTurn{
		{ID: "t1", Status: agent.TurnCompleted, Messages: []agent.RuntimeMessage{
			{ID: "p-t1-user", TurnID: "t1", Role: "user", Kind: "userMessage", Text: "Add a login page", Content: json.RawMessage(`{"type":"userMessage"}`), Status: "completed"},
			// No TurnID: the service takes the turn's.
			{ID: "p-t1-assistant", Role: "assistant", Kind: "agentMessage", Text: "Added login.tsx", Status: "completed"},
		}},
		{ID: "t2", Status: agent.TurnCompleted, Messages: []agent.RuntimeMessage{
			{ID: "p-t2-user", TurnID: "t2", Role: "user", Kind: "userMessage", Text: "Add tests", Status: "completed"},
			{ID: "p-t2-tool", TurnID: "t2", Role: "tool", Kind: "commandExecution", Text: "npm test", Status: "completed"},
			{ID: "p-t2-assistant", TurnID: "t2", Role: "assistant", Kind: "agentMessage", Text: "Added login.test.tsx", Status: "completed"},
		}},
	}
	e.rt.ScriptForks(agenttest.ForkAnswer{Result: agent.RuntimeForkResult{
		Session: agent.RuntimeSession{ThreadID: "thread-child-x", Status: agent.ThreadIdle},
		History: agent.SliceHistory(providerTurns, 0),
		Fork: agent.RuntimeForkLineage{ParentThreadID: parentThread, ChildThreadID: "thread-child-x",
			Provider: agent.ProviderCodex, ForkedAt: forkedAt},
	}})

	res, err := e.svc.Fork(e.ctx, fork.Input{
		WorkspaceID: wsID, ParentSessionID: parentID, RequestID: "req-1",
		Settings: session.SettingsOverride{Model: ptr("gpt-5-mini"), PlanMode: ptr(true)},
	})
	if err != nil {
		t.Fatalf("Fork: %v", err)
	}
	if res.Replayed {
		t.Errorf("Replayed = true on a first request")
	}

	// The child session.
	child := e.session(res.Session.ID)
	if child.ID == parentID || child.ID == "" {
		t.Fatalf("child id = %q", child.ID)
	}
	wantSettings := parentSettings
	wantSettings.Model, wantSettings.PlanMode = "gpt-5-mini", true
	got := viewSession(child)
	want := sessionView{
		ID: child.ID, Workspace: wsID, Provider: agent.ProviderCodex, Thread: "thread-child-x",
		Title: parentTitle + "(fork1)", Cwd: parent.Cwd, Status: agentsession.StatusREADY, Visible: true,
		Settings: wantSettings, RuntimeContext: got.RuntimeContext, LastMessageVersion: 5,
		CreatedAt: got.CreatedAt, UpdatedAt: got.UpdatedAt,
	}
	if got != want {
		t.Errorf("child session\n got %+v\nwant %+v", got, want)
	}
	if viewSession(res.Session) != got {
		t.Errorf("result session differs from the stored one\nresult %+v\nstored %+v", viewSession(res.Session), got)
	}

	// Its runtime context: exactly the spec's cached keys.
	wantRC := map[string]any{
		"forkedFromAgentSessionId":    parentID,
		"forkedFromProviderSessionId": parentThread,
		"forkedFromTurnId":            "",
		"forkParentTitle":             parentTitle,
		"forkedAtUnixMs":              float64(forkedAt.UnixMilli()), // JSON number
		"forkMessageSource":           fork.SourceProviderTurns,
	}
	if !maps.Equal(child.RuntimeContext, wantRC) {
		t.Errorf("runtime context\n got %v\nwant %v", child.RuntimeContext, wantRC)
	}

	// The lineage row.
	row := e.lineage(child.ID)
	gotRow := viewFork(row)
	wantRow := forkView{Workspace: wsID, Child: child.ID, Parent: parentID, ChildThread: "thread-child-x",
		ParentThread: parentThread, Provider: agent.ProviderCodex, TurnID: "", RequestID: "req-1",
		Fingerprint: gotRow.Fingerprint, ForkedAtUnixMs: forkedAt.UnixMilli()}
	if gotRow != wantRow {
		t.Errorf("lineage row\n got %+v\nwant %+v", gotRow, wantRow)
	}
	if gotRow.Fingerprint == "" {
		t.Errorf("lineage row has no request fingerprint")
	}
	if viewFork(res.Fork) != gotRow {
		t.Errorf("result lineage differs from the stored one\nresult %+v\nstored %+v", viewFork(res.Fork), gotRow)
	}

	// The child's messages: the provider's, versions 1..n in order.
	var wantMsgs []msgView
	for _, pt := range providerTurns {
		for _, m := range pt.Messages {
			content := string(m.Content)
			if content == "" {
				content = "{}"
			}
			wantMsgs = append(wantMsgs, msgView{ID: m.ID, TurnID: pt.ID, Role: m.Role, Kind: m.Kind, Text: m.Text,
				Content: content, Status: m.Status, Version: int64(len(wantMsgs) + 1)})
		}
	}
	if gotMsgs := viewMessages(e.messages(child.ID)); !slices.Equal(gotMsgs, wantMsgs) {
		t.Errorf("child messages\n got %+v\nwant %+v", gotMsgs, wantMsgs)
	}
	// Its turns, in order.
	wantTurns := []turnView{{"t1", turn.StatusCOMPLETED}, {"t2", turn.StatusCOMPLETED}}
	if gotTurns := viewTurns(e.turns(child.ID)); !slices.Equal(gotTurns, wantTurns) {
		t.Errorf("child turns = %+v, want %+v", gotTurns, wantTurns)
	}
	if n := e.rt.ForkCalls(); n != 1 {
		t.Errorf("provider fork calls = %d, want 1", n)
	}
}

func TestForkFallbackCopiesParentMessagesThroughBoundary(t *testing.T) {
	t.Parallel()
	// The parent: completed turns t1, t2, t4; t2 has a message still in
	// progress; t3 failed and t5 was interrupted (not completed).
	parentSeed := defaultParent()
	parentSeed.Turns = []storetest.Turn{
		{ID: "t1", Status: turn.StatusCOMPLETED, Messages: []storetest.Message{
			{ID: "m1", Role: "user", Text: "one"}, {ID: "m2", Role: "assistant", Text: "one done"}}},
		{ID: "t2", Status: turn.StatusCOMPLETED, Messages: []storetest.Message{
			{ID: "m3", Role: "user", Text: "two"}, {ID: "m4", Role: "tool", Text: "still running", Status: "in_progress"},
			{ID: "m5", Role: "assistant", Text: "two done"}}},
		{ID: "t3", Status: turn.StatusFAILED, Messages: []storetest.Message{
			{ID: "m6", Role: "user", Text: "three"}, {ID: "m7", Role: "assistant", Text: "three failed", Status: "failed"}}},
		{ID: "t4", Status: turn.StatusCOMPLETED, Messages: []storetest.Message{
			{ID: "m8", Role: "user", Text: "four"}, {ID: "m9", Role: "assistant", Text: "four done"}}},
		{ID: "t5", Status: turn.StatusINTERRUPTED, Messages: []storetest.Message{
			{ID: "m10", Role: "user", Text: "five"}}},
	}
	cases := []struct {
		name       string
		lastTurnID string
		wantTurns  []string
		wantMsgs   []string
	}{
		{"whole conversation copies all completed turns", "", []string{"t1", "t2", "t4"}, []string{"m1", "m2", "m3", "m5", "m8", "m9"}},
		{"through the first turn", "t1", []string{"t1"}, []string{"m1", "m2"}},
		{"through a middle turn, skipping its in-progress message", "t2", []string{"t1", "t2"}, []string{"m1", "m2", "m3", "m5"}},
		{"through a later turn, skipping a failed turn before it", "t4", []string{"t1", "t2", "t4"}, []string{"m1", "m2", "m3", "m5", "m8", "m9"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t)
			e.st.Session(parentSeed)
			parentMsgs := map[string]msgView{}
			for _, m := range viewMessages(e.messages(parentID)) {
				parentMsgs[m.ID] = m
			}
			// The default fake answer has no History.
			in := input("req-fallback")
			in.LastTurnID = c.lastTurnID
			res := e.mustFork(in)

			child := e.session(res.Session.ID)
			var want []msgView
			for i, id := range c.wantMsgs {
				m := parentMsgs[id]
				m.Version = int64(i + 1) // recomputed for the child
				want = append(want, m)
			}
			if got := viewMessages(e.messages(child.ID)); !slices.Equal(got, want) {
				t.Errorf("child messages\n got %+v\nwant %+v", got, want)
			}
			if child.LastMessageVersion != int64(len(want)) {
				t.Errorf("child last_message_version = %d, want %d", child.LastMessageVersion, len(want))
			}
			var wantTurns []turnView
			for _, id := range c.wantTurns {
				wantTurns = append(wantTurns, turnView{id, turn.StatusCOMPLETED})
			}
			if got := viewTurns(e.turns(child.ID)); !slices.Equal(got, wantTurns) {
				t.Errorf("child turns = %+v, want %+v", got, wantTurns)
			}
			if src := child.RuntimeContext["forkMessageSource"]; src != fork.SourceParentCache {
				t.Errorf("forkMessageSource = %v, want %q", src, fork.SourceParentCache)
			}
			if tid := child.RuntimeContext["forkedFromTurnId"]; tid != c.lastTurnID {
				t.Errorf("forkedFromTurnId = %v, want %q", tid, c.lastTurnID)
			}
			if row := e.lineage(child.ID); row.ForkTurnID != c.lastTurnID {
				t.Errorf("lineage fork_turn_id = %q, want %q", row.ForkTurnID, c.lastTurnID)
			}
		})
	}
}

func TestForkRuntimeReceivesParentThreadBoundaryAndSettings(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name         string
		lastTurnID   string
		override     session.SettingsOverride
		visible      *bool
		wantSettings func(agent.ComposerSettings) agent.ComposerSettings
		wantVisible  bool
	}{
		{
			name:         "whole conversation, parent settings",
			wantSettings: func(s agent.ComposerSettings) agent.ComposerSettings { return s },
			wantVisible:  true,
		},
		{
			name: "from a turn, every setting overridden, hidden", lastTurnID: "t1",
			override: session.SettingsOverride{
				Model: ptr("gpt-5-codex"), ReasoningEffort: ptr("high"), PermissionModeID: ptr(agent.PermissionReadOnly),
				PlanMode: ptr(true), BrowserUse: ptr(true), ComputerUse: ptr(false),
			},
			visible: ptr(false),
			wantSettings: func(agent.ComposerSettings) agent.ComposerSettings {
				return agent.ComposerSettings{Model: "gpt-5-codex", ReasoningEffort: "high",
					PermissionModeID: agent.PermissionReadOnly, PlanMode: true, BrowserUse: true, ComputerUse: false}
			},
			wantVisible: false,
		},
		{
			name: "from the last turn, one setting overridden", lastTurnID: "t2",
			override: session.SettingsOverride{PermissionModeID: ptr(agent.PermissionFullAccess)},
			wantSettings: func(s agent.ComposerSettings) agent.ComposerSettings {
				s.PermissionModeID = agent.PermissionFullAccess
				return s
			},
			wantVisible: true,
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t)
			e.st.Session(defaultParent())
			in := input("req-rt")
			in.LastTurnID, in.Settings, in.Visible = c.lastTurnID, c.override, c.visible
			res := e.mustFork(in)

			calls := e.rt.ForkInputs()
			if len(calls) != 1 {
				t.Fatalf("provider fork calls = %d, want 1", len(calls))
			}
			got := calls[0]
			if got.Visible == nil {
				t.Fatalf("runtime input Visible = nil")
			}
			gotVisible := *got.Visible
			got.Visible = nil
			// Every fork asks for a late reply's thread (a func: compared apart).
			if got.OnLateThread == nil {
				t.Errorf("runtime input OnLateThread = nil")
			}
			got.OnLateThread = nil
			want := agent.RuntimeForkInput{
				WorkspaceID: wsID, ParentSessionID: parentID, ChildSessionID: res.Session.ID,
				Provider: agent.ProviderCodex, ParentThreadID: parentThread, Cwd: parentCwd,
				Settings: c.wantSettings(parentSettings), LastTurnID: c.lastTurnID, Title: parentTitle + "(fork1)",
			}
			// The hint is the size of the parent's cached items.
			for _, m := range e.messages(parentID) {
				want.HistoryBytesHint += int64(len(m.Content))
			}
			if want.HistoryBytesHint == 0 {
				t.Fatal("the seeded parent has no item content to size")
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("runtime input\n got %+v\nwant %+v", got, want)
			}
			if gotVisible != c.wantVisible {
				t.Errorf("runtime input Visible = %v, want %v", gotVisible, c.wantVisible)
			}
			// The child stores what the runtime was given.
			child := e.session(res.Session.ID)
			if child.Settings != want.Settings || child.Visible != c.wantVisible || child.Cwd != parentCwd {
				t.Errorf("child settings/visible/cwd = %+v/%v/%q, want %+v/%v/%q",
					child.Settings, child.Visible, child.Cwd, want.Settings, c.wantVisible, parentCwd)
			}
		})
	}
}

// fmtTitles is for messages listing titles.
func fmtTitles(ts []string) string { return fmt.Sprintf("%q", ts) }

func TestForkResultEntitiesAreUsableAfterCommit(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.st.Session(defaultParent())
	res := e.mustFork(input("req-usable"))
	n, err := res.Session.QueryMessages().Count(e.ctx)
	if err != nil {
		t.Fatalf("child.QueryMessages: %v", err)
	}
	if n != 5 {
		t.Errorf("child messages = %d, want 5", n)
	}
	parent, err := res.Fork.QueryParent().Only(e.ctx)
	if err != nil {
		t.Fatalf("fork.QueryParent: %v", err)
	}
	if parent.ID != parentID {
		t.Errorf("lineage parent = %q, want %q", parent.ID, parentID)
	}
	if _, err := res.Session.Update().SetTitle("Renamed").Save(e.ctx); err != nil {
		t.Errorf("child.Update: %v", err)
	}
}
