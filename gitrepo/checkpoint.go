package gitrepo

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
	"tuttid/gitfile"
)

// CheckpointOptions say where a checkpoint goes.
type CheckpointOptions struct {
	// Ref keeps the checkpoint alive; it must be under RefPrefix (TurnRef,
	// SessionRef). It is created or moved.
	Ref string
	// Previous is the session's previous checkpoint commit, if any: when
	// the files and HEAD are the same, Ref points at it and no object is
	// added.
	Previous string
	// PreviousTree and PreviousHead, when PreviousTree is set, are
	// Previous's tree and first parent as the caller remembers them: no
	// git call reads them again.
	PreviousTree, PreviousHead string
	// Message of the commit; a default names the ref.
	Message string
	// Time of the commit; now when zero.
	Time time.Time
	// Index: see SnapshotOptions.
	Index string
}

// Checkpoint is a recorded state of a checkout's files.
type Checkpoint struct {
	// Commit has the files as its tree and Head as its first parent (no
	// parent when HEAD was unborn).
	Commit string
	Tree   string
	// Head is the commit HEAD named then; "" when unborn.
	Head string
	// Reused: the files and HEAD were those of Previous, which Commit is.
	Reused bool
	// Skipped lists the untracked files left out for their size.
	Skipped []string
}

// Checkpoint records r's working files as a commit kept alive by opts.Ref
// only. The user's index, HEAD, branches, tags, stash and files are not
// touched.
func (r *Repo) Checkpoint(ctx context.Context, opts CheckpointOptions) (Checkpoint, error) {
	if err := checkRef(opts.Ref); err != nil {
		return Checkpoint{}, err
	}
	snap, err := r.Snapshot(ctx, SnapshotOptions{Index: opts.Index})
	if err != nil {
		return Checkpoint{}, err
	}
	cp := Checkpoint{Tree: snap.Tree, Head: snap.Head, Skipped: snap.Skipped}
	if opts.Previous != "" {
		prev := Checkpoint{Commit: opts.Previous, Tree: opts.PreviousTree, Head: opts.PreviousHead}
		if prev.Tree == "" {
			if prev, err = r.ReadCheckpoint(ctx, opts.Previous); err != nil {
				return Checkpoint{}, err
			}
		}
		if prev.Tree == snap.Tree && prev.Head == snap.Head {
			cp.Commit, cp.Reused = prev.Commit, true
		}
	}
	if cp.Commit == "" {
		cp.Commit, err = r.commitTree(ctx, snap.Tree, snap.Head, opts)
		if err != nil {
			return Checkpoint{}, err
		}
	}
	if err := r.setRef(ctx, opts.Ref, cp.Commit); err != nil {
		return Checkpoint{}, fmt.Errorf("checkpoint: set %s: %w", opts.Ref, err)
	}
	return cp, nil
}

// setRef points ref at commit: directly when the repository allows it
// (gitfile.WriteLooseRef), else with git update-ref.
func (r *Repo) setRef(ctx context.Context, ref, commit string) error {
	if r.direct.refs {
		err := gitfile.WriteLooseRef(r.CommonDir, ref, commit)
		if err == nil {
			return nil
		}
		if !errors.Is(err, gitfile.ErrRefBusy) {
			return err
		}
	}
	_, err := r.run(ctx, nil, "update-ref", ref, commit)
	return err
}

func (r *Repo) commitTree(ctx context.Context, tree, parent string, opts CheckpointOptions) (string, error) {
	msg := opts.Message
	if msg == "" {
		msg = "tuttid checkpoint " + opts.Ref
	}
	when := opts.Time
	if when.IsZero() {
		when = time.Now()
	}
	if r.direct.objects {
		id, err := gitfile.WriteLooseObject(r.CommonDir, "commit", gitfile.CommitBody(tree, parent, msg, when))
		if err == nil {
			return id, nil
		}
		// Whatever failed here, git reports it better.
	}
	date := fmt.Sprintf("@%d +0000", when.Unix())
	env := []string{"GIT_AUTHOR_DATE=" + date, "GIT_COMMITTER_DATE=" + date}
	args := []string{"commit-tree", tree, "-m", msg}
	if parent != "" {
		args = append(args, "-p", parent)
	}
	out, err := r.run(ctx, env, args...)
	if err != nil {
		return "", fmt.Errorf("checkpoint: commit: %w", err)
	}
	return strings.TrimSpace(string(out)), nil
}

// ReadCheckpoint reads a checkpoint commit (any commit-ish): its tree and
// first parent.
func (r *Repo) ReadCheckpoint(ctx context.Context, commitish string) (Checkpoint, error) {
	out, err := r.run(ctx, nil, "show", "-s", "--no-show-signature", "--format=%H%n%T%n%P", commitish+"^{commit}", "--")
	if err != nil {
		return Checkpoint{}, fmt.Errorf("read checkpoint %s: %w", commitish, err)
	}
	lines := strings.Split(strings.TrimRight(string(out), "\n"), "\n")
	if len(lines) < 2 {
		return Checkpoint{}, fmt.Errorf("read checkpoint %s: %w: unexpected output %q", commitish, ErrGit, out)
	}
	cp := Checkpoint{Commit: lines[0], Tree: lines[1]}
	if len(lines) > 2 {
		cp.Head, _, _ = strings.Cut(lines[2], " ")
	}
	return cp, nil
}
