package codex

import (
	"errors"
	"fmt"
	"strings"

	"tuttid/agent"
	"tuttid/jsonrpc"
)

// Conditions the adapter handles itself; they never reach callers except
// inside an *agent.ProviderError as its Kind.
var (
	// errMethodUnsupported: the running Codex does not know the method.
	errMethodUnsupported = errors.New("codex method not supported")
	// errNotMaterialized: the thread has no user message yet, so it has no
	// stored history to list.
	errNotMaterialized = errors.New("codex thread has no history yet")
)

// errorTable classifies Codex's error replies. Codex reports most failures
// as -32600 with a message and no structured kind, so this is the one place
// where its messages are matched; the first matching row wins.
var errorTable = []struct {
	contains string
	kind     error
}{
	{"identifies an in-progress turn", agent.ErrTurnInProgress}, // thread/fork lastTurnId
	{"in-progress turn", agent.ErrTurnInProgress},
	{"turn not found", agent.ErrTurnNotFound},       // thread/fork lastTurnId
	{"no active turn", agent.ErrTurnNotFound},       // turn/interrupt
	{"no rollout found", agent.ErrThreadNotFound},   // thread/fork, resume, archive
	{"thread not found", agent.ErrThreadNotFound},   // turn/start on an unloaded thread
	{"thread not loaded", agent.ErrThreadNotFound},  // turns/list, read of an unknown thread
	{"invalid session id", agent.ErrThreadNotFound}, // a non-UUID thread id
	{"is not materialized yet", errNotMaterialized}, // turns/list before the first turn
	{"unknown variant", errMethodUnsupported},       // an unknown method (-32600, not -32601)
	{"method not found", errMethodUnsupported},
}

// callError names the call a failure of the JSON-RPC stream belongs to
// and gives it its meaning in agent's contract: a stream that ended is the
// runtime unavailable (the supervisor restarts Codex); a reply over the
// line bound is the provider failing that call alone. An error reply
// passes through, for mapError.
func callError(method string, err error) error {
	if err == nil {
		return nil
	}
	hint := ""
	if errors.Is(err, jsonrpc.ErrLineTooLong) {
		hint = " (codex.Config.MaxLineBytes)"
	}
	switch {
	case errors.Is(err, jsonrpc.ErrClosed):
		return fmt.Errorf("codex %s: %w: %w%s", method, agent.ErrRuntimeUnavailable, err, hint)
	case errors.Is(err, jsonrpc.ErrLineTooLong):
		return fmt.Errorf("codex %s: %w: %w%s", method, agent.ErrProviderFailed, err, hint)
	}
	return fmt.Errorf("codex %s: %w", method, err)
}

// mapError turns what a call returned into the package's error contract:
// a Codex error reply becomes an *agent.ProviderError (wrapping
// agent.ErrProviderFailed and the precise sentinel); anything else
// (transport, timeout, cancellation) passes through.
func mapError(method string, err error) error {
	if err == nil {
		return nil
	}
	var re *jsonrpc.Error
	if !errors.As(err, &re) {
		return err
	}
	pe := &agent.ProviderError{Method: method, Code: re.Code, Message: re.Message}
	if re.Code == jsonrpc.CodeMethodNotFound {
		pe.Kind = errMethodUnsupported
	}
	msg := strings.ToLower(re.Message)
	for _, row := range errorTable {
		if strings.Contains(msg, row.contains) {
			pe.Kind = row.kind
			break
		}
	}
	return fmt.Errorf("codex: %w", pe)
}
