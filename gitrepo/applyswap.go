package gitrepo

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// writeApply writes w into the target's files, all or nothing. Phase one
// stages every merged file whole (stage: where a full disk strikes; on
// failure the staging goes and nothing of the target's was touched).
// Phase two swaps by renames (swap); on failure the swap is undone
// (undoApply). The journal hears of each phase before it starts, so that a
// crash is settled at the next start (SettleApply). No cleanup here is
// deferred: a process killed part way leaves what the journal says.
func (r *Repo) writeApply(ctx context.Context, w ApplyWrite, opts ApplyOptions) error {
	j := opts.Journal
	if j == nil {
		j = noJournal{}
	}
	st := &stepper{hook: opts.Step}
	if err := j.Record(ctx, w, ApplyStaging); err != nil {
		return w.failed(fmt.Errorf("journal: %w", err), nil, false)
	}
	staged, err := r.stage(ctx, w, st)
	if err != nil {
		// Before the staged files go and their room comes back.
		full := nearlyFull(r.Root)
		r.dropStaging(ctx, w)
		r.forget(ctx, j, w)
		return w.failed(err, nil, full)
	}
	// From here the swap runs to its end (or its undo) whatever becomes of
	// the request: stopping half way would only leave more to undo.
	ctx = context.WithoutCancel(ctx)
	if err := j.Record(ctx, w, ApplySwapping); err != nil {
		r.dropStaging(ctx, w)
		r.forget(ctx, j, w)
		return w.failed(fmt.Errorf("journal: %w", err), nil, false)
	}
	err = r.swap(w, st, staged)
	if err == nil {
		if jerr := j.Record(ctx, w, ApplyDone); jerr != nil {
			// Not recorded done, a crash would undo it: undo it now.
			err = fmt.Errorf("journal: %w", jerr)
		}
	}
	if err != nil {
		notRestored := r.undoApply(ctx, w, st)
		if len(notRestored) == 0 {
			r.dropStaging(ctx, w)
			r.forget(ctx, j, w)
		} else {
			r.git.log.ErrorContext(ctx, "git: an apply that failed could not be undone; the next start tries again",
				"root", w.Root, "kept_ref", w.KeptRef, "kept_commit", w.KeptCommit, "paths", len(notRestored), "err", err)
		}
		return w.failed(err, notRestored, false)
	}
	r.dropStaging(ctx, w)
	r.forget(ctx, j, w)
	return nil
}

// swap is the write's second phase: each of the target's files the apply
// replaces or deletes moved aside into the staging directory, then each
// staged file moved in, never over a file (a file moved aside may leave
// room for a directory), then the directories deleted files left empty
// removed, as git does. Renames only: no file is ever half written, and
// moving back needs no room. Last, each path is checked to hold the file
// staged for it. (A directory cannot give way to a file: the merge calls
// that a conflict, see overwrites.)
func (r *Repo) swap(w ApplyWrite, st *stepper, staged map[string]os.FileInfo) error {
	root, err := os.OpenRoot(w.Root)
	if err != nil {
		return err
	}
	defer root.Close()
	stage, err := os.OpenRoot(w.Staging)
	if err != nil {
		return err
	}
	defer stage.Close()
	for _, p := range w.Paths {
		if !p.Old {
			continue
		}
		if err := st.step(StepAside, p.Path); err != nil {
			return err
		}
		if err := move(root, p.Path, stage, "old/"+p.Path); err != nil {
			return fmt.Errorf("move %s aside: %w", p.Path, err)
		}
	}
	for _, p := range w.Paths {
		if !p.New {
			continue
		}
		if err := st.step(StepPlace, p.Path); err != nil {
			return err
		}
		if err := root.MkdirAll(filepath.Dir(filepath.FromSlash(p.Path)), 0o777); err != nil {
			return fmt.Errorf("write %s: %w", p.Path, err)
		}
		if err := move(stage, "new/"+p.Path, root, p.Path); err != nil {
			return fmt.Errorf("write %s: %w", p.Path, err)
		}
	}
	for _, p := range w.Paths {
		if p.Old && !p.New {
			removeEmptyParents(root, p.Path)
		}
	}
	if err := st.step(StepCheck, ""); err != nil {
		return err
	}
	for _, p := range w.Paths {
		if !p.New {
			continue
		}
		fi, err := root.Lstat(filepath.FromSlash(p.Path))
		if err != nil {
			return fmt.Errorf("check %s: %w", p.Path, err)
		}
		if !os.SameFile(fi, staged[p.Path]) {
			return fmt.Errorf("check %s: %w", p.Path, errReplaced)
		}
	}
	return nil
}

var errReplaced = errors.New("not the file written: something replaced it")

// move renames from (a slash path in one root) to to (in another, or the
// same), never over an existing file. Each root resolves its directories:
// no symlink leads out of it.
func move(fromRoot *os.Root, from string, toRoot *os.Root, to string) error {
	from, to = filepath.FromSlash(from), filepath.FromSlash(to)
	fd, err := fromRoot.Open(filepath.Dir(from))
	if err != nil {
		return err
	}
	defer fd.Close()
	td, err := toRoot.Open(filepath.Dir(to))
	if err != nil {
		return err
	}
	defer td.Close()
	return renameNoReplace(fd, filepath.Base(from), td, filepath.Base(to))
}

// failed is the *ApplyError of w for err.
func (w ApplyWrite) failed(err error, notRestored []string, full bool) error {
	return &ApplyError{KeptRef: w.KeptRef, KeptCommit: w.KeptCommit, NotRestored: notRestored,
		DiskFull: full || diskFull(err), Err: err}
}

// forget drops w from the journal, even for a request gone meanwhile (a
// canceled staging): a row left would only be settled again later.
func (r *Repo) forget(ctx context.Context, j ApplyJournal, w ApplyWrite) {
	if err := j.Forget(context.WithoutCancel(ctx), w); err != nil {
		r.git.log.WarnContext(ctx, "git: an apply's journal entry not removed", "root", w.Root, "err", err)
	}
}

// noJournal records nothing: an apply without a journal is still all or
// nothing while the process lives.
type noJournal struct{}

func (noJournal) Record(context.Context, ApplyWrite, ApplyState) error { return nil }
func (noJournal) Forget(context.Context, ApplyWrite) error             { return nil }
