package instance

import (
	"context"
	"fmt"
	"time"

	"tuttid/apperr"
	"tuttid/ent"
	"tuttid/ent/agentsession"
)

// livenessTTL is how long one read of the instances table answers
// Availability: a page of sessions, or a burst of activity events asking
// each session's availability, costs one read, and a down owner shows as
// down at most this late.
const livenessTTL = time.Second

// liveness is the instances table as last read.
type liveness struct {
	at    time.Time
	heard map[string]time.Time // instance id -> last heartbeat
}

// Availability says whether the commands of a session owned by owner can
// run now, and if not why: "" and true for this instance (it answers, so
// it is up: SQLite's one instance always is) and for a live owner; false
// and the reason for an owner whose heartbeat is older than DownAfter or
// that is not registered. The instances table is read at most once a
// livenessTTL.
func (r *Registry) Availability(ctx context.Context, owner string) (bool, string, error) {
	if owner == "" || owner == r.id {
		return true, "", nil
	}
	heard, err := r.heartbeats(ctx)
	if err != nil {
		return false, "", err
	}
	at, ok := heard[owner]
	if !ok {
		return false, fmt.Sprintf("instance %s is not registered", owner), nil
	}
	age := r.now().Sub(at)
	if age <= DownAfter {
		return true, "", nil
	}
	return false, fmt.Sprintf("instance %s is down: last heartbeat %s ago", owner, age.Round(time.Second)), nil
}

// heartbeats reads every instance's last heartbeat, or gives the read of
// less than livenessTTL ago.
func (r *Registry) heartbeats(ctx context.Context) (map[string]time.Time, error) {
	now := r.now()
	r.liveMu.Lock()
	defer r.liveMu.Unlock()
	if r.live != nil && now.Sub(r.live.at) < livenessTTL && !now.Before(r.live.at) {
		return r.live.heard, nil
	}
	all, err := r.client.Instance.Query().All(ctx)
	if err != nil {
		return nil, apperr.Storage(err, "read the instances")
	}
	heard := make(map[string]time.Time, len(all))
	for _, e := range all {
		heard[e.ID] = e.HeartbeatAt
	}
	r.live = &liveness{at: now, heard: heard}
	return heard, nil
}

// Unavailable is a session whose owner is down, and why.
type Unavailable struct {
	SessionID string
	Reason    string
}

// UnavailableIn lists the sessions of workspace ws whose owner is down
// (Availability's reasons), oldest first: what the GUI polls. With every
// other instance up (always on SQLite) it reads no session.
func (r *Registry) UnavailableIn(ctx context.Context, ws string) ([]Unavailable, error) {
	heard, err := r.heartbeats(ctx)
	if err != nil {
		return nil, err
	}
	now := r.now()
	var down []string
	for id, at := range heard {
		if id != r.id && now.Sub(at) > DownAfter {
			down = append(down, id)
		}
	}
	if len(down) == 0 {
		return nil, nil
	}
	rows, err := r.client.AgentSession.Query().
		Where(agentsession.WorkspaceID(ws), agentsession.InstanceIDIn(down...)).
		Order(ent.Asc(agentsession.FieldCreatedAt), ent.Asc(agentsession.FieldID)).
		Select(agentsession.FieldID, agentsession.FieldInstanceID).All(ctx)
	if err != nil {
		return nil, apperr.Storage(err, "read the sessions of instances that are down")
	}
	out := make([]Unavailable, 0, len(rows))
	for _, s := range rows {
		if ok, why, err := r.Availability(ctx, s.InstanceID); err != nil {
			return nil, err
		} else if !ok {
			out = append(out, Unavailable{SessionID: s.ID, Reason: why})
		}
	}
	return out, nil
}
