//go:build !linux

package priority

import (
	"context"
	"log/slog"
)

// keepAutogroups: autogroups are Linux's.
func keepAutogroups(context.Context, int, int, *slog.Logger) {}
