package fork

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"tuttid/apperr"
	"tuttid/ent"
	"tuttid/ent/agentsession"
	"tuttid/ent/sessionfork"
	"tuttid/validate"
)

// nextTitle is the default title of a new fork: <base>(fork<num>), where
// base is the parent's title as shown (sessionread.Reader.DisplayTitle, so an
// untitled parent contributes its fallback) and num is one more than both
// the parent's direct forks (the spec's count) and the highest number any
// session of the workspace already carries after that base. So a number is
// never given twice while its session exists, and never reused while a
// higher one of that base exists: deleting A(fork1) next to A(fork2) makes
// the next fork A(fork3). Once every fork of a base is gone, numbering may
// start over (titles stay unique, which is what the spec asks); remembering
// more would mean writing to the parent, which a fork leaves untouched.
//
// Two queries whatever the number of forks. The caller holds the title lock
// of (workspace, base) from here until the child is stored (lockTitle).
func nextTitle(ctx context.Context, c *ent.Client, parent *ent.AgentSession, base string) (string, error) {
	forks, err := c.SessionFork.Query().
		Where(sessionfork.WorkspaceID(parent.WorkspaceID), sessionfork.ParentAgentSessionID(parent.ID)).Count(ctx)
	if err != nil {
		return "", apperr.Storage(err, "count the parent's forks")
	}
	prefix := base + "(fork"
	taken, err := c.AgentSession.Query().
		Where(agentsession.WorkspaceID(parent.WorkspaceID), agentsession.TitleHasPrefix(prefix)).
		Select(agentsession.FieldTitle).Strings(ctx)
	if err != nil {
		return "", apperr.Storage(err, "read the titles of the forks")
	}
	highest := forks
	for _, t := range taken {
		if !strings.HasPrefix(t, prefix) { // LIKE ignores ASCII case
			continue
		}
		if n, ok := forkNumber(t[len(prefix):]); ok && n > highest {
			highest = n
		}
	}
	return forkTitle(base, highest+1), nil
}

// forkNumber reads "<num>)", the rest of a title after "<base>(fork".
func forkNumber(rest string) (int, bool) {
	digits, ok := strings.CutSuffix(rest, ")")
	if !ok || digits == "" || strings.TrimLeft(digits, "0123456789") != "" {
		return 0, false
	}
	n, err := strconv.Atoi(digits)
	// A number this large (only an explicit title has one) cannot be
	// reached by counting up; ignoring it keeps highest+1 from overflowing.
	if err != nil || n >= maxForkNumber {
		return 0, false
	}
	return n, true
}

const maxForkNumber = 1 << 31

// lockTitle serializes the choosing and storing of default titles of one
// base in a workspace: forks of different parents with one base title (two
// sessions named alike, or two untitled ones) would otherwise pick the
// same number. Two bases never generate the same title.
func (s *Service) lockTitle(workspaceID, base string) (unlock func()) {
	return s.guards.Lock("title\x00" + workspaceID + "\x00" + base)
}

// lockRequest serializes requests with one id, so that the second sees the
// first's result.
func (s *Service) lockRequest(workspaceID, requestID string) (unlock func()) {
	return s.guards.Lock("request\x00" + workspaceID + "\x00" + requestID)
}

// forkTitle is a generated title: <base>(fork<num>). It is one-to-one:
// the title ends in "(fork", num's digits (no leading zero) and ")", so
// base and num can be read back (two bases never give one title).
func forkTitle(base string, num int) string { return fmt.Sprintf("%s(fork%d)", base, num) }

// explicitTitle is the rule for a title the request gives: trimmed of
// spaces, valid UTF-8 of at most validate.MaxTitleLen bytes; empty means
// none (nil: the title is generated).
func explicitTitle(title *string) (*string, error) {
	if title == nil {
		return nil, nil
	}
	t := strings.TrimSpace(*title)
	if err := validate.Line("title", t, validate.MaxTitleLen); err != nil {
		return nil, err
	}
	if t == "" {
		return nil, nil
	}
	return &t, nil
}
