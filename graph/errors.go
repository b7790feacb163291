package graph

import (
	"context"
	"errors"
	"log/slog"

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
			app = apperr.From(err)
		}
		if app.Code == apperr.Internal || app.Code.HTTPStatus() >= 500 {
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
