package fork

import (
	"context"
	"fmt"
	"strings"

	"tuttid/apperr"
	"tuttid/ent"
	"tuttid/ent/agentsession"
	"tuttid/ent/sessionfork"
	"tuttid/session"
)

// maxTitleTries bounds the search for a free title; a workspace would need
// that many sessions with one base title to exhaust it.
const maxTitleTries = 100000

// title runs step 8: an explicit title as given; otherwise
// <parent title>(fork<num>), num starting after the parent's direct forks
// and raised until no session of the workspace has the title. An untitled
// parent contributes its display fallback: base is the parent's title as
// shown (session.Service.DisplayTitle).
//
// A generated title is only known to be free until the child is stored, and
// forks of different parents with one base title (two sessions named alike,
// or two untitled ones) would pick the same one: the returned release holds
// the base title of the workspace until then, and must be called once the
// fork has ended. (Two bases never generate the same title.)
func (s *Service) title(ctx context.Context, parent *ent.AgentSession, base string, explicit *string) (title string, release func(), err error) {
	if explicit != nil {
		return *explicit, func() {}, nil
	}
	unlock := s.sessions.Lock("fork-title\x00" + parent.WorkspaceID + "\x00" + base)
	defer func() {
		if err != nil {
			unlock()
		}
	}()
	forks, err := s.store.Client.SessionFork.Query().
		Where(sessionfork.WorkspaceID(parent.WorkspaceID), sessionfork.ParentAgentSessionID(parent.ID)).Count(ctx)
	if err != nil {
		return "", nil, storageErr(err, "count the parent's forks")
	}
	for num := forks + 1; num <= forks+maxTitleTries; num++ {
		t := forkTitle(base, num)
		taken, err := s.store.Client.AgentSession.Query().
			Where(agentsession.WorkspaceID(parent.WorkspaceID), agentsession.Title(t)).Exist(ctx)
		if err != nil {
			return "", nil, storageErr(err, "check the title")
		}
		if !taken {
			return t, unlock, nil
		}
	}
	return "", nil, apperr.New(apperr.InvalidInput, "no free fork title for %q; pass a title", base)
}

// forkTitle is a generated title: <base>(fork<num>). It is one-to-one:
// the title ends in "(fork", num's digits (no leading zero) and ")", so
// base and num can be read back (two bases never give one title).
func forkTitle(base string, num int) string { return fmt.Sprintf("%s(fork%d)", base, num) }

// explicitTitle is the rule for a title the request gives: trimmed of
// spaces, valid UTF-8 of at most session.MaxTitleLen bytes; empty means
// none (nil: the title is generated).
func explicitTitle(title *string) (*string, error) {
	if title == nil {
		return nil, nil
	}
	t := strings.TrimSpace(*title)
	if err := session.CheckText("title", t, session.MaxTitleLen); err != nil {
		return nil, err
	}
	if t == "" {
		return nil, nil
	}
	return &t, nil
}
