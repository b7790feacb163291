package graph

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/99designs/gqlgen/graphql/handler"
	"github.com/99designs/gqlgen/graphql/handler/extension"
	"github.com/99designs/gqlgen/graphql/handler/lru"
	"github.com/99designs/gqlgen/graphql/handler/transport"
	coderws "github.com/coder/websocket"
	"github.com/vektah/gqlparser/v2/ast"

	"tuttid/account"
	"tuttid/apperr"
	"tuttid/codebranch"
	"tuttid/explore"
	"tuttid/fork"
	"tuttid/graph/generated"
	"tuttid/instance"
	"tuttid/session"
	"tuttid/sessionread"
)

// HandlerConfig is what NewHandler serves and how.
type HandlerConfig struct {
	Sessions *session.Service
	// Reads is the read model the queries and subscriptions page through.
	Reads *sessionread.Reader
	// Accounts answers the account's queries and mutations.
	Accounts *account.Service
	Forks    *fork.Service
	// Code answers the code fields (nil: they answer null).
	Code *codebranch.Service
	// Explore runs explorations.
	Explore *explore.Service
	// Instances says which sessions' owners are up
	// (AgentSession.available); nil: every session is available.
	Instances *instance.Registry
	Logger    *slog.Logger
	// WebSocketInit checks a WebSocket's connection_init (the token); nil
	// accepts every connection.
	WebSocketInit transport.WebsocketInitFunc
	// MaxMessageBytes bounds one WebSocket message; 0 leaves gqlgen's
	// default.
	MaxMessageBytes int64
}

// NewHandler is the GraphQL executor the server mounts at /query, with
// every limit and hook it runs with: the bounds checked before validation
// (queryBounds), the complexity limit, the read-ahead, the error presenter
// and panic recovery. The tests run this same handler.
func NewHandler(cfg HandlerConfig) *handler.Server {
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	srv := handler.New(generated.NewExecutableSchema(generated.Config{Resolvers: &Resolver{Sessions: cfg.Sessions, Reads: cfg.Reads, Accounts: cfg.Accounts, Forks: cfg.Forks, Code: cfg.Code, Explore: cfg.Explore, Instances: cfg.Instances}, Complexity: fieldCosts()}))
	ws := transport.Websocket{
		// ka messages for graphql-ws; pings for graphql-transport-ws, where a
		// missing pong is tolerated (browsers' clients do not all answer).
		KeepAlivePingInterval: 10 * time.Second,
		PingPongInterval:      10 * time.Second,
		MissingPongOk:         true,
		InitTimeout:           10 * time.Second,
		Implementation: transport.CoderWebsocketImplementation{
			// The server's checkOrigin has refused the upgrade already
			// unless the Origin is allowed; coder/websocket's own rule would
			// accept an Origin equal to the request's Host, which under DNS
			// rebinding is the attacker's.
			AcceptOptions: coderws.AcceptOptions{InsecureSkipVerify: true},
		},
		InitFunc: cfg.WebSocketInit,
	}
	if cfg.MaxMessageBytes > 0 {
		ws.PayloadReadLimit = &cfg.MaxMessageBytes
	}
	srv.AddTransport(ws)
	srv.AddTransport(transport.Options{})
	srv.AddTransport(transport.GET{})
	srv.AddTransport(transport.POST{})
	queries := lru.New[*ast.QueryDocument](1000)
	srv.SetQueryCache(queries)
	srv.Use(extension.Introspection{})
	srv.Use(extension.AutomaticPersistedQuery{Cache: lru.New[string](100)})
	// After the persisted query is looked up, before gqlgen parses and
	// validates: tokens and fields bounded, then validation's errors.
	srv.Use(queryBounds{cache: queries})
	srv.SetParserTokenLimit(maxQueryTokens)
	srv.SetValidationRulesFn(cappedRules)
	srv.Use(intLiterals{})
	srv.Use(&complexityLimitExt{limit: complexityLimit})
	srv.AroundOperations(readAhead)
	srv.SetErrorPresenter(presentError(log))
	srv.SetRecoverFunc(func(ctx context.Context, v any) error {
		log.ErrorContext(ctx, "graphql resolver panic", "panic", fmt.Sprint(v))
		return apperr.New(apperr.Internal, "internal error")
	})
	return srv
}
