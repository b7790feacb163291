package server

// RouteAccess is a registered route's pattern and access.
type RouteAccess struct {
	Pattern, Access string
	GraphQL         bool
}

// Routes lists the routes s registered, for the test that each declares
// its access.
func (s *Server) Routes() []RouteAccess {
	out := make([]RouteAccess, len(s.routes.routes))
	for i, r := range s.routes.routes {
		out[i] = RouteAccess{Pattern: r.pattern, Access: r.access.String(), GraphQL: r.graphQL}
	}
	return out
}
