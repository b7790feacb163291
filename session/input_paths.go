package session

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"tuttid/apperr"
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
	if rel, err := filepath.Rel(realRoot, real); err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return "", apperr.New(apperr.InvalidInput, "cwd %q is outside the workspace root %q", cwd, root)
	}
	return real, nil
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
