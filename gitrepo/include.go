package gitrepo

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// IncludeFile names, in gitignore syntax, the ignored files a new worktree
// gets copies of (.env and the like); it is read at the repository root.
const IncludeFile = ".worktreeinclude"

// copyIncluded copies into dest the files of r's working tree that git
// ignores and IncludeFile matches, as they are now. A match that is a
// symlink leading out of the repository fails the whole copy
// (ErrUnsafeInclude); files dest already has are left as they are.
func (r *Repo) copyIncluded(ctx context.Context, dest string) ([]string, error) {
	inc := filepath.Join(r.Root, IncludeFile)
	fi, err := os.Lstat(inc)
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%w: %s is not a regular file", ErrUnsafeInclude, IncludeFile)
	}
	// Untracked files that the include patterns match...
	out, err := r.run(ctx, nil, "ls-files", "-z", "--others", "--ignored", "--exclude-from="+inc)
	if err != nil {
		return nil, fmt.Errorf("list %s matches: %w", IncludeFile, err)
	}
	candidates := splitZ(out)
	if len(candidates) == 0 {
		return nil, nil
	}
	// ...that git ignores (the others are in the checkpoint already).
	in := strings.Join(candidates, "\x00") + "\x00"
	out, err = r.git.run(ctx, call{dir: r.Root, stdin: strings.NewReader(in)}, "check-ignore", "-z", "--stdin")
	if err != nil && exitCode(err) != 1 { // 1: none ignored
		return nil, fmt.Errorf("check ignored %s matches: %w", IncludeFile, err)
	}
	paths := splitZ(out)
	if len(paths) == 0 {
		return nil, nil
	}
	realRoot, err := filepath.EvalSymlinks(r.Root)
	if err != nil {
		return nil, err
	}
	for _, p := range paths {
		if err := checkIncluded(realRoot, r.Root, p); err != nil {
			return nil, err
		}
	}
	src, err := os.OpenRoot(r.Root)
	if err != nil {
		return nil, err
	}
	defer src.Close()
	dst, err := os.OpenRoot(dest)
	if err != nil {
		return nil, err
	}
	defer dst.Close()
	var copied []string
	for _, p := range paths {
		ok, err := copyOne(src, dst, filepath.FromSlash(p))
		if err != nil {
			return nil, fmt.Errorf("copy %s: %w", p, err)
		}
		if ok {
			copied = append(copied, p)
		}
	}
	return copied, nil
}

// checkIncluded refuses a symlink whose target is outside the repository.
func checkIncluded(realRoot, root, path string) error {
	full := filepath.Join(root, filepath.FromSlash(path))
	fi, err := os.Lstat(full)
	if err != nil || fi.Mode()&os.ModeSymlink == 0 {
		return nil
	}
	target, err := filepath.EvalSymlinks(full)
	if err != nil {
		return fmt.Errorf("%w: %s: symlink to nothing: %w", ErrUnsafeInclude, path, err)
	}
	if rel, err := filepath.Rel(realRoot, target); err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return fmt.Errorf("%w: %s links outside the repository", ErrUnsafeInclude, path)
	}
	return nil
}

// copyOne copies one regular file or symlink from src to dst (both roots:
// no write can land outside the worktree through a symlinked directory).
// It reports false when dst has the path already or it is neither.
func copyOne(src, dst *os.Root, path string) (bool, error) {
	fi, err := src.Lstat(path)
	if err != nil {
		return false, err
	}
	if _, err := dst.Lstat(path); err == nil {
		return false, nil
	}
	if err := dst.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return false, err
	}
	switch {
	case fi.Mode()&os.ModeSymlink != 0:
		target, err := src.Readlink(path)
		if err != nil {
			return false, err
		}
		return true, dst.Symlink(target, path)
	case fi.Mode().IsRegular():
		in, err := src.Open(path)
		if err != nil {
			return false, err
		}
		defer in.Close()
		out, err := dst.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, fi.Mode().Perm())
		if err != nil {
			return false, err
		}
		if err := copyInto(out, in); err != nil {
			return false, err
		}
		// The umask must not widen or narrow a 0600 .env.
		return true, dst.Chmod(path, fi.Mode().Perm())
	}
	return false, nil
}

// copyInto copies in to out and closes out, on every path: a failed close
// (a full disk) is a failed copy.
func copyInto(out *os.File, in io.Reader) error {
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
