package codex

import (
	"encoding/json"
	"testing"

	"tuttid/agent"
)

func TestTurnFailureKinds(t *testing.T) {
	for _, c := range []struct {
		name, info string
		wantCode   string
		wantStatus int
	}{
		{"none", `null`, "", 0},
		{"bare kind", `"usageLimitExceeded"`, "usageLimitExceeded", 0},
		{"model not found", `"modelNotFound"`, "modelNotFound", 0},
		{"codex's own unauthorized", `"unauthorized"`, agent.ErrorUnauthorized, 0},
		// Codex 0.169.0 and 0.171.0 on a model server answering 401.
		{"refused key", `{"httpConnectionFailed":{"httpStatusCode":401}}`, agent.ErrorUnauthorized, 401},
		{"retried stream 401", `{"responseStreamDisconnected":{"httpStatusCode":401}}`, agent.ErrorUnauthorized, 401},
		{"server error", `{"httpConnectionFailed":{"httpStatusCode":500}}`, "httpConnectionFailed", 500},
		{"no status", `{"responseStreamDisconnected":{"httpStatusCode":null}}`, "responseStreamDisconnected", 0},
		{"not steerable", `{"activeTurnNotSteerable":{"turnKind":"review"}}`, "activeTurnNotSteerable", 0},
		{"unknown shape", `[1]`, "other", 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			var e wireCodexError
			raw := `{"message":"m","codexErrorInfo":` + c.info + `}`
			if err := json.Unmarshal([]byte(raw), &e); err != nil {
				t.Fatal(err)
			}
			f := e.failure()
			if f.Code != c.wantCode || f.HTTPStatus != c.wantStatus || f.Message != "m" {
				t.Errorf("failure = %+v, want code %q status %d", f, c.wantCode, c.wantStatus)
			}
		})
	}
}
