package server

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/99designs/gqlgen/graphql/handler"
	"github.com/99designs/gqlgen/graphql/handler/extension"
	"github.com/99designs/gqlgen/graphql/handler/lru"
	"github.com/99designs/gqlgen/graphql/handler/transport"
	coderws "github.com/coder/websocket"
	"github.com/vektah/gqlparser/v2/ast"

	"tuttid/apperr"
	"tuttid/graph"
	"tuttid/graph/generated"
	"tuttid/graph/graphiql"
)

// complexityLimit rejects queries that would fan out without bound (a fork
// tree of message connections of fork trees...).
const complexityLimit = 5000

func (s *Server) graphQL(a *auth, maxBody int64) http.Handler {
	res := &graph.Resolver{Sessions: s.Sessions, Lineage: s.Sessions, Tooling: s.Sessions, Forks: s.Forks}
	cfg := generated.Config{Resolvers: res}
	connection := func(childComplexity int, first *int, _ *string, last *int, _ *string) int {
		n := 50
		if first != nil {
			n = *first
		} else if last != nil {
			n = *last
		}
		return 1 + n*childComplexity
	}
	cfg.Complexity.AgentSession.Messages = connection
	cfg.Complexity.AgentSession.TurnConnection = connection
	// An unpaged turns list is costed as a default page: what it answers
	// is bounded when it runs (session.MaxTurnList, MaxTurnListBytes).
	cfg.Complexity.AgentSession.Turns = connection
	cfg.Complexity.Workspace.Sessions = func(childComplexity int, first *int, after *string, last *int, before *string, _, _ *bool) int {
		return connection(childComplexity, first, after, last, before)
	}
	srv := handler.New(generated.NewExecutableSchema(cfg))
	srv.AddTransport(transport.Websocket{
		// ka messages for graphql-ws; pings for graphql-transport-ws, where a
		// missing pong is tolerated (browsers' clients do not all answer).
		KeepAlivePingInterval: 10 * time.Second,
		PingPongInterval:      10 * time.Second,
		MissingPongOk:         true,
		InitTimeout:           10 * time.Second,
		PayloadReadLimit:      &maxBody,
		Implementation: transport.CoderWebsocketImplementation{
			// checkOrigin has refused the upgrade already unless the
			// Origin is allowed; coder/websocket's own rule would accept
			// an Origin equal to the request's Host, which under DNS
			// rebinding is the attacker's.
			AcceptOptions: coderws.AcceptOptions{InsecureSkipVerify: true},
		},
		InitFunc: a.wsInit,
	})
	srv.AddTransport(transport.Options{})
	srv.AddTransport(transport.GET{})
	srv.AddTransport(transport.POST{})
	srv.SetQueryCache(lru.New[*ast.QueryDocument](1000))
	srv.Use(extension.Introspection{})
	srv.Use(extension.AutomaticPersistedQuery{Cache: lru.New[string](100)})
	srv.Use(extension.FixedComplexityLimit(complexityLimit))
	srv.AroundOperations(graph.ReadAhead)
	srv.SetErrorPresenter(graph.PresentError(s.log))
	srv.SetRecoverFunc(func(ctx context.Context, v any) error {
		s.log.ErrorContext(ctx, "graphql resolver panic", "panic", fmt.Sprint(v))
		return apperr.New(apperr.Internal, "internal error")
	})
	return graphQLOverHTTP(srv)
}

func graphiqlHandler() http.Handler { return graphiql.Handler("tuttid", "/query") }
