package gitrepo

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// ErrGitTooOld: the git binary is older than MinGitMajor.MinGitMinor.
var ErrGitTooOld = errors.New("git is too old")

// The oldest git this package works with: merge-tree --write-tree (Apply)
// came in 2.38.
const (
	MinGitMajor = 2
	MinGitMinor = 38
)

// CheckVersion reports the git version, and ErrGitTooOld when it is older
// than MinGitMajor.MinGitMinor; a server checks it once at start.
func (g *Git) CheckVersion(ctx context.Context) (string, error) {
	out, err := g.run(ctx, call{}, "version")
	if err != nil {
		return "", fmt.Errorf("git version: %w", err)
	}
	v := strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(string(out)), "git version "))
	major, minor, ok := parseVersion(v)
	if !ok {
		return v, fmt.Errorf("git version %q: %w: unreadable", v, ErrGitTooOld)
	}
	if major < MinGitMajor || (major == MinGitMajor && minor < MinGitMinor) {
		return v, fmt.Errorf("git %s: %w (need %d.%d or newer)", v, ErrGitTooOld, MinGitMajor, MinGitMinor)
	}
	return v, nil
}

// parseVersion reads "2.39.5" or "2.45.1.windows.1" or "2.39.5 (Apple Git-154)".
func parseVersion(v string) (int, int, bool) {
	f := strings.SplitN(strings.Fields(v + " ")[0], ".", 3)
	if len(f) < 2 {
		return 0, 0, false
	}
	major, err1 := strconv.Atoi(f[0])
	minor, err2 := strconv.Atoi(f[1])
	return major, minor, err1 == nil && err2 == nil
}
