package gitrepo

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// excludesStamp identifies the state of the ignore files outside the
// working tree (info/exclude of the worktree and of the repository, and
// the person's global excludes file): a kept snapshot asks git which of
// its untracked files are ignored now only when this or a .gitignore
// changed.
func (r *Repo) excludesStamp() string {
	var b strings.Builder
	for _, p := range []string{
		filepath.Join(r.GitDir, "info", "exclude"),
		filepath.Join(r.CommonDir, "info", "exclude"),
		r.excludesFile,
	} {
		if p == "" {
			continue
		}
		if fi, err := os.Stat(p); err == nil {
			fmt.Fprintf(&b, "%s %d %d\n", p, fi.Size(), fi.ModTime().UnixNano())
		} else {
			fmt.Fprintf(&b, "%s -\n", p)
		}
	}
	return b.String()
}

// globalExcludes is the file git reads as core.excludesFile: the value
// configured ("~/" is the home directory), else $XDG_CONFIG_HOME/git/ignore
// or ~/.config/git/ignore.
func globalExcludes(configured string, env []string) string {
	return globalFile(configured, "ignore", env)
}

// globalFile is the person's git file of one kind ("ignore",
// "attributes"): the path configured for it, else the one git looks for
// under $XDG_CONFIG_HOME/git or ~/.config/git.
func globalFile(configured, name string, env []string) string {
	get := func(name string) string {
		for i := len(env) - 1; i >= 0; i-- {
			if v, ok := strings.CutPrefix(env[i], name+"="); ok {
				return v
			}
		}
		return ""
	}
	home := get("HOME")
	switch {
	case configured != "":
		if rest, ok := strings.CutPrefix(configured, "~/"); ok && home != "" {
			return filepath.Join(home, rest)
		}
		return configured
	case get("XDG_CONFIG_HOME") != "":
		return filepath.Join(get("XDG_CONFIG_HOME"), "git", name)
	case home != "":
		return filepath.Join(home, ".config", "git", name)
	}
	return ""
}
