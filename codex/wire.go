package codex

import (
	"encoding/json"

	"tuttid/jsonrpc"
)

// Codex app-server v2 protocol shapes (0.169.0), only the fields tuttid
// reads. Field names follow `codex app-server generate-ts`.

type wireThreadStatus struct {
	Type string `json:"type"`
}

type wireThread struct {
	ID            string           `json:"id"`
	ForkedFromID  *string          `json:"forkedFromId"`
	ModelProvider string           `json:"modelProvider"`
	Model         *string          `json:"model"`
	Status        wireThreadStatus `json:"status"`
	Cwd           string           `json:"cwd"`
	Turns         []wireTurn       `json:"turns"`
}

type wireTurn struct {
	ID     string            `json:"id"`
	Items  []json.RawMessage `json:"items"`
	Status string            `json:"status"`
	Error  *wireCodexError   `json:"error"` // failure.go
}

// wireThreadResponse is the common part of ThreadStartResponse,
// ThreadResumeResponse and ThreadForkResponse.
type wireThreadResponse struct {
	Thread          wireThread `json:"thread"`
	Model           string     `json:"model"`
	ModelProvider   string     `json:"modelProvider"`
	Cwd             string     `json:"cwd"`
	ReasoningEffort *string    `json:"reasoningEffort"`
}

type wireTurnResponse struct {
	Turn wireTurn `json:"turn"`
}

type wireTurnsPage struct {
	Data       []wireTurn `json:"data"`
	NextCursor *string    `json:"nextCursor"`
}

type wireThreadRead struct {
	Thread wireThread `json:"thread"`
}

// Notification params tuttid projects.

type wireThreadStatusChanged struct {
	ThreadID string           `json:"threadId"`
	Status   wireThreadStatus `json:"status"`
}

type wireTurnNotification struct {
	ThreadID string   `json:"threadId"`
	Turn     wireTurn `json:"turn"`
}

type wireItemNotification struct {
	ThreadID string          `json:"threadId"`
	TurnID   string          `json:"turnId"`
	Item     jsonrpc.LineRaw `json:"item"` // projectItem copies what it keeps
}

type wireAgentMessageDelta struct {
	ThreadID string `json:"threadId"`
	TurnID   string `json:"turnId"`
	ItemID   string `json:"itemId"`
	Delta    string `json:"delta"`
}

// wireRouting is what any notification may carry to route it.
type wireRouting struct {
	ThreadID string `json:"threadId"`
	TurnID   string `json:"turnId"`
}

func strOr(p *string, def string) string {
	if p == nil {
		return def
	}
	return *p
}
