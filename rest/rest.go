// Package rest is the REST form of the fork (POST
// /v1/workspaces/{workspaceID}/agent-sessions/{agentSessionID}/fork, with
// the design's bodies and HTTP status mapping) and of exploreSession (POST
// .../explore), and their OpenAPI document.
package rest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"time"

	"tuttid/agent"
	"tuttid/apperr"
	"tuttid/ent"
	"tuttid/explore"
	"tuttid/fork"
	"tuttid/session"
)

// maxBody bounds a request body; a fork request is a few hundred bytes.
const maxBody = 64 << 10

// Handler serves the REST endpoints.
type Handler struct {
	Forks   *fork.Service
	Explore *explore.Service
	Logger  *slog.Logger
}

// ForkPath is the fork's path pattern (POST). The server declares it too:
// the fork runs on the instance that owns the session the path names.
const ForkPath = "/v1/workspaces/{workspaceID}/agent-sessions/{agentSessionID}/fork"

// Register adds the routes to mux.
func (h *Handler) Register(mux *http.ServeMux) {
	mux.HandleFunc("POST "+ForkPath, h.fork)
	mux.HandleFunc("POST "+ExplorePath, h.explore)
	mux.HandleFunc("GET /v1/openapi.json", serveOpenAPI)
}

// ForkRequest is the design's request body.
type ForkRequest struct {
	RequestID            string                    `json:"requestId"`
	TargetAgentSessionID string                    `json:"targetAgentSessionId,omitempty"`
	LastTurnID           string                    `json:"lastTurnId,omitempty"`
	Title                *string                   `json:"title,omitempty"`
	Visible              *bool                     `json:"visible,omitempty"`
	Settings             *session.SettingsOverride `json:"settings,omitempty"`
	// Code is the child's code: {"mode": "worktree", "branch": ...}; absent
	// or "shared" is today's fork.
	Code *ForkCode `json:"code,omitempty"`
}

// ForkCode is the REST form of ForkCodeInput.
type ForkCode struct {
	Mode   string `json:"mode"`
	Branch string `json:"branch,omitempty"`
}

// ForkResponse is the design's response body.
type ForkResponse struct {
	Session Session `json:"session"`
	Fork    Lineage `json:"fork"`
}

// Session is a WorkspaceAgentSession.
type Session struct {
	ID                string                 `json:"id"`
	AgentSessionID    string                 `json:"agentSessionId"`
	WorkspaceID       string                 `json:"workspaceId"`
	Title             string                 `json:"title"`
	Provider          string                 `json:"provider"`
	ProviderSessionID string                 `json:"providerSessionId"`
	Status            string                 `json:"status"`
	Visible           bool                   `json:"visible"`
	Cwd               string                 `json:"cwd"`
	Settings          agent.ComposerSettings `json:"settings"`
	RuntimeContext    map[string]any         `json:"runtimeContext"`
	CreatedAt         time.Time              `json:"createdAt"`
	UpdatedAt         time.Time              `json:"updatedAt"`
}

// Lineage is the fork record of the response.
type Lineage struct {
	SourceAgentSessionID    string `json:"sourceAgentSessionId"`
	TargetAgentSessionID    string `json:"targetAgentSessionId"`
	SourceProviderSessionID string `json:"sourceProviderSessionId"`
	TargetProviderSessionID string `json:"targetProviderSessionId"`
	Provider                string `json:"provider"`
	LastTurnID              string `json:"lastTurnId,omitempty"`
	ForkedAtUnixMs          int64  `json:"forkedAtUnixMs"`
}

// ErrorBody is every error response: {"error":{"code":...,"message":...}}.
type ErrorBody struct {
	Error ErrorDetail `json:"error"`
}

// ErrorDetail carries a stable code and a message a person can act on.
type ErrorDetail struct {
	Code    apperr.Code `json:"code"`
	Message string      `json:"message"`
}

func (h *Handler) fork(w http.ResponseWriter, r *http.Request) {
	var req ForkRequest
	if err := decode(w, r, &req, "fork request"); err != nil {
		h.fail(r.Context(), w, err)
		return
	}
	in := fork.Input{
		WorkspaceID: r.PathValue("workspaceID"), ParentSessionID: r.PathValue("agentSessionID"),
		RequestID: req.RequestID, ChildSessionID: req.TargetAgentSessionID, LastTurnID: req.LastTurnID,
		Title: req.Title, Visible: req.Visible,
	}
	if req.Settings != nil {
		in.Settings = *req.Settings
	}
	var err error
	if in.Code, err = restCode(req.Code); err != nil {
		h.fail(r.Context(), w, err)
		return
	}
	res, err := h.Forks.Fork(r.Context(), in)
	if err != nil {
		h.fail(r.Context(), w, err)
		return
	}
	status := http.StatusCreated
	if res.Replayed {
		status = http.StatusOK
	}
	WriteJSON(w, status, ForkResponse{Session: sessionBody(res.Session), Fork: lineageBody(res.Fork)})
}

// decode reads a JSON body of at most maxBody bytes into req (what names
// it in an error): unknown fields and trailing values refused.
func decode(w http.ResponseWriter, r *http.Request, req any, what string) error {
	if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "application/json" {
		return apperr.New(apperr.UnsupportedMediaType, "send the request body as application/json")
	}
	body := http.MaxBytesReader(w, r.Body, maxBody)
	dec := json.NewDecoder(body)
	dec.DisallowUnknownFields()
	if err := dec.Decode(req); err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			return apperr.New(apperr.RequestTooLarge, "the request body is larger than %d bytes", maxBody)
		}
		if errors.Is(err, io.EOF) {
			return apperr.New(apperr.InvalidInput, "the request body is empty; send a JSON object with requestId")
		}
		return apperr.New(apperr.InvalidInput, "the request body is not a valid %s: %v", what, err)
	}
	if dec.More() {
		return apperr.New(apperr.InvalidInput, "the request body holds more than one JSON value")
	}
	return nil
}

func (h *Handler) fail(ctx context.Context, w http.ResponseWriter, err error) {
	e := apperr.From(err)
	switch {
	case apperr.Abandoned(ctx, err):
		h.Logger.DebugContext(ctx, "rest request abandoned by its client", "err", err)
	case e.Code == apperr.Internal || e.Code.HTTPStatus() >= 500:
		h.Logger.ErrorContext(ctx, "rest request failed", "code", e.Code, "err", err)
	}
	WriteError(w, e)
}

// WriteError answers e as {"error":{"code":...,"message":...}} with its
// code's status.
func WriteError(w http.ResponseWriter, e *apperr.Error) {
	WriteJSON(w, e.Code.HTTPStatus(), ErrorBody{Error: ErrorDetail{Code: e.Code, Message: e.Message}})
}

// WriteJSON answers v as JSON with status: every JSON answer of tuttid's
// HTTP surface outside GraphQL (REST, health, refusals) goes through it.
func WriteJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		status = http.StatusInternalServerError
		b = []byte(fmt.Sprintf(`{"error":{"code":%q,"message":"internal error"}}`, apperr.Internal))
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(append(b, '\n'))
}

func sessionBody(a *ent.AgentSession) Session {
	rc := a.RuntimeContext
	if rc == nil {
		rc = map[string]any{}
	}
	return Session{ID: a.ID, AgentSessionID: a.ID, WorkspaceID: a.WorkspaceID, Title: a.Title,
		Provider: a.Provider, ProviderSessionID: a.ProviderSessionID, Status: string(a.Status),
		Visible: a.Visible, Cwd: a.Cwd, Settings: a.Settings, RuntimeContext: rc,
		CreatedAt: a.CreatedAt, UpdatedAt: a.UpdatedAt}
}

func lineageBody(f *ent.SessionFork) Lineage {
	return Lineage{SourceAgentSessionID: f.ParentAgentSessionID, TargetAgentSessionID: f.ChildAgentSessionID,
		SourceProviderSessionID: f.ParentProviderSessionID, TargetProviderSessionID: f.ChildProviderSessionID,
		Provider: f.Provider, LastTurnID: f.ForkTurnID, ForkedAtUnixMs: f.ForkedAtUnixMs}
}

// restCode is the request's code for the saga.
func restCode(c *ForkCode) (*fork.CodeInput, error) {
	if c == nil {
		return nil, nil
	}
	switch c.Mode {
	case "worktree", "WORKTREE":
		return &fork.CodeInput{Worktree: true, Branch: c.Branch}, nil
	case "shared", "SHARED":
		return &fork.CodeInput{Branch: c.Branch}, nil
	}
	return nil, apperr.New(apperr.InvalidInput, "code.mode %q is not shared or worktree", c.Mode)
}
