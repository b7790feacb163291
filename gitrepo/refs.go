package gitrepo

import (
	"context"
	"fmt"
	"strings"
)

// RefPrefix is the only namespace tuttid writes refs in.
const RefPrefix = "refs/tuttid/"

// SessionRefPrefix is the namespace of one session's refs; DeleteRefs with
// it removes them all when the session is deleted.
func SessionRefPrefix(sessionID string) string {
	return RefPrefix + "sessions/" + sessionID + "/"
}

// TurnRef names the checkpoint of a turn.
func TurnRef(sessionID, turnID string) string {
	return SessionRefPrefix(sessionID) + "turns/" + turnID
}

// SessionRef names another checkpoint of a session: "start" (its files when
// it started or was forked), "base" (what its worktree was made from),
// "archive" (its files when archived).
func SessionRef(sessionID, name string) string {
	return SessionRefPrefix(sessionID) + name
}

// checkRef accepts a full ref name under RefPrefix that git's
// check-ref-format rules allow (checked here: a git call per checkpoint
// costs more than the rules; update-ref still has the last word).
func checkRef(ref string) error {
	if !strings.HasPrefix(ref, RefPrefix) || !validRefName(ref) {
		return fmt.Errorf("%w: %q (a ref under %s that git accepts)", ErrInvalidRef, ref, RefPrefix)
	}
	return nil
}

// validRefName follows git-check-ref-format(1).
func validRefName(ref string) bool {
	if ref == "" || strings.HasSuffix(ref, "/") || strings.HasSuffix(ref, ".") ||
		strings.Contains(ref, "..") || strings.Contains(ref, "@{") || strings.Contains(ref, "//") {
		return false
	}
	for _, c := range ref {
		if c < 0x20 || c == 0x7f || strings.ContainsRune(" ~^:?*[\\", c) {
			return false
		}
	}
	for _, part := range strings.Split(ref, "/") {
		if part == "" || strings.HasPrefix(part, ".") || strings.HasSuffix(part, ".lock") {
			return false
		}
	}
	return true
}

// Refs lists the refs under prefix (which must be under RefPrefix) with the
// commit each names.
func (r *Repo) Refs(ctx context.Context, prefix string) (map[string]string, error) {
	if !strings.HasPrefix(prefix, RefPrefix) {
		return nil, fmt.Errorf("%w: %q is not under %s", ErrInvalidRef, prefix, RefPrefix)
	}
	out, err := r.run(ctx, nil, "for-each-ref", "--format=%(objectname) %(refname)", prefix)
	if err != nil {
		return nil, fmt.Errorf("list refs %s: %w", prefix, err)
	}
	refs := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if sha, name, ok := strings.Cut(line, " "); ok {
			refs[name] = sha
		}
	}
	return refs, nil
}

// DeleteRefs removes every ref under prefix (under RefPrefix) in one
// transaction; the commits they kept alive become garbage for git gc.
func (r *Repo) DeleteRefs(ctx context.Context, prefix string) error {
	refs, err := r.Refs(ctx, prefix)
	if err != nil {
		return err
	}
	if len(refs) == 0 {
		return nil
	}
	if err := r.deleteRefs(ctx, refs); err != nil {
		return fmt.Errorf("delete refs %s: %w", prefix, err)
	}
	return nil
}
