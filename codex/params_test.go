package codex

import (
	"encoding/json"
	"errors"
	"testing"

	"tuttid/agent"
)

func TestBuildThreadParams(t *testing.T) {
	for _, c := range []struct {
		name     string
		settings agent.ComposerSettings
		cwd      string
		provider string
		want     string
	}{
		{"defaults", agent.ComposerSettings{}, "", "",
			`{"approvalPolicy":"on-request","approvalsReviewer":"user","sandbox":"workspace-write","config":{"web_search":"disabled"}}`},
		{"read-only", agent.ComposerSettings{PermissionModeID: agent.PermissionReadOnly, Model: "gpt-5"}, "/w", "openai",
			`{"model":"gpt-5","modelProvider":"openai","cwd":"/w","approvalPolicy":"never","approvalsReviewer":"user","sandbox":"read-only","config":{"web_search":"disabled"}}`},
		{"workspace-write", agent.ComposerSettings{PermissionModeID: agent.PermissionWorkspaceWrite}, "/w", "",
			`{"cwd":"/w","approvalPolicy":"on-request","approvalsReviewer":"user","sandbox":"workspace-write","config":{"web_search":"disabled"}}`},
		{"full access, effort, browser", agent.ComposerSettings{PermissionModeID: agent.PermissionFullAccess, ReasoningEffort: "xhigh", BrowserUse: true}, "/w", "",
			`{"cwd":"/w","approvalPolicy":"never","approvalsReviewer":"user","sandbox":"danger-full-access","config":{"model_reasoning_effort":"xhigh","web_search":"live"}}`},
		{"plan mode is per turn", agent.ComposerSettings{PlanMode: true}, "", "",
			`{"approvalPolicy":"on-request","approvalsReviewer":"user","sandbox":"workspace-write","config":{"web_search":"disabled"}}`},
	} {
		t.Run(c.name, func(t *testing.T) {
			s, err := validateSettings(c.settings)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := json.Marshal(buildThreadParams(s, c.cwd, c.provider))
			if string(b) != c.want {
				t.Fatalf("got  %s\nwant %s", b, c.want)
			}
		})
	}
}

// One function of the settings feeds all three, as in Codex's TUI.
func TestStartResumeAndForkShareThreadParams(t *testing.T) {
	s, _ := validateSettings(agent.ComposerSettings{Model: "m", ReasoningEffort: "low", BrowserUse: true})
	tp := buildThreadParams(s, "/w", "p")
	start, _ := json.Marshal(threadStartParams{threadParams: tp, threadOrigin: newThreadOrigin()})
	resume, _ := json.Marshal(threadResumeParams{ThreadID: "T", threadParams: tp, ExcludeTurns: true})
	fork, _ := json.Marshal(threadForkParams{ThreadID: "T", threadParams: tp, threadOrigin: newThreadOrigin()})
	forkAt, _ := json.Marshal(threadForkParams{ThreadID: "T", LastTurnID: "U", threadParams: tp, threadOrigin: newThreadOrigin()})
	const shared = `"model":"m","modelProvider":"p","cwd":"/w","approvalPolicy":"on-request","approvalsReviewer":"user","sandbox":"workspace-write","config":{"model_reasoning_effort":"low","web_search":"live"}`
	const origin = `"ephemeral":false,"threadSource":"user"`
	for got, want := range map[string]string{
		string(start):  `{` + shared + `,` + origin + `}`,
		string(resume): `{"threadId":"T",` + shared + `,"excludeTurns":true}`,
		string(fork):   `{"threadId":"T",` + shared + `,` + origin + `}`,
		string(forkAt): `{"threadId":"T","lastTurnId":"U",` + shared + `,` + origin + `}`,
	} {
		if got != want {
			t.Errorf("got  %s\nwant %s", got, want)
		}
	}
}

func TestValidateSettings(t *testing.T) {
	for _, c := range []struct {
		in      agent.ComposerSettings
		wantErr bool
	}{
		{agent.ComposerSettings{}, false},
		{agent.ComposerSettings{PermissionModeID: "full-access", ReasoningEffort: "none"}, false},
		{agent.ComposerSettings{PermissionModeID: "danger"}, true},
		{agent.ComposerSettings{ReasoningEffort: "ultra"}, true},
		{agent.ComposerSettings{ComputerUse: true}, true},
	} {
		_, err := validateSettings(c.in)
		if (err != nil) != c.wantErr || (err != nil && !errors.Is(err, agent.ErrInvalidSettings)) {
			t.Errorf("%+v: %v", c.in, err)
		}
	}
	// planMode without the experimental collaboration mode is refused.
	r := New(Config{})
	if _, err := r.validate(agent.ComposerSettings{PlanMode: true}); !errors.Is(err, agent.ErrInvalidSettings) {
		t.Errorf("planMode without ExperimentalPlanMode: %v", err)
	}
	r = New(Config{ExperimentalPlanMode: true})
	if _, err := r.validate(agent.ComposerSettings{PlanMode: true}); err != nil {
		t.Errorf("planMode with ExperimentalPlanMode: %v", err)
	}
}

func TestBuildTurnParams(t *testing.T) {
	loadedWS := loadedThread{mode: agent.PermissionWorkspaceWrite, model: "thread-model", effort: "medium"}
	for _, c := range []struct {
		name     string
		settings agent.ComposerSettings
		loaded   loadedThread
		plan     bool // Config.ExperimentalPlanMode
		want     string
	}{
		{"same mode: no sandbox", agent.ComposerSettings{}, loadedWS, false,
			`{"threadId":"T","input":[{"type":"text","text":"hi"}],"cwd":"/w","approvalPolicy":"on-request"}`},
		{"mode changed: sandbox policy", agent.ComposerSettings{PermissionModeID: agent.PermissionReadOnly, Model: "m", ReasoningEffort: "low"}, loadedWS, false,
			`{"threadId":"T","input":[{"type":"text","text":"hi"}],"cwd":"/w","approvalPolicy":"never","sandboxPolicy":{"networkAccess":false,"type":"readOnly"},"model":"m","effort":"low"}`},
		{"plan mode ignored without opt-in", agent.ComposerSettings{PlanMode: true}, loadedWS, false,
			`{"threadId":"T","input":[{"type":"text","text":"hi"}],"cwd":"/w","approvalPolicy":"on-request"}`},
		{"plan mode", agent.ComposerSettings{PlanMode: true}, loadedWS, true,
			`{"threadId":"T","input":[{"type":"text","text":"hi"}],"cwd":"/w","approvalPolicy":"on-request","collaborationMode":{"mode":"plan","settings":{"model":"thread-model","reasoning_effort":"medium","developer_instructions":null}}}`},
		{"default mode resets plan", agent.ComposerSettings{Model: "m"}, loadedThread{mode: agent.PermissionWorkspaceWrite}, true,
			`{"threadId":"T","input":[{"type":"text","text":"hi"}],"cwd":"/w","approvalPolicy":"on-request","model":"m","collaborationMode":{"mode":"default","settings":{"model":"m","reasoning_effort":null,"developer_instructions":null}}}`},
		{"no model known: no collaboration mode", agent.ComposerSettings{PlanMode: true}, loadedThread{mode: agent.PermissionWorkspaceWrite}, true,
			`{"threadId":"T","input":[{"type":"text","text":"hi"}],"cwd":"/w","approvalPolicy":"on-request"}`},
	} {
		t.Run(c.name, func(t *testing.T) {
			s, err := validateSettings(c.settings)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := json.Marshal(buildTurnParams("T", "hi", "/w", s, c.loaded, c.plan))
			if string(b) != c.want {
				t.Fatalf("got  %s\nwant %s", b, c.want)
			}
		})
	}
}
