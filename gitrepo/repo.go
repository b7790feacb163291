package gitrepo

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
)

// Repo is one checkout (the main working tree or a linked worktree) of a
// git repository, as seen from a directory inside it.
type Repo struct {
	git *Git
	// Root is the top level of the working tree (git rev-parse --show-toplevel).
	Root string
	// GitDir is this working tree's git directory (its index and HEAD).
	GitDir string
	// CommonDir is the repository's shared directory (objects and refs); two
	// checkouts of one repository have the same CommonDir.
	CommonDir string
	// Prefix is the opened directory relative to Root, slash-separated,
	// "" at the top level.
	Prefix string
	// direct: checkpoint commits and refs may be written without git
	// (directwrites.go).
	direct direct
	// treeMismatch: a tree built in process differed from git's (a bug of
	// this package); trees are built by git from then on.
	treeMismatch atomic.Bool
	// excludesFile is the global excludes file git reads here ("" when
	// none can be named).
	excludesFile string
}

// Open finds the working tree that holds dir. A directory outside any
// working tree (or inside a .git directory, or a bare repository) is
// ErrNotARepository.
func (g *Git) Open(ctx context.Context, dir string) (*Repo, error) {
	if fi, err := os.Stat(dir); err != nil {
		return nil, fmt.Errorf("open %s: %w: %w", dir, ErrNotARepository, err)
	} else if !fi.IsDir() {
		return nil, fmt.Errorf("open %s: %w: not a directory", dir, ErrNotARepository)
	}
	out, err := g.run(ctx, call{dir: dir}, "rev-parse", "--path-format=absolute",
		"--show-toplevel", "--git-dir", "--git-common-dir", "--show-prefix")
	if err != nil {
		var ce *CommandError
		if errors.As(err, &ce) && (strings.Contains(ce.Stderr, "not a git repository") ||
			strings.Contains(ce.Stderr, "must be run in a work tree")) {
			return nil, fmt.Errorf("open %s: %w", dir, ErrNotARepository)
		}
		return nil, fmt.Errorf("open %s: %w", dir, err)
	}
	lines := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	if len(lines) < 3 || lines[0] == "" {
		// --show-toplevel prints nothing inside a .git directory.
		return nil, fmt.Errorf("open %s: %w", dir, ErrNotARepository)
	}
	prefix := ""
	if len(lines) > 3 {
		prefix = strings.TrimSuffix(lines[3], "/")
	}
	r := &Repo{
		git:       g,
		Root:      filepath.Clean(lines[0]),
		GitDir:    filepath.Clean(lines[1]),
		CommonDir: filepath.Clean(lines[2]),
		Prefix:    prefix,
	}
	r.direct, r.excludesFile = g.probeConfig(ctx, r.Root, r.CommonDir)
	return r, nil
}

// SameRepository reports whether r and o are checkouts of one repository.
func (r *Repo) SameRepository(o *Repo) bool {
	return sameFile(r.CommonDir, o.CommonDir)
}

func sameFile(a, b string) bool {
	fa, errA := os.Stat(a)
	fb, errB := os.Stat(b)
	if errA != nil || errB != nil {
		return a == b
	}
	return os.SameFile(fa, fb)
}

// run runs git in the working tree's top level.
func (r *Repo) run(ctx context.Context, env []string, args ...string) ([]byte, error) {
	return r.git.run(ctx, call{dir: r.Root, env: env}, args...)
}

// Head is the commit HEAD names, or "" when HEAD is unborn.
func (r *Repo) Head(ctx context.Context) (string, error) {
	out, err := r.run(ctx, nil, "rev-parse", "--verify", "--quiet", "HEAD^{commit}")
	if err != nil {
		if exitCode(err) == 1 {
			return "", nil
		}
		return "", fmt.Errorf("read HEAD: %w", err)
	}
	return strings.TrimSpace(string(out)), nil
}

// Branch is the branch HEAD is on (without refs/heads/), or "" when HEAD
// is detached.
func (r *Repo) Branch(ctx context.Context) (string, error) {
	out, err := r.run(ctx, nil, "symbolic-ref", "--quiet", "--short", "HEAD")
	if err != nil {
		if exitCode(err) == 1 {
			return "", nil
		}
		return "", fmt.Errorf("read branch: %w", err)
	}
	return strings.TrimSpace(string(out)), nil
}

// emptyTree is the id of the empty tree in this repository's hash.
func (r *Repo) emptyTree(ctx context.Context) (string, error) {
	out, err := r.git.run(ctx, call{dir: r.Root, stdin: strings.NewReader("")},
		"hash-object", "-t", "tree", "--stdin")
	if err != nil {
		return "", fmt.Errorf("empty tree id: %w", err)
	}
	return strings.TrimSpace(string(out)), nil
}

// OpenGitDir opens a repository by its (common) git directory, for its
// refs only (Refs, DeleteRefs): what a session deleted after its worktree
// went still has to drop. Root is the git directory; nothing that needs
// working files may be used on it.
func (g *Git) OpenGitDir(ctx context.Context, gitDir string) (*Repo, error) {
	if gitDir == "" {
		return nil, fmt.Errorf("open git directory: %w: none recorded", ErrNotARepository)
	}
	out, err := g.run(ctx, call{dir: gitDir}, "rev-parse", "--path-format=absolute", "--git-common-dir")
	if err != nil {
		return nil, fmt.Errorf("open git directory %s: %w: %w", gitDir, ErrNotARepository, err)
	}
	common := filepath.Clean(strings.TrimSpace(string(out)))
	return &Repo{git: g, Root: gitDir, GitDir: gitDir, CommonDir: common}, nil
}
