package server

import (
	"net/http"

	"tuttid/graph"
	"tuttid/graph/graphiql"
)

// graphQL is graph's handler with the server's token check on WebSockets,
// answering request errors as GraphQL over HTTP says.
func (s *Server) graphQL(a *auth, maxBody int64) http.Handler {
	return graphQLOverHTTP(graph.NewHandler(graph.HandlerConfig{
		Sessions:        s.Sessions,
		Forks:           s.Forks,
		Code:            s.Code,
		Logger:          s.log,
		WebSocketInit:   a.wsInit,
		MaxMessageBytes: maxBody,
	}))
}

func graphiqlHandler() http.Handler { return graphiql.Handler("tuttid", "/query") }
