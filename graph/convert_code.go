package graph

import (
	"errors"

	"tuttid/apperr"
	"tuttid/codebranch"
	"tuttid/gitrepo"
	"tuttid/graph/model"
)

// The code fields' values: gitrepo's and codebranch's types as the
// schema's.

func codeCheckpoint(cp *codebranch.Checkpoint) *model.CodeCheckpoint {
	if cp == nil || cp.Commit == "" {
		return nil
	}
	return &model.CodeCheckpoint{Commit: cp.Commit, Head: cp.Head, CreatedAt: cp.At}
}

func codeDiff(d gitrepo.Diff) *model.CodeDiff {
	return &model.CodeDiff{Files: fileChanges(d.Files), Patch: d.Patch, Truncated: d.Truncated}
}

func fileChanges(fs []gitrepo.FileChange) []*model.FileChange {
	out := make([]*model.FileChange, len(fs))
	for i, f := range fs {
		out[i] = &model.FileChange{Path: f.Path, Status: model.FileChangeStatus(f.Status),
			Additions: f.Additions, Deletions: f.Deletions}
	}
	return out
}

// codeReadError is a failed read of a session's code as the client sees
// it: a code the service gave (a session deleted meanwhile is
// agent.session_not_found) is kept; anything else is internal, what in
// the message.
func codeReadError(err error, format string, args ...any) error {
	if ae := (*apperr.Error)(nil); errors.As(err, &ae) {
		return err
	}
	return apperr.Wrap(err, apperr.Internal, format, args...)
}
