package rest

import (
	"context"
	"net/http"
	"time"

	"tuttid/explore"
	"tuttid/session"
)

// ExplorePath is exploreSession's path pattern (POST); like the fork, it
// runs on the instance that owns the session the path names.
const ExplorePath = "/v1/workspaces/{workspaceID}/agent-sessions/{agentSessionID}/explore"

// ExploreRequest is exploreSession's body.
type ExploreRequest struct {
	RequestID           string          `json:"requestId"`
	LastTurnID          string          `json:"lastTurnId,omitempty"`
	Prompt              string          `json:"prompt,omitempty"`
	CheckCommand        *string         `json:"checkCommand,omitempty"`
	CheckTimeoutSeconds int             `json:"checkTimeoutSeconds,omitempty"`
	Branches            []ExploreBranch `json:"branches"`
}

// ExploreBranch is one branch asked for.
type ExploreBranch struct {
	Name     string                    `json:"name"`
	Prompt   string                    `json:"prompt,omitempty"`
	Settings *session.SettingsOverride `json:"settings,omitempty"`
}

// ExploreResponse is exploreSession's answer.
type ExploreResponse struct {
	Exploration Exploration `json:"exploration"`
}

// Exploration is an exploration as REST shows it: GraphQL's Exploration
// with each branch's session as an id.
type Exploration struct {
	ID                  string            `json:"id"`
	WorkspaceID         string            `json:"workspaceId"`
	AgentSessionID      string            `json:"agentSessionId"`
	LastTurnID          string            `json:"lastTurnId,omitempty"`
	Prompt              string            `json:"prompt,omitempty"`
	CheckCommand        string            `json:"checkCommand,omitempty"`
	CheckTimeoutSeconds int64             `json:"checkTimeoutSeconds"`
	State               explore.State     `json:"state"`
	Branches            []ExplorationPart `json:"branches"`
	// Ranking names the branches best first.
	Ranking   []string  `json:"ranking"`
	CreatedAt time.Time `json:"createdAt"`
}

// ExplorationPart is one branch.
type ExplorationPart struct {
	Name           string              `json:"name"`
	State          explore.BranchState `json:"state"`
	AgentSessionID string              `json:"agentSessionId,omitempty"`
	ErrorCode      string              `json:"errorCode,omitempty"`
	ErrorMessage   string              `json:"errorMessage,omitempty"`
	QueuePosition  int                 `json:"queuePosition,omitempty"`
	Rank           int                 `json:"rank,omitempty"`
}

func (h *Handler) explore(w http.ResponseWriter, r *http.Request) {
	var req ExploreRequest
	if err := decode(w, r, &req, "exploration request"); err != nil {
		h.fail(r.Context(), w, err)
		return
	}
	in := explore.Input{WorkspaceID: r.PathValue("workspaceID"), ParentSessionID: r.PathValue("agentSessionID"),
		RequestID: req.RequestID, LastTurnID: req.LastTurnID, Prompt: req.Prompt, CheckCommand: req.CheckCommand,
		CheckTimeout: time.Duration(req.CheckTimeoutSeconds) * time.Second}
	for _, b := range req.Branches {
		bi := explore.BranchInput{Name: b.Name, Prompt: b.Prompt}
		if b.Settings != nil {
			bi.Settings = *b.Settings
		}
		in.Branches = append(in.Branches, bi)
	}
	res, err := h.Explore.Explore(r.Context(), in)
	if err != nil {
		h.fail(r.Context(), w, err)
		return
	}
	status := http.StatusCreated
	if res.Replayed {
		status = http.StatusOK
	}
	body, err := explorationBody(r.Context(), res.Exploration)
	if err != nil {
		h.fail(r.Context(), w, err)
		return
	}
	WriteJSON(w, status, ExploreResponse{Exploration: body})
}

func explorationBody(ctx context.Context, v *explore.View) (Exploration, error) {
	ranking, err := v.Ranking(ctx) // reads the branches' changes, ranks them
	if err != nil {
		return Exploration{}, err
	}
	out := Exploration{ID: v.ID, WorkspaceID: v.WorkspaceID, AgentSessionID: v.ParentAgentSessionID, LastTurnID: v.LastTurnID,
		Prompt: v.Exploration.Prompt, CheckCommand: v.CheckCommand, CheckTimeoutSeconds: v.CheckTimeoutMs / 1000,
		State: v.State, CreatedAt: v.CreatedAt, Branches: []ExplorationPart{}, Ranking: []string{}}
	for _, b := range v.Branches {
		p := ExplorationPart{Name: b.Row.Name, State: b.State, ErrorCode: b.ErrorCode, ErrorMessage: b.Error,
			QueuePosition: b.QueuePosition, Rank: b.Rank}
		if b.Session != nil {
			p.AgentSessionID = b.Session.ID
		}
		out.Branches = append(out.Branches, p)
	}
	for _, b := range ranking {
		out.Ranking = append(out.Ranking, b.Row.Name)
	}
	return out, nil
}
