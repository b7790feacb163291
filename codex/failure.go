package codex

import (
	"encoding/json"

	"tuttid/agent"
)

// wireCodexError is Codex's TurnError (0.169.0, 0.171.0): the message and
// codexErrorInfo, which is either a bare string ("usageLimitExceeded") or
// an object with one key naming the kind ({"httpConnectionFailed":
// {"httpStatusCode": 401}}).
type wireCodexError struct {
	Message           string          `json:"message"`
	CodexErrorInfo    json.RawMessage `json:"codexErrorInfo"`
	AdditionalDetails *string         `json:"additionalDetails"`
}

// failure classifies a Codex error. Any kind that carries HTTP 401 is
// agent.ErrorUnauthorized: Codex 0.169 reports a refused key as
// httpConnectionFailed {401}, not as its "unauthorized" kind.
func (e wireCodexError) failure() agent.TurnFailure {
	f := agent.TurnFailure{Message: e.Message}
	f.Code, f.HTTPStatus = errorKind(e.CodexErrorInfo)
	if f.HTTPStatus == 401 {
		f.Code = agent.ErrorUnauthorized
	}
	return f
}

// errorKind reads codexErrorInfo: its kind and the HTTP status it carries.
func errorKind(raw json.RawMessage) (kind string, status int) {
	if len(raw) == 0 || string(raw) == "null" {
		return "", 0
	}
	if json.Unmarshal(raw, &kind) == nil {
		return kind, 0
	}
	var obj map[string]json.RawMessage
	if json.Unmarshal(raw, &obj) != nil || len(obj) != 1 {
		return "other", 0
	}
	for k, v := range obj {
		kind = k
		var detail struct {
			HTTPStatusCode *int `json:"httpStatusCode"`
		}
		if json.Unmarshal(v, &detail) == nil && detail.HTTPStatusCode != nil {
			status = *detail.HTTPStatusCode
		}
	}
	return kind, status
}
