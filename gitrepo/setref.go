package gitrepo

import (
	"context"
	"fmt"
)

// SetRef points ref (under RefPrefix) at commit: a second session keeps a
// checkpoint alive that another's ref made (a worktree fork's base).
func (r *Repo) SetRef(ctx context.Context, ref, commit string) error {
	if err := checkRef(ref); err != nil {
		return err
	}
	if _, err := r.run(ctx, nil, "update-ref", ref, commit+"^{commit}"); err != nil {
		return fmt.Errorf("set %s: %w", ref, err)
	}
	return nil
}

// DeleteBranch removes branch name only while it still names commit: a
// branch a failed fork made, undone before the fork answered.
func (r *Repo) DeleteBranch(ctx context.Context, name, commit string) {
	_, _ = r.run(ctx, nil, "update-ref", "-d", "refs/heads/"+name, commit)
}
