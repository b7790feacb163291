package session

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"tuttid/apperr"
	"tuttid/ent"
	"tuttid/validate"
)

// ResolveRoot checks a workspace root: an absolute path of an existing
// directory. It returns the path with symlinks resolved, as stored.
// Messages name the path as the client gave it, never what it resolves to.
func ResolveRoot(root string) (string, error) {
	if err := validate.Path("rootPath", root); err != nil {
		return "", err
	}
	real, err := resolveDir("rootPath", root, root)
	if err != nil {
		return "", err
	}
	// The agent's sandbox writes inside the root: the whole file system
	// is no workspace.
	if filepath.Dir(real) == real {
		return "", apperr.New(apperr.InvalidInput, "rootPath %q is the file system's root; choose a project's directory", root)
	}
	return real, nil
}

// ResolveCwd checks a session's working directory against its workspace's
// root: "" is the root; a relative cwd is taken from the root; it must be
// an existing directory inside the root once symlinks are resolved (a
// symlink out of the root is refused). It returns the resolved path.
func ResolveCwd(root, cwd string) (string, error) {
	realRoot, err := resolveDir("the workspace's rootPath", root, root)
	if err != nil {
		return "", err
	}
	if cwd == "" {
		return realRoot, nil
	}
	if err := validate.Text("cwd", cwd, validate.MaxPathLen); err != nil {
		return "", err
	}
	p := cwd
	if !filepath.IsAbs(p) {
		p = filepath.Join(realRoot, p)
	}
	real, err := resolveDir("cwd", cwd, p)
	if err != nil {
		return "", err
	}
	if !inside(realRoot, real) {
		return "", apperr.New(apperr.InvalidInput, "cwd %q is outside the workspace root %q", cwd, root)
	}
	return real, nil
}

// CheckCwd re-checks a stored cwd where it is used (a turn's start, a
// fork): a directory inside the root may have been replaced by a symlink
// to outside since the session was made. The stored root was resolved
// when the workspace was made, so it must still resolve to itself (not be
// re-resolved to wherever a symlink on its path now leads), and the cwd's
// real path must lie inside it. It returns the cwd's real path, which is
// what Codex is given.
func CheckCwd(root, cwd string) (string, error) {
	realRoot, err := resolveDir("the workspace's rootPath", root, root)
	if err != nil {
		return "", err
	}
	if realRoot != filepath.Clean(root) {
		return "", apperr.New(apperr.InvalidInput,
			"the workspace root %q no longer resolves to itself (a symlink now stands on its path); restore the directory", root)
	}
	if !filepath.IsAbs(cwd) {
		return "", apperr.New(apperr.InvalidInput, "the session's cwd %q is not an absolute path", cwd)
	}
	real, err := resolveDir("cwd", cwd, cwd)
	if err != nil {
		return "", err
	}
	if !inside(root, real) {
		return "", apperr.New(apperr.InvalidInput,
			"the session's cwd %q now leads outside the workspace root %q (a symlink on its path); restore the directory", cwd, root)
	}
	return real, nil
}

// SessionCwd is CheckCwd of a session's stored cwd against its
// workspace's stored root.
func (s *Service) SessionCwd(ctx context.Context, a *ent.AgentSession) (string, error) {
	w, err := s.store.Client.Workspace.Get(ctx, a.WorkspaceID)
	if ent.IsNotFound(err) {
		return "", apperr.New(apperr.WorkspaceNotFound, "workspace %q does not exist", a.WorkspaceID)
	}
	if err != nil {
		return "", apperr.Storage(err, "read the session's workspace")
	}
	root, err := s.worktreeRoot(ctx, a)
	if err != nil {
		return "", err
	}
	if root == "" {
		root = w.RootPath
	}
	return CheckCwd(root, a.Cwd)
}

// inside says whether the real path p is the real root or below it.
func inside(root, p string) bool {
	rel, err := filepath.Rel(root, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// resolveDir resolves p's symlinks and checks it is a directory; errors
// name shown (what the client sent).
func resolveDir(what, shown, p string) (string, error) {
	real, err := filepath.EvalSymlinks(p)
	if err == nil {
		var fi os.FileInfo
		if fi, err = os.Stat(real); err == nil && !fi.IsDir() {
			return "", apperr.New(apperr.InvalidInput, "%s %q is not a directory", what, shown)
		}
	}
	switch {
	case err == nil:
		return real, nil
	case errors.Is(err, fs.ErrNotExist):
		return "", apperr.New(apperr.InvalidInput, "%s %q does not exist", what, shown)
	case errors.Is(err, fs.ErrPermission):
		return "", apperr.New(apperr.InvalidInput, "%s %q cannot be read by tuttid", what, shown)
	default:
		// ENOTDIR (a file on the way), a symlink loop...: the cause goes
		// only into the chain, for logs.
		return "", apperr.Wrap(err, apperr.InvalidInput, "%s %q is not a usable directory", what, shown)
	}
}
