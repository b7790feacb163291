package codebranch

import (
	"context"

	"tuttid/apperr"
	"tuttid/ent"
	"tuttid/ent/sessioncode"
	"tuttid/readahead"
)

type codesKey struct{}

// ListedRow is a session's code row (where its files are), nil outside a
// repository. For sessions the read model listed together
// (readahead.Sessions), the first read loads the rows of the whole list in
// one query.
func (s *Service) ListedRow(ctx context.Context, a *ent.AgentSession) (*ent.SessionCode, error) {
	if p := readahead.From(ctx).ListOf(readahead.Sessions, a.ID); p != nil {
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
	row, err := s.Row(ctx, a.ID)
	if err != nil {
		return nil, apperr.Storage(err, "read the session's code")
	}
	return row, nil
}
