package gitrepo

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
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
	// added file would overwrite, or that stand where an added file's
	// directory goes.
	Conflicts []string
	// Source is the tree of the source's files that was merged: an apply
	// that brought it back makes it the new "nothing to lose" point.
	Source string
	// KeptRef keeps KeptCommit, the target's files before the apply, when
	// files were written.
	KeptRef, KeptCommit string
}

// ApplyOptions tune ApplyWith.
type ApplyOptions struct {
	// DryRun writes nothing.
	DryRun bool
	// KeepUnder is the ref namespace (under RefPrefix, ending in "/")
	// where the target's files before a write are kept: one ref per apply
	// (named by its ApplyWrite.ID), the newest KeptApplies kept.
	// BeforeApplyRefPrefix for a session; refs/tuttid/before-apply/ when
	// empty.
	KeepUnder string
	// Journal records the write (ApplyJournal); nil: none.
	Journal ApplyJournal
	// Step, when set, is asked before each file step of the write; its
	// error fails that step as the file system would. Tests fill the disk
	// at any step with it, or stop the process there.
	Step func(ApplyStep) error
}

// Apply is ApplyWith with no journal and the state kept under
// refs/tuttid/before-apply/.
func (r *Repo) Apply(ctx context.Context, from *Repo, base string, dryRun bool) (ApplyResult, error) {
	return r.ApplyWith(ctx, from, base, ApplyOptions{DryRun: dryRun})
}

// ApplyWith merges, three-way, the changes of the checkout from since base
// (a checkpoint commit: the source's code.base) into r's working files:
// base against the source's files now and r's files now. A clean merge is
// written to r's working files as uncommitted changes, all of it, with r's
// index, HEAD and refs untouched; with conflicts nothing is written. A dry
// run writes nothing.
//
// All or nothing, whatever happens: r's files before the write are kept
// under a ref (ApplyOptions.KeepUnder) first, the merged files staged
// whole, then swapped in by renames (writeApply). A write that fails is
// undone and answers an *ApplyError (ErrApplyWrite) naming the kept ref;
// one a crash cuts short is settled from the journal (SettleApply).
func (r *Repo) ApplyWith(ctx context.Context, from *Repo, base string, opts ApplyOptions) (ApplyResult, error) {
	fail := func(err error) (ApplyResult, error) {
		return ApplyResult{}, fmt.Errorf("apply %s to %s: %w", from.Root, r.Root, err)
	}
	if !r.SameRepository(from) {
		return fail(ErrDifferentRepository)
	}
	under := opts.KeepUnder
	if under == "" {
		under = defaultKeepUnder
	}
	if !strings.HasSuffix(under, "/") || checkRef(under+"x") != nil {
		return fail(fmt.Errorf("%w: keep refs under %q", ErrInvalidRef, under))
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
		conflicts = r.overwrites(d.Files)
	}
	sort.Strings(conflicts)
	res.Conflicts = conflicts
	res.Clean = len(conflicts) == 0
	if !res.Clean || opts.DryRun || merged == target.Tree {
		res.Applied = res.Clean && !opts.DryRun
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
	w, err := r.planWrite(ctx, again, merged, under)
	if err != nil {
		return fail(err)
	}
	err = r.writeApply(ctx, w, opts)
	if perr := r.pruneKept(context.WithoutCancel(ctx), under, KeptApplies); perr != nil {
		r.git.log.WarnContext(ctx, "git: old kept states of applies not pruned", "root", r.Root, "err", perr)
	}
	if err != nil {
		return fail(err)
	}
	res.Applied = true
	res.KeptRef, res.KeptCommit = w.KeptRef, w.KeptCommit
	return res, nil
}

// overwrites lists the files an apply must not touch that its changes
// would: an added file's path taken by a file the snapshot left out
// (ignored, or untracked over the size limit), or one of its directories
// taken by a file or symlink the apply does not move away (the file would
// be replaced by a directory, or written through the symlink).
func (r *Repo) overwrites(files []FileChange) []string {
	away := map[string]bool{}
	for _, f := range files {
		if f.Status != Added {
			away[f.Path] = true
		}
	}
	var out []string
	for _, f := range files {
		if f.Status != Added {
			continue
		}
		if _, err := os.Lstat(filepath.Join(r.Root, filepath.FromSlash(f.Path))); err == nil {
			out = append(out, f.Path)
			continue
		}
		parts := strings.Split(f.Path, "/")
		for i := 1; i < len(parts); i++ {
			dir := strings.Join(parts[:i], "/")
			fi, err := os.Lstat(filepath.Join(r.Root, filepath.FromSlash(dir)))
			if err != nil || away[dir] {
				break // nothing there (nor below), or moved away first
			}
			if !fi.IsDir() {
				out = append(out, f.Path)
				break
			}
		}
	}
	return out
}

// planWrite keeps the target's files before the write (before) under a
// new ref in under and lists what the write changes.
func (r *Repo) planWrite(ctx context.Context, before Snapshot, merged, under string) (ApplyWrite, error) {
	now := time.Now()
	id := newApplyID(now)
	w := ApplyWrite{ID: id, Root: r.Root, Staging: r.stagingDir(id), KeptRef: under + id, Merged: merged}
	var err error
	if w.Paths, err = r.changedPaths(ctx, before.Tree, merged); err != nil {
		return ApplyWrite{}, err
	}
	if w.KeptCommit, err = r.keepBefore(ctx, w.KeptRef, before, now); err != nil {
		return ApplyWrite{}, err
	}
	return w, nil
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
