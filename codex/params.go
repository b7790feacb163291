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
	if in.ComputerUse {
		return settings{}, fmt.Errorf("%w: %s", agent.ErrInvalidSettings, agent.ComputerUseUnsupported)
	}
	return settings{ComposerSettings: in, mode: mode}, nil
}

// threadParams are the settings-derived fields shared by thread/start,
// thread/resume and thread/fork. Codex's TUI builds all three from the same
// helpers (codex-rs/tui/src/app_server_session.rs) and tests that they
// agree; tuttid does the same with buildThreadParams. Fields the TUI fills
// from config tuttid has no setting for (serviceTier, baseInstructions,
// developerInstructions, personality, model_reasoning_summary,
// model_verbosity) are left out, so Codex's config decides, as it does for
// the TUI when they are unset. runtimeWorkspaceRoots and permissions are
// not in 0.169.0's stable protocol; tuttid sends the sandbox mode.
type threadParams struct {
	Model         string `json:"model,omitempty"`
	ModelProvider string `json:"modelProvider,omitempty"`
	Cwd           string `json:"cwd,omitempty"`
	// ApprovalPolicy and ApprovalsReviewer: the permission mode's policy,
	// reviewed by the session's person ("user"), never a model reviewer.
	ApprovalPolicy    string         `json:"approvalPolicy"`
	ApprovalsReviewer string         `json:"approvalsReviewer"`
	Sandbox           string         `json:"sandbox"`
	Config            map[string]any `json:"config"`
}

// threadOrigin is what thread/start and thread/fork add (thread/resume
// has neither field).
type threadOrigin struct {
	// Ephemeral: tuttid's threads are kept on disk (history, resume, fork).
	Ephemeral bool `json:"ephemeral"`
	// ThreadSource: threads are made on a person's request, as the TUI's.
	ThreadSource string `json:"threadSource"`
}

func newThreadOrigin() threadOrigin { return threadOrigin{Ephemeral: false, ThreadSource: "user"} }

// buildThreadParams maps a session's effective settings, cwd and model
// provider to Codex. It is the one source of thread/start, thread/resume
// and thread/fork params.
//
//   - PermissionModeID selects sandbox + approvalPolicy (see permissions).
//   - ReasoningEffort becomes the model_reasoning_effort config override.
//   - BrowserUse becomes web_search: "live" or "disabled" (Codex's web
//     search tool, its only browsing feature in 0.169.0). It is always
//     sent, as the TUI does, so a session's choice beats config.toml.
//   - PlanMode has no thread-level field; it is a per-turn
//     collaborationMode (see buildTurnParams), experimental in 0.169.0.
//   - ComputerUse is refused by validateSettings: Codex's computer_use
//     drives desktop apps through the Codex desktop client and has no
//     effect on a headless app-server.
func buildThreadParams(s settings, cwd, modelProvider string) threadParams {
	p := s.perm()
	cfg := map[string]any{"web_search": "disabled"}
	if s.BrowserUse {
		cfg["web_search"] = "live"
	}
	if s.ReasoningEffort != "" {
		cfg["model_reasoning_effort"] = s.ReasoningEffort
	}
	return threadParams{
		Model:             s.Model,
		ModelProvider:     modelProvider,
		Cwd:               cwd,
		ApprovalPolicy:    p.approval,
		ApprovalsReviewer: "user",
		Sandbox:           p.sandbox,
		Config:            cfg,
	}
}

type threadStartParams struct {
	threadParams
	threadOrigin
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
	threadOrigin
	// ExcludeTurns keeps the child's history out of the reply line, for a
	// small history Fork reads in thread/turns/list pages instead; a large
	// one comes in the reply, decoded as it streams in.
	ExcludeTurns bool `json:"excludeTurns,omitempty"`
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
