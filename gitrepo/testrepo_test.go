package gitrepo

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
)

// Test support: real repositories made with the real git binary.

const gitBin = "/usr/bin/git"

func testGit(t *testing.T) *Git {
	t.Helper()
	if _, err := os.Stat(gitBin); err != nil {
		t.Skipf("no git at %s", gitBin)
	}
	return New(Config{Bin: gitBin})
}

// loggingGit is a Git whose binary is a wrapper that appends each call's
// arguments, a line each, to the file calls, then runs git.
func loggingGit(t *testing.T) (g *Git, calls string) {
	t.Helper()
	testGit(t)
	dir := t.TempDir()
	calls = filepath.Join(dir, "calls")
	bin := filepath.Join(dir, "git")
	if err := os.WriteFile(bin, []byte("#!/bin/sh\necho \"$*\" >> '"+calls+"'\nexec "+gitBin+" \"$@\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return New(Config{Bin: bin}), calls
}

// gitT runs git as a person would (hooks on), with GIT_OPTIONAL_LOCKS=0 so
// that the test's own reads never refresh the index it compares.
func gitT(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command(gitBin, args...)
	cmd.Dir = dir
	cmd.Env = append(cleanEnv(), "GIT_OPTIONAL_LOCKS=0",
		"GIT_AUTHOR_NAME=Person", "GIT_AUTHOR_EMAIL=person@example.com",
		"GIT_COMMITTER_NAME=Person", "GIT_COMMITTER_EMAIL=person@example.com")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s in %s: %v\n%s", strings.Join(args, " "), dir, err, out)
	}
	return strings.TrimRight(string(out), "\n")
}

func cleanEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "GIT_") {
			env = append(env, kv)
		}
	}
	return env
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// newRepo makes a repository with one commit on main: a.txt, dir/b.txt and
// a .gitignore that ignores *.log, .env and build/.
func newRepo(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "repo")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	gitT(t, dir, "init", "-q", "-b", "main")
	writeFile(t, filepath.Join(dir, "a.txt"), "a1\n")
	writeFile(t, filepath.Join(dir, "dir", "b.txt"), "b1\n")
	writeFile(t, filepath.Join(dir, ".gitignore"), "*.log\n.env\nbuild/\n")
	gitT(t, dir, "add", "-A")
	gitT(t, dir, "commit", "-q", "-m", "first")
	return dir
}

// installFailingHooks puts hooks that leave a marker and fail in the
// repository's hooks directory; hooksFired reports the markers.
func installFailingHooks(t *testing.T, repo string) {
	t.Helper()
	hooks := filepath.Join(gitT(t, repo, "rev-parse", "--path-format=absolute", "--git-common-dir"), "hooks")
	for _, name := range []string{"pre-commit", "commit-msg", "post-commit", "post-checkout",
		"reference-transaction", "pre-auto-gc", "post-index-change", "pre-merge-commit"} {
		script := "#!/bin/sh\ntouch \"" + filepath.Join(hooks, name+".fired") + "\"\nexit 1\n"
		if err := os.WriteFile(filepath.Join(hooks, name), []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
	}
}

func hooksFired(t *testing.T, repo string) []string {
	t.Helper()
	hooks := filepath.Join(gitT(t, repo, "rev-parse", "--path-format=absolute", "--git-common-dir"), "hooks")
	fired, _ := filepath.Glob(filepath.Join(hooks, "*.fired"))
	return fired
}

// userState is everything of the user's that tuttid must not change.
type userState struct {
	Head, Symbolic, Refs, Stash, Index, Status, Worktrees string
	IndexMtime                                            int64
	Files                                                 map[string]string
}

func captureState(t *testing.T, dir string) userState {
	t.Helper()
	var s userState
	s.Head, _ = runQuiet(dir, "rev-parse", "--verify", "-q", "HEAD^{commit}")
	s.Symbolic, _ = runQuiet(dir, "symbolic-ref", "-q", "HEAD")
	s.Refs = nonTuttidRefs(t, dir)
	s.Stash, _ = runQuiet(dir, "stash", "list")
	gitDir := gitT(t, dir, "rev-parse", "--path-format=absolute", "--git-dir")
	if b, err := os.ReadFile(filepath.Join(gitDir, "index")); err == nil {
		sum := sha256.Sum256(b)
		s.Index = hex.EncodeToString(sum[:])
		fi, _ := os.Stat(filepath.Join(gitDir, "index"))
		s.IndexMtime = fi.ModTime().UnixNano()
	}
	s.Status = gitT(t, dir, "status", "--porcelain=v1", "--untracked-files=all", "--ignored")
	s.Worktrees = gitT(t, dir, "worktree", "list", "--porcelain")
	s.Files = treeFiles(t, gitT(t, dir, "rev-parse", "--show-toplevel"))
	return s
}

func runQuiet(dir string, args ...string) (string, error) {
	cmd := exec.Command(gitBin, args...)
	cmd.Dir = dir
	cmd.Env = append(cleanEnv(), "GIT_OPTIONAL_LOCKS=0")
	out, err := cmd.Output()
	return strings.TrimRight(string(out), "\n"), err
}

// nonTuttidRefs lists every ref outside refs/tuttid/ with its value.
func nonTuttidRefs(t *testing.T, dir string) string {
	t.Helper()
	var keep []string
	for _, line := range strings.Split(gitT(t, dir, "for-each-ref", "--format=%(objectname) %(refname)"), "\n") {
		if !strings.Contains(line, " refs/tuttid/") {
			keep = append(keep, line)
		}
	}
	return strings.Join(keep, "\n")
}

// treeFiles maps each file under root (outside .git) to its content hash
// (symlinks to their target).
func treeFiles(t *testing.T, root string) map[string]string {
	t.Helper()
	files := map[string]string{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Name() == ".git" {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		rel, _ := filepath.Rel(root, path)
		switch {
		case d.Type()&fs.ModeSymlink != 0:
			target, _ := os.Readlink(path)
			files[rel] = "-> " + target
		case d.Type().IsRegular():
			b, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			sum := sha256.Sum256(b)
			files[rel] = hex.EncodeToString(sum[:8])
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// assertStateUnchanged compares the user's state with before, except the
// named parts.
func assertStateUnchanged(t *testing.T, before userState, dir string, except ...string) {
	t.Helper()
	after := captureState(t, dir)
	check := func(name, b, a string) {
		if b != a && !slices.Contains(except, name) {
			t.Errorf("%s changed:\nbefore: %s\nafter:  %s", name, b, a)
		}
	}
	check("HEAD", before.Head, after.Head)
	check("symbolic HEAD", before.Symbolic, after.Symbolic)
	check("refs outside refs/tuttid/", before.Refs, after.Refs)
	check("stash", before.Stash, after.Stash)
	check("index bytes", before.Index, after.Index)
	if before.IndexMtime != after.IndexMtime {
		t.Errorf("index mtime changed")
	}
	check("status", before.Status, after.Status)
	check("worktrees", before.Worktrees, after.Worktrees)
	check("files", mapString(before.Files), mapString(after.Files))
}

func mapString(m map[string]string) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k+"="+m[k])
	}
	sort.Strings(keys)
	return strings.Join(keys, "\n")
}

// commitFiles lists the files of a commit or tree.
func commitFiles(t *testing.T, dir, treeish string) []string {
	t.Helper()
	out := gitT(t, dir, "ls-tree", "-r", "--name-only", treeish)
	if out == "" {
		return nil
	}
	return strings.Split(out, "\n")
}

func openRepo(t *testing.T, g *Git, dir string) *Repo {
	t.Helper()
	r, err := g.Open(context.Background(), dir)
	if err != nil {
		t.Fatalf("open %s: %v", dir, err)
	}
	return r
}
