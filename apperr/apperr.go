// Package apperr gives tuttid's failures stable codes that every transport
// maps the same way: GraphQL extensions.code, and REST bodies and statuses.
package apperr

import (
	"context"
	"errors"
	"fmt"
	"net/http"
)

// Code is a stable, documented error code.
type Code string

const (
	InvalidInput Code = "invalid_input"
	// UnsupportedMediaType: a REST body that is not application/json.
	UnsupportedMediaType Code = "unsupported_media_type"
	// ForbiddenOrigin: a browser page of a site not allowed to call tuttid.
	ForbiddenOrigin Code = "forbidden_origin"
	// ForbiddenHost: a request whose Host is not an allowed host (DNS rebinding).
	ForbiddenHost Code = "forbidden_host"
	// Unauthenticated: an API request without the token, or with a wrong one.
	Unauthenticated Code = "unauthenticated"
	// NotFound: a path no route of the HTTP server declares.
	NotFound Code = "not_found"
	// RequestTooLarge: a request body over the limit (--max-body).
	RequestTooLarge Code = "request_too_large"
	// ResultTooLarge: an unpaged list would answer more than its bound
	// (rows or bytes); the client must read it in pages.
	ResultTooLarge     Code = "result_too_large"
	Internal           Code = "internal"
	RuntimeUnavailable Code = "agent.runtime_unavailable"
	StorageUnavailable Code = "storage_unavailable"
	WorkspaceNotFound  Code = "agent.workspace_not_found"
	SessionNotFound    Code = "agent.session_not_found"
	SessionBusy        Code = "agent.session_busy"
	// SessionUnavailable: the instance that owns the session (whose Codex
	// holds its thread) is down, or went away while carrying out a
	// forwarded command; the message names the instance.
	SessionUnavailable  Code = "agent.session_unavailable"
	SessionNotBusy      Code = "agent.session_not_busy"
	TurnNotFound        Code = "agent.turn_not_found"
	UnsupportedProvider Code = "agent.unsupported_provider"
	ProviderFailed      Code = "agent.provider_failed"
	// ProviderNotSignedIn: the provider needs a sign-in before it can run
	// a turn (codexAccount.signedIn false).
	ProviderNotSignedIn Code = "agent.provider_not_signed_in"
	// ProviderLoginUnavailable: the provider could not start a login of
	// the kind asked.
	ProviderLoginUnavailable Code = "agent.provider_login_unavailable"
	// TurnNotRunning: steering a turn that is not the running one.
	TurnNotRunning Code = "agent.turn_not_running"
	ResyncRequired Code = "activity.resync_required"

	ForkUnsupportedProvider    Code = "agent.fork_unsupported_provider"
	ForkParentNotFound         Code = "agent.fork_parent_not_found"
	ForkProviderSessionMissing Code = "agent.fork_provider_session_missing"
	ForkSessionNotIdle         Code = "agent.fork_session_not_idle"
	ForkTurnNotFound           Code = "agent.fork_turn_not_found"
	ForkTurnInProgress         Code = "agent.fork_turn_in_progress"
	ForkTargetConflict         Code = "agent.fork_target_conflict"
	ForkRequestConflict        Code = "agent.fork_request_conflict"
	ForkProviderFailed         Code = "agent.fork_provider_failed"
	ForkPersistenceFailed      Code = "agent.fork_persistence_failed"
	// ForkNotARepository: a WORKTREE fork of a session outside a git repository.
	ForkNotARepository Code = "agent.fork_not_a_repository"
	// ForkCodeFailed: the child's worktree could not be made, or the
	// workspace's worktreeSetup failed; nothing was left behind. A restore
	// whose worktree cannot be made again answers it too (the sessions stay
	// archived).
	ForkCodeFailed Code = "agent.fork_code_failed"
	// SessionHasChanges: deleting a WORKTREE session whose files hold
	// changes never applied, without discardChanges.
	SessionHasChanges Code = "agent.session_has_changes"

	ApprovalNotFound        Code = "agent.approval_not_found"
	ApprovalAlreadyResolved Code = "agent.approval_already_resolved"

	// ExplorationNotFound: no such exploration of the session, or no
	// branch of that name in it.
	ExplorationNotFound Code = "agent.exploration_not_found"
)

// httpStatus follows the spec's mapping: 400 bad input, 404 missing, 409
// state conflicts, 422 unsupported provider, 502 provider failure, 503
// unavailable runtime or storage.
var httpStatus = map[Code]int{
	InvalidInput:               http.StatusBadRequest,
	UnsupportedMediaType:       http.StatusUnsupportedMediaType,
	ForbiddenOrigin:            http.StatusForbidden,
	ForbiddenHost:              http.StatusForbidden,
	Unauthenticated:            http.StatusUnauthorized,
	NotFound:                   http.StatusNotFound,
	RequestTooLarge:            http.StatusRequestEntityTooLarge,
	ResultTooLarge:             http.StatusUnprocessableEntity,
	Internal:                   http.StatusInternalServerError,
	RuntimeUnavailable:         http.StatusServiceUnavailable,
	StorageUnavailable:         http.StatusServiceUnavailable,
	WorkspaceNotFound:          http.StatusNotFound,
	SessionNotFound:            http.StatusNotFound,
	SessionBusy:                http.StatusConflict,
	SessionUnavailable:         http.StatusServiceUnavailable,
	SessionNotBusy:             http.StatusConflict,
	TurnNotFound:               http.StatusNotFound,
	UnsupportedProvider:        http.StatusUnprocessableEntity,
	ProviderFailed:             http.StatusBadGateway,
	ProviderNotSignedIn:        http.StatusConflict,
	ProviderLoginUnavailable:   http.StatusBadGateway,
	TurnNotRunning:             http.StatusConflict,
	ResyncRequired:             http.StatusGone,
	ForkUnsupportedProvider:    http.StatusUnprocessableEntity,
	ForkParentNotFound:         http.StatusNotFound,
	ForkProviderSessionMissing: http.StatusConflict,
	ForkSessionNotIdle:         http.StatusConflict,
	ForkTurnNotFound:           http.StatusBadRequest,
	ForkTurnInProgress:         http.StatusConflict,
	ForkTargetConflict:         http.StatusConflict,
	ForkRequestConflict:        http.StatusConflict,
	ForkProviderFailed:         http.StatusBadGateway,
	ForkPersistenceFailed:      http.StatusServiceUnavailable,
	ForkNotARepository:         http.StatusUnprocessableEntity,
	ForkCodeFailed:             http.StatusUnprocessableEntity,
	SessionHasChanges:          http.StatusConflict,
	ApprovalNotFound:           http.StatusNotFound,
	ApprovalAlreadyResolved:    http.StatusConflict,
	ExplorationNotFound:        http.StatusNotFound,
}

// HTTPStatus is the status a REST response carries for code.
func (c Code) HTTPStatus() int {
	if s, ok := httpStatus[c]; ok {
		return s
	}
	return http.StatusInternalServerError
}

// Error is a failure with a stable code and a message a person can act on.
// Err keeps the cause for logs; it is never shown to clients.
type Error struct {
	Code    Code
	Message string
	Err     error
}

func (e *Error) Error() string {
	if e.Err != nil {
		return fmt.Sprintf("%s: %s: %v", e.Code, e.Message, e.Err)
	}
	return fmt.Sprintf("%s: %s", e.Code, e.Message)
}

func (e *Error) Unwrap() error { return e.Err }

// New returns an Error without a cause.
func New(code Code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// Wrap returns an Error with a cause.
func Wrap(err error, code Code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...), Err: err}
}

// From finds the Error in err's chain; anything else is Internal, with a
// message that hides the cause.
func From(err error) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	return &Error{Code: Internal, Message: "internal error", Err: err}
}

// CodeOf is From(err).Code.
func CodeOf(err error) Code { return From(err).Code }

// Abandoned reports whether err is ctx's own cancellation: the client went
// away (closed the tab, opened another page) before its answer. Nothing
// failed on the server's side and nobody reads the answer, so it is no
// error to log, whatever code the layer that saw it gave it.
func Abandoned(ctx context.Context, err error) bool {
	return ctx.Err() != nil && errors.Is(err, context.Canceled)
}

// Storage reports a database failure while doing what, without leaking SQL
// to clients; the cause stays in the chain for logs.
func Storage(err error, what string) *Error {
	return Wrap(fmt.Errorf("%s: %w", what, err), StorageUnavailable, "could not %s: the database failed", what)
}
