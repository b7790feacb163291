package storetest

import (
	"encoding/json"
	"fmt"
	"time"

	"tuttid/agent"
	"tuttid/ent"
	"tuttid/ent/agentsession"
	"tuttid/ent/turn"
)

// bulkRows bounds the rows of one INSERT: SQLite allows 32766 bound
// parameters a statement.
const bulkRows = 500

// Workspace is a workspace row to seed; zero fields take defaults.
type Workspace struct {
	ID       string
	Name     string // "workspace <ID>"
	RootPath string // "/work/<ID>"
}

// Workspace stores a workspace created at SeedTime.
func (s *Store) Workspace(w Workspace) *ent.Workspace {
	s.t.Helper()
	if w.Name == "" {
		w.Name = "workspace " + w.ID
	}
	if w.RootPath == "" {
		w.RootPath = "/work/" + w.ID
	}
	row, err := s.Client.Workspace.Create().SetID(w.ID).SetName(w.Name).SetRootPath(w.RootPath).
		SetCreatedAt(SeedTime()).SetUpdatedAt(SeedTime()).Save(s.ctx)
	if err != nil {
		s.t.Fatalf("seed workspace %s: %v", w.ID, err)
	}
	return row
}

// Session is a session row to seed, with its turns and their messages;
// zero fields take defaults.
type Session struct {
	ID, Workspace, Title, Cwd string
	Provider                  string              // agent.ProviderCodex
	Thread                    string              // the provider session id: "thread-<ID>"
	NoThread                  bool                // no provider session id: Thread is ignored
	Status                    agentsession.Status // READY
	Settings                  agent.ComposerSettings
	RuntimeContext            map[string]any // nil: none (NULL)
	Hidden, Archived          bool
	CreatedAt                 time.Time // SeedTime; updated_at is the same
	Turns                     []Turn
}

// Turn is a turn of a seeded session.
type Turn struct {
	ID          string
	Status      turn.Status // COMPLETED
	Error       string
	StartedAt   time.Time // SeedTime plus n minutes for the session's nth turn
	CompletedAt time.Time // zero: none
	Messages    []Message
}

// Message is an item of a seeded turn. A session's messages get versions
// 1..n in turn order, and the session's last message version is n, as
// ingestion leaves them.
type Message struct {
	ID, Role, Kind, Text string
	Status               string // "completed"
	Content              json.RawMessage
}

// Session stores one session, its turns and messages, and returns the row
// as read back.
func (s *Store) Session(spec Session) *ent.AgentSession {
	s.t.Helper()
	s.Sessions(spec)
	a, err := s.Client.AgentSession.Get(s.ctx, spec.ID)
	if err != nil {
		s.t.Fatalf("read seeded session %s: %v", spec.ID, err)
	}
	return a
}

// Sessions stores sessions with their turns and messages in one
// transaction, in bulk (thousands of rows are fine).
func (s *Store) Sessions(specs ...Session) {
	s.t.Helper()
	var sessions []*ent.AgentSessionCreate
	var turns []*ent.TurnCreate
	var msgs []*ent.MessageCreate
	err := s.WithTx(s.ctx, func(tx *ent.Tx) error {
		for _, spec := range specs {
			spec = spec.withDefaults()
			var version int64
			for i, t := range spec.Turns {
				turns = append(turns, t.create(tx, spec.ID, i))
				for _, m := range t.Messages {
					version++
					msgs = append(msgs, m.create(tx, spec, t.ID, version))
				}
			}
			sessions = append(sessions, spec.create(tx, version))
		}
		if err := inChunks(sessions, func(b []*ent.AgentSessionCreate) error { return tx.AgentSession.CreateBulk(b...).Exec(s.ctx) }); err != nil {
			return err
		}
		if err := inChunks(turns, func(b []*ent.TurnCreate) error { return tx.Turn.CreateBulk(b...).Exec(s.ctx) }); err != nil {
			return err
		}
		return inChunks(msgs, func(b []*ent.MessageCreate) error { return tx.Message.CreateBulk(b...).Exec(s.ctx) })
	})
	if err != nil {
		s.t.Fatalf("seed %d sessions: %v", len(specs), err)
	}
}

// Turns adds turns, with their messages, to a stored session: they start
// after its turns (the session's nth turn n minutes after SeedTime, unless
// it says otherwise) and their messages' versions follow its last one.
func (s *Store) Turns(sessionID string, turns ...Turn) {
	s.t.Helper()
	err := s.WithTx(s.ctx, func(tx *ent.Tx) error {
		a, err := tx.AgentSession.Get(s.ctx, sessionID)
		if err != nil {
			return err
		}
		stored, err := tx.Turn.Query().Where(turn.AgentSessionID(sessionID)).Count(s.ctx)
		if err != nil {
			return err
		}
		spec := Session{ID: a.ID, Workspace: a.WorkspaceID}
		var rows []*ent.TurnCreate
		var msgs []*ent.MessageCreate
		version := a.LastMessageVersion
		for i, t := range turns {
			rows = append(rows, t.create(tx, sessionID, stored+i))
			for _, m := range t.Messages {
				version++
				msgs = append(msgs, m.create(tx, spec, t.ID, version))
			}
		}
		if err := inChunks(rows, func(b []*ent.TurnCreate) error { return tx.Turn.CreateBulk(b...).Exec(s.ctx) }); err != nil {
			return err
		}
		if err := inChunks(msgs, func(b []*ent.MessageCreate) error { return tx.Message.CreateBulk(b...).Exec(s.ctx) }); err != nil {
			return err
		}
		return tx.AgentSession.UpdateOneID(sessionID).SetLastMessageVersion(version).Exec(s.ctx)
	})
	if err != nil {
		s.t.Fatalf("seed %d turns of %s: %v", len(turns), sessionID, err)
	}
}

func inChunks[T any](rows []T, insert func([]T) error) error {
	for start := 0; start < len(rows); start += bulkRows {
		if err := insert(rows[start:min(start+bulkRows, len(rows))]); err != nil {
			return err
		}
	}
	return nil
}

func (spec Session) withDefaults() Session {
	if spec.Provider == "" {
		spec.Provider = agent.ProviderCodex
	}
	switch {
	case spec.NoThread:
		spec.Thread = ""
	case spec.Thread == "":
		spec.Thread = "thread-" + spec.ID
	}
	if spec.Status == "" {
		spec.Status = agentsession.StatusREADY
	}
	if spec.CreatedAt.IsZero() {
		spec.CreatedAt = SeedTime()
	}
	return spec
}

func (spec Session) create(tx *ent.Tx, lastVersion int64) *ent.AgentSessionCreate {
	c := tx.AgentSession.Create().SetID(spec.ID).SetWorkspaceID(spec.Workspace).SetProvider(spec.Provider).
		SetProviderSessionID(spec.Thread).SetTitle(spec.Title).SetStatus(spec.Status).SetCwd(spec.Cwd).
		SetSettings(spec.Settings).SetVisible(!spec.Hidden).SetArchived(spec.Archived).
		SetLastMessageVersion(lastVersion).SetCreatedAt(spec.CreatedAt).SetUpdatedAt(spec.CreatedAt)
	if spec.RuntimeContext != nil {
		c.SetRuntimeContext(spec.RuntimeContext)
	}
	return c
}

func (t Turn) create(tx *ent.Tx, sessionID string, i int) *ent.TurnCreate {
	if t.Status == "" {
		t.Status = turn.StatusCOMPLETED
	}
	if t.StartedAt.IsZero() {
		t.StartedAt = SeedTime().Add(time.Duration(i+1) * time.Minute)
	}
	c := tx.Turn.Create().SetTurnID(t.ID).SetAgentSessionID(sessionID).SetStatus(t.Status).
		SetError(t.Error).SetStartedAt(t.StartedAt)
	if !t.CompletedAt.IsZero() {
		c.SetCompletedAt(t.CompletedAt)
	}
	return c
}

func (m Message) create(tx *ent.Tx, spec Session, turnID string, version int64) *ent.MessageCreate {
	if m.ID == "" {
		m.ID = fmt.Sprintf("%s-m%d", turnID, version)
	}
	if m.Status == "" {
		m.Status = "completed"
	}
	c := tx.Message.Create().SetMessageID(m.ID).SetAgentSessionID(spec.ID).SetWorkspaceID(spec.Workspace).
		SetTurnID(turnID).SetRole(m.Role).SetKind(m.Kind).SetText(m.Text).SetStatus(m.Status).
		SetVersion(version).SetCreatedAt(SeedTime()).SetUpdatedAt(SeedTime())
	if len(m.Content) > 0 {
		c.SetContent(m.Content)
	}
	return c
}

// Fork is a lineage row to seed: Child forked from Parent.
type Fork struct {
	Workspace, Parent, Child string
	TurnID                   string // the last turn the child holds; "" for the whole conversation
	RequestID                string // "req-<Child>"
	ParentThread             string // "thread-<Parent>"
	ChildThread              string // "thread-<Child>"
	Provider                 string // agent.ProviderCodex
	At                       int64  // forked_at_unix_ms
}

// Forks stores lineage rows in one statement.
func (s *Store) Forks(forks ...Fork) []*ent.SessionFork {
	s.t.Helper()
	b := make([]*ent.SessionForkCreate, len(forks))
	for i, f := range forks {
		b[i] = f.create(s.Client)
	}
	var rows []*ent.SessionFork
	err := inChunks(b, func(b []*ent.SessionForkCreate) error {
		saved, err := s.Client.SessionFork.CreateBulk(b...).Save(s.ctx)
		rows = append(rows, saved...)
		return err
	})
	if err != nil {
		s.t.Fatalf("seed %d forks: %v", len(forks), err)
	}
	return rows
}

func (f Fork) create(c *ent.Client) *ent.SessionForkCreate {
	if f.RequestID == "" {
		f.RequestID = "req-" + f.Child
	}
	if f.ParentThread == "" {
		f.ParentThread = "thread-" + f.Parent
	}
	if f.ChildThread == "" {
		f.ChildThread = "thread-" + f.Child
	}
	if f.Provider == "" {
		f.Provider = agent.ProviderCodex
	}
	return c.SessionFork.Create().SetWorkspaceID(f.Workspace).
		SetParentAgentSessionID(f.Parent).SetChildAgentSessionID(f.Child).
		SetParentProviderSessionID(f.ParentThread).SetChildProviderSessionID(f.ChildThread).
		SetProvider(f.Provider).SetForkTurnID(f.TurnID).SetForkRequestID(f.RequestID).SetForkedAtUnixMs(f.At)
}

// Exchanges is n turns of a conversation (<id>-t1 ...), each a user's
// question and the assistant's answer: messages <turn>-u ("<id> q<n>",
// with content {"type":"userMessage"}) and <turn>-a ("<id> a<n>").
func Exchanges(id string, n int) []Turn {
	turns := make([]Turn, n)
	for k := range turns {
		tid := fmt.Sprintf("%s-t%d", id, k+1)
		turns[k] = Turn{ID: tid, Messages: []Message{
			{ID: tid + "-u", Role: "user", Kind: "userMessage", Text: fmt.Sprintf("%s q%d", id, k+1), Content: json.RawMessage(`{"type":"userMessage"}`)},
			{ID: tid + "-a", Role: "assistant", Kind: "agentMessage", Text: fmt.Sprintf("%s a%d", id, k+1)},
		}}
	}
	return turns
}
