package explore

import (
	"regexp"
	"strings"
	"time"

	"tuttid/apperr"
	"tuttid/session"
	"tuttid/validate"
)

// Bounds of a request.
const (
	MinBranches = 2
	MaxBranches = 8
	// DefaultCheckTimeout bounds a check when neither the exploration nor
	// its workspace set one (session.MaxCheckTimeout is the largest).
	DefaultCheckTimeout = 10 * time.Minute
)

// branchName: 1-32 of [a-z0-9-], starting with a letter or digit (it is
// part of the fork's requestId and of the branch's title).
var branchName = regexp.MustCompile(`^[a-z0-9][a-z0-9-]{0,31}$`)

// Input is an exploreSession request.
type Input struct {
	WorkspaceID string
	// ParentSessionID is the session explored (the API's agentSessionId).
	ParentSessionID string
	// RequestID makes the request idempotent (per workspace); branch b's
	// fork has requestId <RequestID>.<b>.
	RequestID string
	// LastTurnID: explore from this completed turn; "" the whole
	// conversation.
	LastTurnID string
	// Prompt is the first message of every branch without its own.
	Prompt string
	// CheckCommand overrides the workspace's; "" runs none; nil: the
	// workspace's.
	CheckCommand *string
	// CheckTimeout overrides the workspace's bound; 0: the workspace's.
	CheckTimeout time.Duration
	Branches     []BranchInput
}

// BranchInput is one branch asked for.
type BranchInput struct {
	Name string
	// Prompt is this branch's first message; "" takes Input.Prompt.
	Prompt   string
	Settings session.SettingsOverride
}

// normalize trims and checks the request's form: everything here is
// invalid_input, before anything is read.
func normalize(in Input) (Input, error) {
	in.WorkspaceID = strings.TrimSpace(in.WorkspaceID)
	in.ParentSessionID = strings.TrimSpace(in.ParentSessionID)
	in.RequestID = strings.TrimSpace(in.RequestID)
	in.LastTurnID = strings.TrimSpace(in.LastTurnID)
	for _, c := range []struct{ what, id string }{{"workspaceId", in.WorkspaceID}, {"agentSessionId", in.ParentSessionID}, {"requestId", in.RequestID}} {
		if err := validate.ID(c.what, c.id); err != nil {
			return in, err
		}
	}
	// The fork's requestId is <requestId>.<name>: it must fit an id.
	if err := validate.ID("requestId", in.RequestID+".x"+strings.Repeat("x", 31)); err != nil {
		return in, apperr.New(apperr.InvalidInput, "requestId is too long for its branches' fork requestIds (<requestId>.<name>)")
	}
	if in.LastTurnID != "" {
		if err := validate.ID("lastTurnId", in.LastTurnID); err != nil {
			return in, err
		}
	}
	if strings.TrimSpace(in.Prompt) != "" {
		if err := validate.Message("prompt", in.Prompt, validate.MaxMessageLen); err != nil {
			return in, err
		}
	}
	if in.CheckCommand != nil {
		cmd, err := session.Command("checkCommand", *in.CheckCommand)
		if err != nil {
			return in, err
		}
		in.CheckCommand = &cmd
	}
	if err := session.CheckTimeout(in.CheckTimeout); err != nil {
		return in, err
	}
	if n := len(in.Branches); n < MinBranches || n > MaxBranches {
		return in, apperr.New(apperr.InvalidInput, "an exploration has %d to %d branches, not %d", MinBranches, MaxBranches, n)
	}
	seen := map[string]bool{}
	for i := range in.Branches {
		b := &in.Branches[i]
		b.Name = strings.TrimSpace(b.Name)
		if !branchName.MatchString(b.Name) {
			return in, apperr.New(apperr.InvalidInput, "branch name %q: 1 to 32 of a-z, 0-9 and -, starting with a letter or digit", b.Name)
		}
		if seen[b.Name] {
			return in, apperr.New(apperr.InvalidInput, "branch name %q is used twice", b.Name)
		}
		seen[b.Name] = true
		if strings.TrimSpace(b.Prompt) == "" {
			b.Prompt = in.Prompt
		}
		if strings.TrimSpace(b.Prompt) == "" {
			return in, apperr.New(apperr.InvalidInput, "branch %q has no prompt, and the exploration none to share", b.Name)
		}
		if err := validate.Message("prompt", b.Prompt, validate.MaxMessageLen); err != nil {
			return in, err
		}
	}
	return in, nil
}
