package session

import (
	"context"

	"tuttid/apperr"
	"tuttid/ent"
	"tuttid/ent/sessioncode"
	"tuttid/readahead"
)

type codesKey struct{}

// CodeRow is a session's code row (codebranch's: where its files are),
// nil outside a repository. For sessions listed together, the first read
// loads the rows of the whole list in one query (see readAhead).
func (s *Service) CodeRow(ctx context.Context, a *ent.AgentSession) (*ent.SessionCode, error) {
	if p := sessionList(ctx, a.ID); p != nil {
		m, err := readahead.Load(p, codesKey{}, func() (map[string]*ent.SessionCode, error) {
			rows, err := s.store.Client.SessionCode.Query().Where(sessioncode.AgentSessionIDIn(p.IDs...)).All(ctx)
			if err != nil {
				return nil, err
			}
			m := make(map[string]*ent.SessionCode, len(rows))
			for _, r := range rows {
				m[r.AgentSessionID] = r
			}
			return m, nil
		})
		if err != nil {
			return nil, apperr.Storage(err, "read the sessions' code")
		}
		return m[a.ID], nil
	}
	row, err := s.store.Client.SessionCode.Query().Where(sessioncode.AgentSessionID(a.ID)).Only(ctx)
	if ent.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, apperr.Storage(err, "read the session's code")
	}
	return row, nil
}
