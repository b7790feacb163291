package sessionread

import (
	"context"

	"tuttid/ent"
	"tuttid/paging"
)

// What the external tests read of the package's internals.
const MaxDisplayTitle = maxDisplayTitle

// MessagePages is the read-ahead's batch of message pages.
func MessagePages(ctx context.Context, r *Reader, sessionIDs []string, w paging.Window) (map[string]paging.Page[*ent.Message], error) {
	return r.messagePages(ctx, sessionIDs, w)
}
