// Package codebranch is tuttid's git layer for code branches (the contract's
// "Code branches: a fork takes the code with it"): checkpoints of a session's
// files as commits reachable only from refs under refs/tuttid/, the diff of
// two checkpoints, linked worktrees made from a checkpoint (with the
// .worktreeinclude ignored files copied), their removal, and a three-way
// apply of one branch's changes to another checkout's working files.
//
// It shells out to the git binary (2.38 or newer: merge-tree --write-tree)
// with hooks off, a fixed identity and an environment without GIT_*
// variables, and never writes the user's index, HEAD, branches, tags or
// stash: every index it builds is a temporary file (GIT_INDEX_FILE).
package codebranch
