package codex

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"tuttid/agent"
)

func TestMapError(t *testing.T) {
	for _, c := range []struct {
		code int
		msg  string
		want error // nil: only ErrProviderFailed
	}{
		{-32600, "turn not found: 019a", agent.ErrTurnNotFound},
		{-32600, "lastTurnId '019a' identifies an in-progress turn", agent.ErrTurnInProgress},
		{-32600, "no rollout found for thread id 019a", agent.ErrThreadNotFound},
		{-32600, "thread not found: 019a", agent.ErrThreadNotFound},
		{-32600, "thread not loaded: 019a", agent.ErrThreadNotFound},
		{-32600, "invalid session id: invalid character", agent.ErrThreadNotFound},
		{-32600, "no active turn to interrupt", agent.ErrTurnNotFound},
		{-32600, "thread 019a is not materialized yet; thread/turns/list is unavailable before first user message", errNotMaterialized},
		{-32600, "Invalid request: unknown variant `thread/turns/list`, expected one of `initialize`", errMethodUnsupported},
		{-32601, "Method not found", errMethodUnsupported},
		{-32603, "internal error", nil},
		{-32600, "failed to load configuration: unknown variant `bogus`, expected one of `disabled`", nil},
	} {
		err := mapError("m", fmt.Errorf("codex m: %w", &rpcError{Code: c.code, Message: c.msg}))
		var pe *agent.ProviderError
		if !errors.As(err, &pe) || pe.Method != "m" || pe.Code != c.code || pe.Message != c.msg || !errors.Is(err, agent.ErrProviderFailed) {
			t.Errorf("%q: %v", c.msg, err)
			continue
		}
		if c.want != nil && !errors.Is(err, c.want) {
			t.Errorf("%q: %v is not %v", c.msg, err, c.want)
		}
		if c.want == nil && pe.Kind != nil && c.code != -32600 {
			t.Errorf("%q: unexpected kind %v", c.msg, pe.Kind)
		}
	}
	// Transport errors pass through untouched.
	for _, e := range []error{context.DeadlineExceeded, agent.ErrRuntimeUnavailable} {
		if got := mapError("m", e); got != e {
			t.Errorf("mapError(%v) = %v", e, got)
		}
	}
}
