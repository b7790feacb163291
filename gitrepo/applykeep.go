package gitrepo

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"
	"time"
)

// KeptApplies bounds the kept states of one target (ApplyOptions.KeepUnder):
// an apply's stays until KeptApplies later applies to that target were
// made, so that a person can undo an apply, or recover from one that
// failed, by hand for a while, and a target applied to often does not
// keep every state it ever had alive.
const KeptApplies = 3

// BeforeApplyRefPrefix is where applies to a session keep its files as
// they were before each (one ref per apply, named by its ApplyWrite.ID).
// Under the session's prefix: they go when the session is deleted.
func BeforeApplyRefPrefix(sessionID string) string {
	return SessionRefPrefix(sessionID) + "before-apply/"
}

// defaultKeepUnder is where an apply with no KeepUnder keeps the state.
const defaultKeepUnder = RefPrefix + "before-apply/"

// newApplyID is unique and sorts by time: nanoseconds since 1970 (19
// digits until 2286), then a random suffix.
func newApplyID(now time.Time) string {
	return fmt.Sprintf("%d-%08x", now.UnixNano(), rand.Uint32())
}

// keepBefore records the target's files before the apply, snap, as a
// commit (first parent the HEAD then) under ref.
func (r *Repo) keepBefore(ctx context.Context, ref string, snap Snapshot, when time.Time) (string, error) {
	if err := checkRef(ref); err != nil {
		return "", err
	}
	commit, err := r.commitTree(ctx, snap.Tree, snap.Head,
		CheckpointOptions{Ref: ref, Message: "tuttid: the files before an apply", Time: when})
	if err != nil {
		return "", err
	}
	if err := r.setRef(ctx, ref, commit); err != nil {
		return "", fmt.Errorf("keep the files before the apply: set %s: %w", ref, err)
	}
	return commit, nil
}

// pruneKept deletes the refs under prefix but the newest keep (by name:
// apply IDs sort by time).
func (r *Repo) pruneKept(ctx context.Context, prefix string, keep int) error {
	refs, err := r.Refs(ctx, prefix)
	if err != nil {
		return err
	}
	if len(refs) <= keep {
		return nil
	}
	names := make([]string, 0, len(refs))
	for name := range refs {
		names = append(names, name)
	}
	sort.Strings(names)
	old := map[string]string{}
	for _, name := range names[:len(names)-keep] {
		old[name] = refs[name]
	}
	if err := r.deleteRefs(ctx, old); err != nil {
		return fmt.Errorf("prune the kept states %s: %w", prefix, err)
	}
	return nil
}

// deleteRefs removes refs (name to the commit it must still name) in one
// transaction.
func (r *Repo) deleteRefs(ctx context.Context, refs map[string]string) error {
	var in strings.Builder
	in.WriteString("start\n")
	for name, sha := range refs {
		fmt.Fprintf(&in, "delete %s %s\n", name, sha)
	}
	in.WriteString("prepare\ncommit\n")
	if _, err := r.git.run(ctx, call{dir: r.Root, stdin: strings.NewReader(in.String())},
		"update-ref", "--stdin"); err != nil {
		return err
	}
	return nil
}
