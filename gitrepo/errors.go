package gitrepo

import (
	"errors"
	"fmt"
	"strings"
)

// Sentinels for the contract's error codes and for bad input; callers map
// them with errors.Is.
var (
	// ErrNotARepository: the directory is not inside a git working tree
	// (agent.fork_not_a_repository).
	ErrNotARepository = errors.New("not a git repository")
	// ErrNoCommit: the repository's HEAD is unborn, so there is no commit to
	// check a worktree out at.
	ErrNoCommit = errors.New("repository has no commit")
	// ErrInvalidBranch: git check-ref-format refuses the branch name.
	ErrInvalidBranch = errors.New("invalid branch name")
	// ErrBranchExists: a new branch was asked for under a name already taken.
	ErrBranchExists = errors.New("branch already exists")
	// ErrInvalidRef: a checkpoint ref outside refs/tuttid/ or refused by git.
	ErrInvalidRef = errors.New("invalid checkpoint ref")
	// ErrDestinationExists: the worktree's destination is already there.
	ErrDestinationExists = errors.New("worktree destination exists")
	// ErrUnsafeInclude: a .worktreeinclude match that is a symlink leading
	// out of the repository, or a .worktreeinclude that is itself a symlink.
	ErrUnsafeInclude = errors.New("unsafe .worktreeinclude entry")
	// ErrNotAWorktree: the path is not a linked worktree of the repository.
	ErrNotAWorktree = errors.New("not a linked worktree of the repository")
	// ErrHasChanges: the worktree's files differ from the tree they were
	// required to match (agent.session_has_changes); see *ChangesError.
	ErrHasChanges = errors.New("worktree has changes")
	// ErrDifferentRepository: two checkouts that do not share one
	// repository (object store and refs).
	ErrDifferentRepository = errors.New("checkouts are in different repositories")
	// ErrInvalidInput: an option that makes no sense (a relative path, two
	// branches).
	ErrInvalidInput = errors.New("invalid input")
	// ErrTargetChanged: the target's files changed while an apply was
	// being worked out; nothing was written, and trying again is safe.
	ErrTargetChanged = errors.New("target files changed during the apply")
	// ErrGit: a git command failed; see *CommandError.
	ErrGit = errors.New("git failed")
)

// CommandError is a failed git command: its arguments, exit code and
// standard error. It matches ErrGit.
type CommandError struct {
	Args     []string
	ExitCode int
	Stderr   string
	Err      error
}

func (e *CommandError) Error() string {
	msg := strings.TrimSpace(e.Stderr)
	if msg == "" && e.Err != nil {
		msg = e.Err.Error()
	}
	return fmt.Sprintf("git %s: exit %d: %s", strings.Join(e.Args, " "), e.ExitCode, msg)
}

func (e *CommandError) Is(target error) bool { return target == ErrGit }

func (e *CommandError) Unwrap() error { return e.Err }

// ChangesError names the files that hold changes; it matches ErrHasChanges.
type ChangesError struct {
	Paths []string
}

func (e *ChangesError) Error() string {
	const shown = 20
	paths := e.Paths
	more := ""
	if len(paths) > shown {
		more = fmt.Sprintf(" and %d more", len(paths)-shown)
		paths = paths[:shown]
	}
	return fmt.Sprintf("worktree has changes in %s%s", strings.Join(paths, ", "), more)
}

func (e *ChangesError) Is(target error) bool { return target == ErrHasChanges }
