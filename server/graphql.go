package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/handler"
	"github.com/99designs/gqlgen/graphql/handler/extension"
	"github.com/99designs/gqlgen/graphql/handler/lru"
	"github.com/99designs/gqlgen/graphql/handler/transport"
	coderws "github.com/coder/websocket"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"tuttid/apperr"
	"tuttid/graph"
	"tuttid/graph/generated"
	"tuttid/graph/graphiql"
)

// complexityLimit rejects queries that would fan out without bound (a fork
// tree of message connections of fork trees...).
const complexityLimit = 5000

func (s *Server) graphQL(a *auth, maxBody int64) http.Handler {
	res := &graph.Resolver{Lifecycle: s.Sessions, Tooling: s.Sessions, Forks: s.Forks, Broker: s.Broker, Logger: s.log}
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
	cfg.Complexity.Workspace.Sessions = func(childComplexity int, first *int, after *string, last *int, before *string, _ *bool, _ *bool) int {
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
	srv.AroundOperations(func(ctx context.Context, next graphql.OperationHandler) graphql.ResponseHandler {
		// Queries and mutations only: a subscription lives long and would
		// serve messages from its first event's cache.
		if op := graphql.GetOperationContext(ctx).Operation; op != nil && op.Operation != ast.Subscription {
			ctx = graph.WithTurnMessages(ctx)
		}
		return next(ctx)
	})
	srv.SetErrorPresenter(s.presentError)
	srv.SetRecoverFunc(func(ctx context.Context, v any) error {
		s.log.ErrorContext(ctx, "graphql resolver panic", "panic", fmt.Sprint(v))
		return apperr.New(apperr.Internal, "internal error")
	})
	return srv
}

// presentError gives every failure a stable extensions.code and a message
// without internals; the cause goes to the log.
func (s *Server) presentError(ctx context.Context, err error) *gqlerror.Error {
	gerr := graphql.DefaultErrorPresenter(ctx, err)
	var app *apperr.Error
	if !errors.As(err, &app) {
		var ge *gqlerror.Error
		if errors.As(err, &ge) && ge.Extensions["code"] != nil {
			return gerr // gqlgen's own: parse, validation, complexity
		}
		app = apperr.From(err)
	}
	if app.Code == apperr.Internal || app.Code.HTTPStatus() >= 500 {
		s.log.ErrorContext(ctx, "graphql operation failed", "code", app.Code, "path", gerr.Path.String(), "err", err)
	}
	gerr.Message = app.Message
	if gerr.Extensions == nil {
		gerr.Extensions = map[string]any{}
	}
	gerr.Extensions["code"] = string(app.Code)
	return gerr
}

func graphiqlHandler() http.Handler { return graphiql.Handler("tuttid", "/query") }

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}
