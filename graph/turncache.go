package graph

import (
	"context"
	"sync"

	"github.com/99designs/gqlgen/graphql"

	"tuttid/ent"
)

// turnMessages lets AgentSession.turns load the messages of all its turns
// in one query for the Turn.messages resolvers below it, instead of one
// query per turn. It lives for one operation (see WithTurnMessages).
type turnMessages struct {
	mu     sync.Mutex
	byTurn map[int][]*ent.Message // by the turn row's id
}

type turnMessagesKey struct{}

// WithTurnMessages gives an operation its cache; the server installs it
// around every operation.
func WithTurnMessages(ctx context.Context) context.Context {
	return context.WithValue(ctx, turnMessagesKey{}, &turnMessages{byTurn: map[int][]*ent.Message{}})
}

func turnMessagesFrom(ctx context.Context) *turnMessages {
	c, _ := ctx.Value(turnMessagesKey{}).(*turnMessages)
	return c
}

// fill records the messages of turns, taken from a session's messages.
func (c *turnMessages) fill(turns []*ent.Turn, msgs []*ent.Message) {
	if c == nil {
		return
	}
	byTurnID := map[string][]*ent.Message{}
	for _, m := range msgs {
		byTurnID[m.TurnID] = append(byTurnID[m.TurnID], m)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, t := range turns {
		c.byTurn[t.ID] = append([]*ent.Message{}, byTurnID[t.TurnID]...)
	}
}

func (c *turnMessages) get(t *ent.Turn) ([]*ent.Message, bool) {
	if c == nil {
		return nil, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	m, ok := c.byTurn[t.ID]
	return m, ok
}

// selects reports whether the field being resolved selects a sub-field.
func selects(ctx context.Context, name string) bool {
	for _, f := range graphql.CollectFieldsCtx(ctx, nil) {
		if f.Name == name {
			return true
		}
	}
	return false
}
