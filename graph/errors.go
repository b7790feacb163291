package graph

import (
	"context"
	"errors"
	"log/slog"
	"strings"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"tuttid/apperr"
)

// presentError gives every failure a stable extensions.code and a message
// without internals; the cause of a server-side failure goes to log.
func presentError(log *slog.Logger) graphql.ErrorPresenterFunc {
	return func(ctx context.Context, err error) *gqlerror.Error {
		gerr := graphql.DefaultErrorPresenter(ctx, err)
		var app *apperr.Error
		if !errors.As(err, &app) {
			var ge *gqlerror.Error
			if errors.As(err, &ge) && ge.Extensions["code"] != nil {
				return gerr // gqlgen's own: parse, validation, complexity
			}
			app = inputError(ge)
			if app == nil {
				app = apperr.From(err)
			}
		}
		switch {
		case apperr.Abandoned(ctx, err):
			log.DebugContext(ctx, "graphql operation abandoned by its client", "path", gerr.Path.String(), "err", err)
		case app.Code == apperr.Internal || app.Code.HTTPStatus() >= 500:
			log.ErrorContext(ctx, "graphql operation failed", "code", app.Code, "path", gerr.Path.String(), "err", err)
		}
		gerr.Message = app.Message
		if gerr.Extensions == nil {
			gerr.Extensions = map[string]any{}
		}
		gerr.Extensions["code"] = string(app.Code)
		return gerr
	}
}

// inputError is the client's mistake gqlgen reports without a code, as
// invalid_input, or nil: an argument or variable value that does not
// coerce (an Int64 out of range, an enum value in the wrong case), which
// gqlgen reports as a gqlerror wrapping the cause on the argument's path
// (a resolver's own error comes unwrapped), or a POST body gqlgen could
// not read or decode, whose message holds the whole body: neither the
// answer nor the log repeats it.
func inputError(ge *gqlerror.Error) *apperr.Error {
	switch {
	case ge == nil:
		return nil
	case ge.Err != nil && len(ge.Path) > 0:
		return apperr.New(apperr.InvalidInput, "invalid value for %s: %v", ge.Path.String(), ge.Err)
	case strings.HasPrefix(ge.Message, "json request body could not be decoded"):
		return apperr.New(apperr.InvalidInput, "the request body is not a GraphQL request: a JSON object with a string query, and optional operationName, variables and extensions")
	case strings.HasPrefix(ge.Message, "could not read request body"):
		return apperr.New(apperr.InvalidInput, "could not read the request body")
	}
	return nil
}
