package gitrepo

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// ApplyResult is the outcome of Apply.
type ApplyResult struct {
	// Clean: the merge has no conflict (in a dry run too).
	Clean bool
	// Applied: the target's files were written (clean and not a dry run).
	Applied bool
	// Files lists what changes (or would change) in the target's files.
	Files []FileChange
	// Conflicts lists the paths the merge cannot settle, and the target's
	// files (ignored, or untracked and too large for a snapshot) that an
	// added file would overwrite.
	Conflicts []string
	// Source is the tree of the source's files that was merged: an apply
	// that brought it back makes it the new "nothing to lose" point.
	Source string
}

// Apply merges, three-way, the changes of the checkout from since base (a
// checkpoint commit: the source's code.base) into r's working files: base
// against the source's files now and r's files now. A clean merge is
// written to r's working files as uncommitted changes, all of it, with r's
// index, HEAD and refs untouched; with conflicts nothing is written. A dry
// run writes nothing.
func (r *Repo) Apply(ctx context.Context, from *Repo, base string, dryRun bool) (ApplyResult, error) {
	fail := func(err error) (ApplyResult, error) {
		return ApplyResult{}, fmt.Errorf("apply %s to %s: %w", from.Root, r.Root, err)
	}
	if !r.SameRepository(from) {
		return fail(ErrDifferentRepository)
	}
	baseCP, err := r.ReadCheckpoint(ctx, base)
	if err != nil {
		return fail(err)
	}
	source, err := from.Snapshot(ctx, SnapshotOptions{})
	if err != nil {
		return fail(err)
	}
	target, err := r.Snapshot(ctx, SnapshotOptions{})
	if err != nil {
		return fail(err)
	}
	res := ApplyResult{Source: source.Tree}
	merged, conflicts, err := r.mergeTrees(ctx, baseCP.Commit, target.Tree, source.Tree)
	if err != nil {
		return fail(err)
	}
	if len(conflicts) == 0 {
		d, err := r.Diff(ctx, target.Tree, merged)
		if err != nil {
			return fail(err)
		}
		res.Files = d.Files
		// A file the merge adds must not overwrite one the snapshot left
		// out (ignored, or untracked over the size limit).
		for _, f := range d.Files {
			if f.Status != Added {
				continue
			}
			if _, err := os.Lstat(filepath.Join(r.Root, filepath.FromSlash(f.Path))); err == nil {
				conflicts = append(conflicts, f.Path)
			}
		}
	}
	sort.Strings(conflicts)
	res.Conflicts = conflicts
	res.Clean = len(conflicts) == 0
	if !res.Clean || dryRun || merged == target.Tree {
		res.Applied = res.Clean && !dryRun
		return res, nil
	}
	// The files must still be those merged against.
	again, err := r.Snapshot(ctx, SnapshotOptions{})
	if err != nil {
		return fail(err)
	}
	if again.Tree != target.Tree {
		return fail(ErrTargetChanged)
	}
	if err := r.writeFiles(ctx, target.Tree, merged); err != nil {
		return fail(err)
	}
	res.Applied = true
	return res, nil
}

// mergeTrees merges ours and theirs, two trees descending from the commit
// base, with git merge-tree --write-tree. Git 2.38 has no --merge-base: two
// throwaway commits with base as their only parent make it the merge base.
// It returns the merged tree, or the conflicted paths.
func (r *Repo) mergeTrees(ctx context.Context, base, ours, theirs string) (string, []string, error) {
	opts := CheckpointOptions{Ref: "merge", Message: "tuttid apply"}
	o, err := r.commitTree(ctx, ours, base, opts)
	if err != nil {
		return "", nil, err
	}
	t, err := r.commitTree(ctx, theirs, base, opts)
	if err != nil {
		return "", nil, err
	}
	out, err := r.run(ctx, nil, "merge-tree", "--write-tree", "-z", "--name-only", "--no-messages", o, t)
	if err != nil && exitCode(err) != 1 {
		return "", nil, fmt.Errorf("merge: %w", err)
	}
	recs := splitZ(out)
	if len(recs) == 0 {
		return "", nil, fmt.Errorf("merge: %w: no tree in merge-tree output", ErrGit)
	}
	if err == nil {
		return recs[0], nil, nil
	}
	seen := map[string]bool{}
	var conflicts []string
	for _, p := range recs[1:] {
		if p == "" {
			break
		}
		if !seen[p] {
			seen[p] = true
			conflicts = append(conflicts, p)
		}
	}
	if len(conflicts) == 0 {
		return "", nil, fmt.Errorf("merge: %w: conflicts without paths", ErrGit)
	}
	return strings.TrimSpace(recs[0]), conflicts, nil
}
