// Package gitrepo is tuttid's git layer for code branches (the contract's
// "Code branches: a fork takes the code with it"): checkpoints of a
// session's files as commits reachable only from refs under refs/tuttid/,
// the diff of two checkpoints, linked worktrees made from a checkpoint
// (with the .worktreeinclude ignored files copied), their removal, and a
// three-way apply of one branch's changes to another checkout's working
// files.
//
// It shells out to the git binary (2.38 or newer: merge-tree --write-tree)
// with hooks and the fsmonitor hook off, no automatic gc, a fixed identity
// (tuttid <tuttid@localhost>) and an environment without GIT_* variables,
// and never writes the user's index, HEAD, branches, tags or stash: every
// index it builds is a temporary file (GIT_INDEX_FILE), seeded from a copy
// of the user's index so that only files changed since are hashed.
//
// The pieces:
//
//   - Git.Open finds the working tree of a directory (ErrNotARepository).
//   - Repo.Snapshot records the working files as a tree; Repo.Checkpoint
//     as a commit (first parent HEAD) under a ref (TurnRef, SessionRef),
//     reusing the previous checkpoint when nothing changed.
//   - Repo.Diff compares two checkpoints (files, line counts, a patch cut
//     at MaxPatchBytes); Repo.Changes compares the files now with a base.
//   - Repo.CreateWorktree makes a linked worktree from a checkpoint;
//     Repo.RemoveWorktree removes one, refusing unsaved changes when asked
//     (ChangesError); Repo.Worktrees lists them.
//   - Repo.Apply merges a worktree's changes since its base into another
//     checkout's working files, or reports the conflicts: all or nothing,
//     the files before kept under a ref (BeforeApplyRefPrefix), the merged
//     files staged whole then swapped in by renames, undone on failure
//     (ApplyError); Repo.SettleApply settles a write a crash cut short,
//     from the caller's journal (ApplyJournal).
//   - Repo.DeleteRefs drops a session's refs (SessionRefPrefix); git gc
//     then reclaims its checkpoints.
package gitrepo
