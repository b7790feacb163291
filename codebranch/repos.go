package codebranch

import (
	"context"
	"os"

	"tuttid/gitrepo"
)

// Every repository code branches use is opened here (repo), and each is
// remembered: a directory's repository does not change under a session,
// and rev-parse would cost a git process per turn end otherwise.

// repoAt says where to open a repository: dir, a checkout's directory (or
// one inside it), and gitDir, the repository's shared git directory, which
// outlives its worktrees (enough for reads of commits and refs). With
// both, the checkout serves while it is there and belongs to gitDir, the
// git directory otherwise.
type repoAt struct {
	dir, gitDir string
}

// repo opens the repository at at, remembering it.
func (s *Service) repo(ctx context.Context, at repoAt) (*gitrepo.Repo, error) {
	if at.dir == "" {
		return s.openGitDir(ctx, at.gitDir)
	}
	r, err := s.openCheckout(ctx, at.dir)
	if at.gitDir == "" {
		return r, err
	}
	if err == nil && r.CommonDir == at.gitDir {
		return r, nil
	}
	return s.openGitDir(ctx, at.gitDir)
}

// openCheckout opens the checkout holding dir.
func (s *Service) openCheckout(ctx context.Context, dir string) (*gitrepo.Repo, error) {
	s.mu.Lock()
	r, ok := s.repos[dir]
	s.mu.Unlock()
	if ok {
		// A remembered checkout may have gone since (an archived or
		// deleted worktree): git would fail to chdir there.
		if _, err := os.Stat(dir); err == nil {
			return r, nil
		}
	}
	r, err := s.git.Open(ctx, dir)
	s.mu.Lock()
	defer s.mu.Unlock()
	if err != nil {
		delete(s.repos, dir)
		return nil, err
	}
	s.repos[dir] = r
	return r, nil
}

// openGitDir opens a repository at its shared git directory.
func (s *Service) openGitDir(ctx context.Context, gitDir string) (*gitrepo.Repo, error) {
	s.mu.Lock()
	r, ok := s.gitDirs[gitDir]
	s.mu.Unlock()
	if ok {
		return r, nil
	}
	r, err := s.git.OpenGitDir(ctx, gitDir)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	s.gitDirs[gitDir] = r
	s.mu.Unlock()
	return r, nil
}
