package codex

import (
	"fmt"
	"slices"

	"tuttid/agent"
)

// permission is what a tuttid permission mode means to Codex.
type permission struct {
	sandbox  string // SandboxMode for thread/start, resume, fork
	approval string // AskForApproval
	// sandboxPolicy is the same sandbox as a per-turn SandboxPolicy, for
	// turn/start when the mode changed since the thread was loaded.
	sandboxPolicy map[string]any
}

var permissions = map[string]permission{
	agent.PermissionReadOnly: {
		sandbox: "read-only", approval: "never",
		sandboxPolicy: map[string]any{"type": "readOnly", "networkAccess": false},
	},
	agent.PermissionWorkspaceWrite: {
		sandbox: "workspace-write", approval: "on-request",
		sandboxPolicy: map[string]any{
			"type": "workspaceWrite", "writableRoots": []string{}, "networkAccess": false,
			"excludeTmpdirEnvVar": false, "excludeSlashTmp": false,
		},
	},
	agent.PermissionFullAccess: {
		sandbox: "danger-full-access", approval: "never",
		sandboxPolicy: map[string]any{"type": "dangerFullAccess"},
	},
}

// settings are validated ComposerSettings with the defaults applied.
type settings struct {
	agent.ComposerSettings
	mode string // a key of permissions
}

func (s settings) perm() permission { return permissions[s.mode] }

// checkProvider rejects every provider but Codex.
func checkProvider(provider string) error {
	if provider != agent.ProviderCodex {
		return fmt.Errorf("%w: %q (this runtime drives %q only)", agent.ErrUnsupportedProvider, provider, agent.ProviderCodex)
	}
	return nil
}

func validateSettings(in agent.ComposerSettings) (settings, error) {
	mode := in.PermissionModeID
	if mode == "" {
		mode = agent.PermissionWorkspaceWrite
	}
	if _, ok := permissions[mode]; !ok {
		return settings{}, fmt.Errorf("%w: unknown permission mode %q (want one of %v)", agent.ErrInvalidSettings, in.PermissionModeID, agent.PermissionModes())
	}
	if in.ReasoningEffort != "" && !slices.Contains(agent.ReasoningEfforts(), in.ReasoningEffort) {
		return settings{}, fmt.Errorf("%w: unknown reasoning effort %q (want one of %v)", agent.ErrInvalidSettings, in.ReasoningEffort, agent.ReasoningEfforts())
	}
	return settings{ComposerSettings: in, mode: mode}, nil
}

// threadParams are the settings-derived fields shared by thread/start,
// thread/resume and thread/fork. Codex's TUI builds all three from the same
// helpers and tests that they agree; tuttid does the same with
// buildThreadParams.
type threadParams struct {
	Model          string         `json:"model,omitempty"`
	Cwd            string         `json:"cwd,omitempty"`
	ApprovalPolicy string         `json:"approvalPolicy"`
	Sandbox        string         `json:"sandbox"`
	Config         map[string]any `json:"config"`
}

// buildThreadParams maps a session's effective settings and cwd to Codex.
//
//   - PermissionModeID selects sandbox + approvalPolicy (see permissions).
//   - ReasoningEffort becomes the model_reasoning_effort config override.
//   - BrowserUse becomes web_search: "live" or "disabled". It is always
//     sent, as the TUI does, so a session's choice beats config.toml.
//   - PlanMode has no thread-level field; it is a per-turn
//     collaborationMode (see turnOverrides), experimental in 0.169.0.
//   - ComputerUse is not forwarded: Codex's computer_use feature drives
//     desktop apps through the Codex desktop client and has no effect on a
//     headless app-server, so there is nothing to map it to.
func buildThreadParams(s settings, cwd string) threadParams {
	p := s.perm()
	cfg := map[string]any{"web_search": "disabled"}
	if s.BrowserUse {
		cfg["web_search"] = "live"
	}
	if s.ReasoningEffort != "" {
		cfg["model_reasoning_effort"] = s.ReasoningEffort
	}
	return threadParams{
		Model:          s.Model,
		Cwd:            cwd,
		ApprovalPolicy: p.approval,
		Sandbox:        p.sandbox,
		Config:         cfg,
	}
}

type threadResumeParams struct {
	ThreadID string `json:"threadId"`
	threadParams
	// The adapter reads history with thread/turns/list when it needs it;
	// hydrating turns on resume is the expensive part.
	ExcludeTurns bool `json:"excludeTurns"`
}

type threadForkParams struct {
	ThreadID   string `json:"threadId"`
	LastTurnID string `json:"lastTurnId,omitempty"`
	threadParams
}

type textInput struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

type collaborationMode struct {
	Mode     string                    `json:"mode"` // "plan" or "default"
	Settings collaborationModeSettings `json:"settings"`
}

type collaborationModeSettings struct {
	Model           string  `json:"model"`
	ReasoningEffort *string `json:"reasoning_effort"`
	// nil: Codex's built-in instructions for the mode.
	DeveloperInstructions *string `json:"developer_instructions"`
}

type turnStartParams struct {
	ThreadID       string         `json:"threadId"`
	Input          []textInput    `json:"input"`
	Cwd            string         `json:"cwd,omitempty"`
	ApprovalPolicy string         `json:"approvalPolicy,omitempty"`
	SandboxPolicy  map[string]any `json:"sandboxPolicy,omitempty"`
	Model          string         `json:"model,omitempty"`
	Effort         string         `json:"effort,omitempty"`
	// CollaborationMode is experimental; sent only with
	// Config.ExperimentalPlanMode.
	CollaborationMode *collaborationMode `json:"collaborationMode,omitempty"`
}

// loadedThread is what tuttid knows of a thread the current app-server has
// loaded, to decide the per-turn overrides.
type loadedThread struct {
	mode   string // permission mode it was loaded (or last turned) with
	model  string // effective model Codex reported
	effort string // effective reasoning effort Codex reported
}

// buildTurnParams maps a turn's text and the session's (possibly changed)
// settings to turn/start. Model, effort, approval policy and cwd are plain
// overrides and always sent when known; the sandbox is sent only when the
// permission mode changed since the thread was loaded, because a per-turn
// SandboxPolicy replaces config.toml's sandbox_workspace_write details that
// the thread-level sandbox mode keeps.
func buildTurnParams(threadID, text, cwd string, s settings, lt loadedThread, planMode bool) turnStartParams {
	p := s.perm()
	tp := turnStartParams{
		ThreadID:       threadID,
		Input:          []textInput{{Type: "text", Text: text}},
		Cwd:            cwd,
		ApprovalPolicy: p.approval,
		Model:          s.Model,
		Effort:         s.ReasoningEffort,
	}
	if lt.mode != s.mode {
		tp.SandboxPolicy = p.sandboxPolicy
	}
	if planMode {
		model := s.Model
		if model == "" {
			model = lt.model
		}
		effort := s.ReasoningEffort
		if effort == "" {
			effort = lt.effort
		}
		// Settings.model is required by Codex; without a known model the
		// mode cannot be expressed and the turn runs in the thread's mode.
		if model != "" {
			mode := "default"
			if s.PlanMode {
				mode = "plan"
			}
			cm := &collaborationMode{Mode: mode, Settings: collaborationModeSettings{Model: model}}
			if effort != "" {
				cm.Settings.ReasoningEffort = &effort
			}
			tp.CollaborationMode = cm
		}
	}
	return tp
}
