package gitrepo

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
)

// stagingDir is where write id of an apply to r waits: in r's git
// directory (git and snapshots never look there) when that is on the file
// system of r's top level, else in the top level itself: a rename must not
// cross file systems to be atomic.
func (r *Repo) stagingDir(id string) string {
	if sameDevice(r.GitDir, r.Root) {
		return filepath.Join(r.GitDir, "tuttid-apply", id)
	}
	return filepath.Join(r.Root, ".tuttid-apply-"+id)
}

// stage is the write's first phase, the one a full disk fails: every
// merged file written whole to w.Staging/new, and w.Staging/old's
// directories made for the files moved aside later. The target's files
// are not touched. It answers each staged file's identity, which the swap
// checks once the files are in.
func (r *Repo) stage(ctx context.Context, w ApplyWrite, st *stepper) (map[string]os.FileInfo, error) {
	newDir := filepath.Join(w.Staging, "new")
	if err := os.MkdirAll(newDir, 0o700); err != nil {
		return nil, err
	}
	var write []string
	for _, p := range w.Paths {
		if p.New {
			write = append(write, p.Path)
		}
		if p.Old {
			dir := filepath.Dir(filepath.Join(w.Staging, "old", filepath.FromSlash(p.Path)))
			if err := os.MkdirAll(dir, 0o700); err != nil {
				return nil, err
			}
		}
	}
	if len(write) > 0 {
		if err := r.checkoutTo(ctx, w.Merged, write, newDir+string(filepath.Separator)); err != nil {
			return nil, fmt.Errorf("stage the merged files: %w", err)
		}
	}
	if err := st.step(StepStage, ""); err != nil {
		return nil, err
	}
	staged := make(map[string]os.FileInfo, len(write))
	for _, p := range write {
		fi, err := os.Lstat(filepath.Join(newDir, filepath.FromSlash(p)))
		if err != nil {
			return nil, fmt.Errorf("stage the merged files: %w", err)
		}
		staged[p] = fi
	}
	return staged, nil
}

// dropStaging removes w's staging directory; the git directory's
// tuttid-apply stays (another apply may be making its own there). A
// failure is only logged: what is left there is tuttid's, never the
// person's.
func (r *Repo) dropStaging(ctx context.Context, w ApplyWrite) {
	if err := os.RemoveAll(w.Staging); err != nil {
		r.git.log.WarnContext(ctx, "git: an apply's staging directory not removed", "dir", w.Staging, "err", err)
	}
}

// stepper numbers an apply's file steps and asks ApplyOptions.Step of
// each (nil: nothing asked).
type stepper struct {
	hook func(ApplyStep) error
	n    int
}

func (s *stepper) step(op StepOp, path string) error {
	s.n++
	if s.hook == nil {
		return nil
	}
	return s.hook(ApplyStep{Op: op, Path: path, N: s.n})
}
