package session

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"tuttid/agent"
	"tuttid/ent"
	"tuttid/ent/message"
)

// upsertMessage stores a provider item of a session: a new item gets the
// session's next version; a known one is updated in place and keeps its
// version, so cursors stay stable. It reports whether the item was new.
func upsertMessage(ctx context.Context, tx *ent.Tx, a *ent.AgentSession, m agent.RuntimeMessage, now time.Time) (*ent.Message, bool, error) {
	existing, err := tx.Message.Query().
		Where(message.AgentSessionID(a.ID), message.MessageID(m.ID)).Only(ctx)
	switch {
	case err == nil:
		// Only what the provider filled in replaces what is stored.
		upd := tx.Message.UpdateOneID(existing.ID).SetKind(m.Kind).SetText(m.Text).SetUpdatedAt(now)
		existing.Kind, existing.Text, existing.UpdatedAt = m.Kind, m.Text, now
		if m.Role != "" {
			upd.SetRole(m.Role)
			existing.Role = m.Role
		}
		if m.Status != "" {
			upd.SetStatus(m.Status)
			existing.Status = m.Status
		}
		if m.TurnID != "" {
			upd.SetTurnID(m.TurnID)
			existing.TurnID = m.TurnID
		}
		if len(m.Content) > 0 && json.Valid(m.Content) {
			upd.SetContent(m.Content)
			existing.Content = m.Content
		}
		// Exec, not Save: Save reads the row back (on SQLite a SELECT after
		// the UPDATE), two more copies of a long reply's text and content
		// for what is already in hand.
		if err := upd.Exec(ctx); err != nil {
			return nil, false, err
		}
		return existing, false, nil
	case !ent.IsNotFound(err):
		return nil, false, err
	}
	ver, err := nextVersions(ctx, tx, a.ID, 1)
	if err != nil {
		return nil, false, err
	}
	saved, err := createMessage(tx, a, m, ver, now).Save(ctx)
	return saved, true, err
}

// nextVersions reserves n versions for a session and returns the first.
func nextVersions(ctx context.Context, tx *ent.Tx, sessionID string, n int64) (int64, error) {
	a, err := tx.AgentSession.UpdateOneID(sessionID).AddLastMessageVersion(n).Save(ctx)
	if err != nil {
		return 0, fmt.Errorf("reserve message versions: %w", err)
	}
	return a.LastMessageVersion - n + 1, nil
}

func createMessage(tx *ent.Tx, a *ent.AgentSession, m agent.RuntimeMessage, version int64, now time.Time) *ent.MessageCreate {
	m = withDefaults(m)
	return tx.Message.Create().
		SetMessageID(m.ID).SetAgentSessionID(a.ID).SetWorkspaceID(a.WorkspaceID).
		SetTurnID(m.TurnID).SetRole(m.Role).SetKind(m.Kind).SetText(m.Text).
		SetContent(m.Content).SetStatus(m.Status).SetVersion(version).
		SetCreatedAt(now).SetUpdatedAt(now)
}

// withDefaults is a provider message as it is stored: content that is not
// JSON becomes {}, a missing status completed, a missing role unknown.
func withDefaults(m agent.RuntimeMessage) agent.RuntimeMessage {
	if len(m.Content) == 0 || !json.Valid(m.Content) {
		m.Content = json.RawMessage(`{}`)
	}
	if m.Status == "" {
		m.Status = agent.ItemCompleted
	}
	if m.Role == "" {
		m.Role = "unknown"
	}
	return m
}
