package sessionread

import (
	"context"
	"strings"
	"time"
	"unicode/utf8"

	"entgo.io/ent/dialect/sql"

	"tuttid/apperr"
	"tuttid/ent"
	"tuttid/ent/agentsession"
	"tuttid/ent/message"
	"tuttid/ent/turn"
	"tuttid/paging"
	"tuttid/readahead"
	"tuttid/validate"
)

// Session returns a session of a workspace, or nil when there is none.
func (s *Reader) Session(ctx context.Context, workspaceID, id string) (*ent.AgentSession, error) {
	a, err := s.store.Client.AgentSession.Query().
		Where(agentsession.ID(id), agentsession.WorkspaceID(workspaceID)).Only(ctx)
	if ent.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, apperr.Storage(err, "read the session")
	}
	return a, nil
}

// RequireSession returns the session or agent.session_not_found.
func (s *Reader) RequireSession(ctx context.Context, workspaceID, id string) (*ent.AgentSession, error) {
	if err := validate.ID("workspaceId", workspaceID); err != nil {
		return nil, err
	}
	if err := validate.ID("agentSessionId", id); err != nil {
		return nil, err
	}
	a, err := s.Session(ctx, workspaceID, id)
	if err != nil {
		return nil, err
	}
	if a == nil {
		return nil, apperr.New(apperr.SessionNotFound, "session %q does not exist in workspace %q", id, workspaceID)
	}
	return a, nil
}

// Messages pages through a session's messages in version order.
func (s *Reader) Messages(ctx context.Context, sessionID string, args paging.Args) (paging.Page[*ent.Message], error) {
	w, err := args.Check("m")
	if err != nil {
		return paging.Page[*ent.Message]{}, err
	}
	if p := sessionList(ctx, sessionID); p != nil {
		if key, ok := batchable(w); ok {
			pages, err := readahead.Load(p, key, func() (map[string]paging.Page[*ent.Message], error) {
				return s.messagePages(ctx, p.IDs, w)
			})
			if err != nil {
				return paging.Page[*ent.Message]{}, err
			}
			return pages[sessionID], nil
		}
	}
	q := s.store.Client.Message.Query().Where(message.AgentSessionID(sessionID))
	total := 0
	if !args.SkipTotal {
		if total, err = q.Clone().Count(ctx); err != nil {
			return paging.Page[*ent.Message]{}, apperr.Storage(err, "count messages")
		}
	}
	// The page's rows are sized first and read by their versions, so that
	// it stays under MaxPageBytes (pagebytes.go).
	fit, err := s.fitMessages(ctx, sessionID, w)
	if err != nil {
		return paging.Page[*ent.Message]{}, err
	}
	var rows []*ent.Message
	if fit.n > 0 {
		order := ent.Asc(message.FieldVersion)
		if w.Backward {
			order = ent.Desc(message.FieldVersion)
		}
		rows, err = q.Where(message.VersionGTE(fit.lo), message.VersionLTE(fit.hi)).Order(order).All(ctx)
		if err != nil {
			return paging.Page[*ent.Message]{}, apperr.Storage(err, "read messages")
		}
	}
	return paging.PageOf(rows, w, fit.more, total, func(m *ent.Message) string { return paging.Cursor("m", m.Version) }), nil
}

// Sessions pages through a workspace's sessions, oldest first: only the
// archived ones, or only the others, or (archived nil) both.
func (s *Reader) Sessions(ctx context.Context, workspaceID string, includeHidden bool, archived *bool, args paging.Args) (paging.Page[*ent.AgentSession], error) {
	w, err := args.Check("s")
	if err != nil {
		return paging.Page[*ent.AgentSession]{}, err
	}
	q := s.store.Client.AgentSession.Query().Where(agentsession.WorkspaceID(workspaceID))
	if !includeHidden {
		q.Where(agentsession.Visible(true))
	}
	if archived != nil {
		q.Where(agentsession.Archived(*archived))
	}
	total, err := q.Clone().Count(ctx)
	if err != nil {
		return paging.Page[*ent.AgentSession]{}, apperr.Storage(err, "count sessions")
	}
	// Sessions are keyed by creation time in nanoseconds, then id.
	if w.After != nil {
		at := time.Unix(0, *w.After)
		q.Where(agentsession.Or(agentsession.CreatedAtGT(at),
			agentsession.And(agentsession.CreatedAtEQ(at), agentsession.IDGT(w.AfterID))))
	}
	if w.Before != nil {
		at := time.Unix(0, *w.Before)
		q.Where(agentsession.Or(agentsession.CreatedAtLT(at),
			agentsession.And(agentsession.CreatedAtEQ(at), agentsession.IDLT(w.BeforeID))))
	}
	orderFn := sql.OrderAsc
	if w.Backward {
		orderFn = sql.OrderDesc
	}
	rows, err := q.Order(agentsession.ByCreatedAt(orderFn()), agentsession.ByID(orderFn())).Limit(w.Limit + 1).All(ctx)
	if err != nil {
		return paging.Page[*ent.AgentSession]{}, apperr.Storage(err, "read sessions")
	}
	p := paging.NewPage(rows, w, total, func(a *ent.AgentSession) string {
		return paging.KeyedCursor("s", a.CreatedAt.UnixNano(), a.ID)
	})
	sessionsListed(ctx, workspaceID, p.Nodes)
	return p, nil
}

// TurnMessages lists a turn's messages in version order.
func (s *Reader) TurnMessages(ctx context.Context, t *ent.Turn) ([]*ent.Message, error) {
	if tl := turnList(ctx, t); tl != nil {
		// The turn was listed: one query for the messages of the list.
		byTurn, err := readahead.Load(tl, turnMessages{}, func() (map[string][]*ent.Message, error) {
			return s.turnsMessages(ctx, tl.Scope, readahead.TurnIDs(tl))
		})
		if err != nil {
			return nil, err
		}
		return nonNil(byTurn[t.TurnID]), nil
	}
	ms, err := s.store.Client.Message.Query().
		Where(message.AgentSessionID(t.AgentSessionID), message.TurnID(t.TurnID)).
		Order(ent.Asc(message.FieldVersion)).All(ctx)
	if err != nil {
		return nil, apperr.Storage(err, "read the turn's messages")
	}
	return ms, nil
}

// UntitledTitle is shown for a session with no title and no user message.
const UntitledTitle = "Untitled session"

// maxDisplayTitle bounds a title derived from the first user message.
const maxDisplayTitle = 60

// DisplayTitle is the session's title, or when it is empty the fallback the
// GUI shows: the first line of its first user message, else UntitledTitle.
func (s *Reader) DisplayTitle(ctx context.Context, a *ent.AgentSession) (string, error) {
	if a.Title != "" {
		return a.Title, nil
	}
	if p := sessionList(ctx, a.ID); p != nil {
		texts, err := readahead.Load(p, firstTitlesKey{}, func() (map[string]string, error) { return s.firstUserTexts(ctx, p.IDs) })
		if err != nil {
			return "", err
		}
		if text, ok := texts[a.ID]; ok {
			return FallbackTitle(text), nil
		}
		return UntitledTitle, nil
	}
	first, err := s.store.Client.Message.Query().
		Where(message.AgentSessionID(a.ID), message.Role("user"), message.TextNEQ("")).
		Order(ent.Asc(message.FieldVersion)).First(ctx)
	if ent.IsNotFound(err) {
		return UntitledTitle, nil
	}
	if err != nil {
		return "", apperr.Storage(err, "read the session's first message")
	}
	return FallbackTitle(first.Text), nil
}

// FallbackTitle derives a title from a user message: its first non-empty
// line, cut to a bounded number of characters.
func FallbackTitle(text string) string {
	for _, line := range strings.Split(text, "\n") {
		line = strings.Join(strings.Fields(line), " ")
		if line == "" {
			continue
		}
		if utf8.RuneCountInString(line) > maxDisplayTitle {
			r := []rune(line)
			line = strings.TrimSpace(string(r[:maxDisplayTitle-1])) + "…"
		}
		return line
	}
	return UntitledTitle
}

// CheckSubscription verifies that a workspace, and the session when one
// is named, exist before a client subscribes to their activity.
func (s *Reader) CheckSubscription(ctx context.Context, workspaceID, sessionID string) error {
	if sessionID != "" {
		_, err := s.RequireSession(ctx, workspaceID, sessionID)
		return err
	}
	_, err := s.RequireWorkspace(ctx, workspaceID)
	return err
}

// HasRunningTurn reports whether a session has a turn in progress.
func (s *Reader) HasRunningTurn(ctx context.Context, sessionID string) (bool, error) {
	running, err := s.store.Client.Turn.Query().
		Where(turn.AgentSessionID(sessionID), turn.StatusEQ(turn.StatusIN_PROGRESS)).Exist(ctx)
	if err != nil {
		return false, apperr.Storage(err, "read the session's turns")
	}
	return running, nil
}

// Turn returns a session's turn by its provider id, or nil when there is
// none.
func (s *Reader) Turn(ctx context.Context, sessionID, turnID string) (*ent.Turn, error) {
	t, err := s.store.Client.Turn.Query().Where(turn.AgentSessionID(sessionID), turn.TurnID(turnID)).Only(ctx)
	if ent.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, apperr.Storage(err, "read the turn")
	}
	return t, nil
}

// Idle reports whether a session is quiet enough to be forked: its status
// is READY or COMPLETED and none of its turns is running. running tells
// the caller which of the two it is not, for its message.
func (s *Reader) Idle(ctx context.Context, a *ent.AgentSession) (idle, running bool, err error) {
	running, err = s.HasRunningTurn(ctx, a.ID)
	if err != nil {
		return false, false, err
	}
	quiet := a.Status == agentsession.StatusREADY || a.Status == agentsession.StatusCOMPLETED
	return quiet && !running, running, nil
}
