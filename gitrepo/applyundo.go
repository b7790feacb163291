package gitrepo

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"sort"
	"syscall"
)

// SettleApply finishes a write a crash cut short, from its journal's last
// state. staging or done: the staging directory is removed (the target's
// files were untouched, or all written and checked). swapping: the swap
// is undone. Undone rather than finished: the apply never answered, so
// nothing recorded it as applied (the source's applied commit, the
// branch's applied time), and the target's files going back to what the
// person had is the state every record agrees with; the person applies
// again. A write whose staging directory is gone was settled before (its
// removal is the last step of both). An *ApplyError names the paths that
// could not be put back; settling again tries again.
func (r *Repo) SettleApply(ctx context.Context, w ApplyWrite, state ApplyState) error {
	if _, err := os.Lstat(w.Staging); errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if state == ApplySwapping {
		if failed := r.undoApply(ctx, w, &stepper{}); len(failed) > 0 {
			return w.failed(errors.New("undo a write cut short"), failed, false)
		}
	}
	r.dropStaging(ctx, w)
	return nil
}

// undoApply puts the target's files of w back as they were, reading what
// is on disk, so that it may run again after a crash part way (or after
// itself): first each merged file moved in is removed (a path whose file
// was moved aside only while that file is still aside), with the
// directories left empty; then each file moved aside is moved back, and
// one that cannot be is written again from the kept commit. It answers
// the paths it could not put back.
func (r *Repo) undoApply(ctx context.Context, w ApplyWrite, st *stepper) []string {
	all := make([]string, len(w.Paths))
	for i, p := range w.Paths {
		all[i] = p.Path
	}
	root, err := os.OpenRoot(w.Root)
	if err != nil {
		r.git.log.ErrorContext(ctx, "git: undo an apply: the target is not there", "root", w.Root, "err", err)
		return all
	}
	defer root.Close()
	stage, err := os.OpenRoot(w.Staging)
	if err != nil {
		r.git.log.ErrorContext(ctx, "git: undo an apply: its staging directory is not there", "dir", w.Staging, "err", err)
		return all
	}
	defer stage.Close()
	var failed, fromKept []string
	for i := len(w.Paths) - 1; i >= 0; i-- {
		p := w.Paths[i]
		name := filepath.FromSlash(p.Path)
		if !p.New || there(stage, "new/"+p.Path) || (p.Old && !there(stage, "old/"+p.Path)) || !there(root, p.Path) {
			continue // not moved in, or already undone
		}
		err := st.step(StepUnplace, p.Path)
		if err == nil {
			err = root.Remove(name)
		}
		if err != nil {
			r.git.log.WarnContext(ctx, "git: undo an apply: a file written not removed", "path", p.Path, "err", err)
			if !p.Old {
				failed = append(failed, p.Path)
			}
			continue // a file moved aside there is written from the kept commit
		}
		removeEmptyParents(root, p.Path)
	}
	for _, p := range w.Paths {
		if !p.Old || !there(stage, "old/"+p.Path) {
			continue
		}
		err := st.step(StepRestore, p.Path)
		if err == nil {
			err = root.MkdirAll(filepath.Dir(filepath.FromSlash(p.Path)), 0o777)
		}
		if err == nil {
			err = move(stage, "old/"+p.Path, root, p.Path)
		}
		if err != nil {
			r.git.log.WarnContext(ctx, "git: undo an apply: a file not moved back", "path", p.Path, "err", err)
			fromKept = append(fromKept, p.Path)
		}
	}
	failed = append(failed, r.restoreFromKept(ctx, w, root, stage, fromKept, st)...)
	sort.Strings(failed)
	return failed
}

// restoreFromKept writes paths from the kept commit as the apply writes
// (staged whole, then moved in), over whatever file is there: the files
// whose move back failed. It answers those it could not write.
func (r *Repo) restoreFromKept(ctx context.Context, w ApplyWrite, root, stage *os.Root, paths []string, st *stepper) []string {
	if len(paths) == 0 {
		return nil
	}
	kept := filepath.Join(w.Staging, "kept")
	if err := os.RemoveAll(kept); err != nil {
		return paths
	}
	if err := r.checkoutTo(ctx, w.KeptCommit, paths, kept+string(filepath.Separator)); err != nil {
		r.git.log.ErrorContext(ctx, "git: undo an apply: the kept files not staged", "kept_commit", w.KeptCommit, "err", err)
		return paths
	}
	var failed []string
	for _, p := range paths {
		name := filepath.FromSlash(p)
		err := st.step(StepFromKept, p)
		if err == nil {
			if fi, lerr := root.Lstat(name); lerr == nil && !fi.IsDir() {
				err = root.Remove(name)
			}
		}
		if err == nil {
			err = root.MkdirAll(filepath.Dir(name), 0o777)
		}
		if err == nil {
			err = move(stage, "kept/"+p, root, p)
		}
		if err != nil {
			r.git.log.ErrorContext(ctx, "git: undo an apply: a file not written from the kept commit", "path", p, "err", err)
			failed = append(failed, p)
		}
	}
	return failed
}

// there reports whether name (a slash path) is in root (a file on its
// way means it is not); any other error counts as there: on a doubt,
// nothing is removed.
func there(root *os.Root, name string) bool {
	_, err := root.Lstat(filepath.FromSlash(name))
	return !errors.Is(err, os.ErrNotExist) && !errors.Is(err, syscall.ENOTDIR)
}
