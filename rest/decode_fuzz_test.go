package rest

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"reflect"
	"testing"

	"tuttid/apperr"
)

// FuzzDecode feeds arbitrary bodies to the fork request decoder: it never
// panics; it refuses with invalid_input, request_too_large or
// unsupported_media_type only; and what it accepts is one JSON object of
// known fields, which encodes and decodes back to the same request.
func FuzzDecode(f *testing.F) {
	f.Add([]byte(`{"requestId":"r1"}`), "application/json")
	f.Add([]byte(`{"requestId":"r1","targetAgentSessionId":"c","lastTurnId":"t","title":"T","visible":false,"settings":{"model":"m","reasoningEffort":"low","permissionModeId":"read-only","planMode":true,"browserUse":false,"computerUse":true}}`), "application/json; charset=utf-8")
	f.Add([]byte(`{"requestId":"r1","extra":1}`), "application/json")
	f.Add([]byte(`{"requestId":"r1"}{"requestId":"r2"}`), "application/json")
	f.Add([]byte(``), "application/json")
	f.Add([]byte(`{"requestId":"r1"}`), "text/plain")
	f.Add([]byte(`{"title":null,"settings":null}`), "application/json")
	f.Add(bytes.Repeat([]byte(" "), maxBody+1), "application/json")
	f.Fuzz(func(t *testing.T, body []byte, contentType string) {
		r := httptest.NewRequest(http.MethodPost, "/v1/workspaces/w/agent-sessions/s/fork", bytes.NewReader(body))
		r.Header.Set("Content-Type", contentType)
		var req ForkRequest
		err := decode(httptest.NewRecorder(), r, &req, "fork request")
		if err != nil {
			switch code := apperr.CodeOf(err); code {
			case apperr.InvalidInput, apperr.RequestTooLarge, apperr.UnsupportedMediaType:
			default:
				t.Fatalf("decode refused with %s: %v", code, err)
			}
			return
		}
		if len(body) > maxBody {
			t.Fatalf("accepted a body of %d bytes", len(body))
		}
		enc, err := json.Marshal(req)
		if err != nil {
			t.Fatal(err)
		}
		r2 := httptest.NewRequest(http.MethodPost, "/", bytes.NewReader(enc))
		r2.Header.Set("Content-Type", "application/json")
		var again ForkRequest
		err = decode(httptest.NewRecorder(), r2, &again, "fork request")
		if err != nil || !reflect.DeepEqual(again, req) {
			t.Fatalf("round trip of %s: %+v, %v; want %+v", enc, again, err, req)
		}
	})
}
