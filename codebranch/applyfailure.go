package codebranch

import (
	"fmt"
	"strings"

	"tuttid/gitrepo"
)

// writeFailure is what the person is told of an apply whose write failed:
// whether the target's files are as they were, and where they are kept
// (the commit and its ref), with the git command that brings a file back.
// Paths are the repository's own, never the machine's.
func writeFailure(source, target string, e *gitrepo.ApplyError) string {
	why := "writing its files failed"
	if e.DiskFull {
		why = "the disk is full"
	}
	head := fmt.Sprintf("applying the changes of session %q to session %q failed: %s", source, target, why)
	if len(e.NotRestored) == 0 {
		return fmt.Sprintf("%s; nothing was changed, its files are as they were (also kept as commit %s, ref %s)",
			head, e.KeptCommit, e.KeptRef)
	}
	shown := e.NotRestored
	more := ""
	if len(shown) > 10 {
		shown, more = shown[:10], fmt.Sprintf(" and %d more", len(e.NotRestored)-10)
	}
	return fmt.Sprintf("%s, and %d of its files could not be put back (%s%s): they are kept as they were in commit %s (ref %s); "+
		"git restore --source=%s --worktree -- <path> brings one back, and tuttid tries again at its next start and before the next apply to it",
		head, len(e.NotRestored), strings.Join(shown, ", "), more, e.KeptCommit, e.KeptRef, e.KeptCommit)
}
