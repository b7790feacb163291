package graph

import (
	"time"

	"tuttid/ent/workspace"
	"tuttid/explore"
	"tuttid/graph/model"
	"tuttid/session"
)

// workspaceSettings are createWorkspace's and updateWorkspace's settings.
func workspaceSettings(setup, check *string, checkSeconds *int, sandbox *workspace.CommandSandbox) session.WorkspaceSettings {
	set := session.WorkspaceSettings{WorktreeSetup: setup, CheckCommand: check, CommandSandbox: sandbox}
	if checkSeconds != nil {
		d := time.Duration(*checkSeconds) * time.Second
		set.CheckTimeout = &d
	}
	return set
}

// exploreInput is exploreSession's input as the service takes it.
func exploreInput(in model.ExploreSessionInput) explore.Input {
	out := explore.Input{WorkspaceID: in.WorkspaceID, ParentSessionID: in.AgentSessionID, RequestID: in.RequestID,
		LastTurnID: deref(in.LastTurnID), Prompt: deref(in.Prompt), CheckCommand: in.CheckCommand,
		CheckTimeout: time.Duration(deref(in.CheckTimeoutSeconds)) * time.Second}
	for _, b := range in.Branches {
		bi := explore.BranchInput{Name: b.Name, Prompt: deref(b.Prompt)}
		if b.Settings != nil {
			bi.Settings = *b.Settings
		}
		out.Branches = append(out.Branches, bi)
	}
	return out
}

// positive is n, or null when it is not positive.
func positive(n int) *int {
	if n <= 0 {
		return nil
	}
	return &n
}

// nonNil is s, or an empty list for nil.
func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// failures are the branches an action on several could not do, as the
// payloads list them.
func failures(fs []explore.BranchFailure) []*explore.BranchFailure {
	out := make([]*explore.BranchFailure, len(fs))
	for i := range fs {
		out[i] = &fs[i]
	}
	return out
}
