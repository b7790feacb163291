package fork

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
)

// fingerprint identifies a request's parameters, so that a replay with the
// same requestId can be told apart from a reuse with different ones. It
// hashes normalized values: visible left out means true.
func (in Input) fingerprint() string {
	visible := in.Visible == nil || *in.Visible
	// The field names are part of the hash, which stored requests keep:
	// Source and Target (parent and child) stay as they are.
	v := struct {
		Workspace, Source, Target, LastTurn string
		Title                               *string
		Visible                             bool
		Model, Effort, Permission           *string
		Plan, Browser, Computer             *bool
	}{
		in.WorkspaceID, in.ParentSessionID, in.ChildSessionID, in.LastTurnID,
		in.Title, visible,
		in.Settings.Model, in.Settings.ReasoningEffort, in.Settings.PermissionModeID,
		in.Settings.PlanMode, in.Settings.BrowserUse, in.Settings.ComputerUse,
	}
	b, _ := json.Marshal(v) // plain strings and bools: cannot fail
	// A WORKTREE fork's code is hashed after the rest, so that every
	// request without it keeps the fingerprint stored before code existed.
	if in.Code != nil {
		c, _ := json.Marshal(struct{ Mode, Branch string }{"WORKTREE", in.Code.Branch})
		b = append(b, c...)
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}
