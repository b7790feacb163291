package server

import (
	"net/http"

	"tuttid/graph"
	"tuttid/graph/graphiql"
)

// graphQL is graph's handler with the server's token check on WebSockets,
// answering request errors as GraphQL over HTTP says.
func (s *Server) graphQL(a *auth, maxBody int64) http.Handler {
	h := graph.NewHandler(graph.HandlerConfig{
		Sessions:        s.Sessions,
		Reads:           s.Reads,
		Accounts:        s.Accounts,
		Forks:           s.Forks,
		Code:            s.Code,
		Explore:         s.Explore,
		Instances:       s.Instances,
		Logger:          s.log,
		WebSocketInit:   a.wsInit,
		MaxMessageBytes: maxBody,
	})
	// Commands of another instance's sessions go to it (forward.go),
	// whichever transport brought them: POST or a WebSocket.
	h.AroundOperations(s.forwardOperations)
	return graphQLOverHTTP(markForwarded(h))
}

func graphiqlHandler() http.Handler { return graphiql.Handler("tuttid", "/query") }
