package graph

import (
	"context"

	"tuttid/ent"
)

// availability says whether the session's owner can carry out its
// commands now, and if not why (instance.Registry.Availability: one read
// of the instances table a second, whatever the number of sessions).
func (r *Resolver) availability(ctx context.Context, s *ent.AgentSession) (bool, string, error) {
	if r.Instances == nil {
		return true, "", nil
	}
	return r.Instances.Availability(ctx, s.InstanceID)
}
