package server

import (
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
)

// TestGraphQLOverHTTP checks the status, media type and body shape of the
// GraphQL over HTTP spec for each kind of request error and each Accept.
func TestGraphQLOverHTTP(t *testing.T) {
	h := (&Server{log: slog.New(slog.DiscardHandler)}).graphQL(newAuth("", true, slog.New(slog.DiscardHandler)), 1<<20)
	const (
		jsonType = "application/json"
		gqlType  = "application/graphql-response+json"
	)
	wsQuery := `query($id: ID!) { workspace(id: $id) { id } }`
	cases := []struct {
		name, accept, body string
		wantStatus         int
		wantType           string
		wantData           bool   // the result has a "data" key
		wantCode           string // extensions.code of the first error; "" for none
	}{
		{"ok json", jsonType, `{"query":"{ __typename }"}`, 200, jsonType, true, ""},
		{"ok graphql-response", gqlType, `{"query":"{ __typename }"}`, 200, gqlType, true, ""},
		{"ok without Accept", "", `{"query":"{ __typename }"}`, 200, jsonType, true, ""},
		{"parse json", jsonType, `{"query":"{"}`, 200, jsonType, false, "GRAPHQL_PARSE_FAILED"},
		{"parse graphql-response", gqlType, `{"query":"{"}`, 400, gqlType, false, "GRAPHQL_PARSE_FAILED"},
		{"validate json", jsonType, `{"query":"{ nope }"}`, 200, jsonType, false, "GRAPHQL_VALIDATION_FAILED"},
		{"validate graphql-response", gqlType, `{"query":"{ nope }"}`, 400, gqlType, false, "GRAPHQL_VALIDATION_FAILED"},
		{"variables json", jsonType, `{"query":"` + wsQuery + `","variables":{"id":{"x":1}}}`, 200, jsonType, false, "GRAPHQL_VALIDATION_FAILED"},
		{"variables graphql-response", gqlType, `{"query":"` + wsQuery + `","variables":{"id":{"x":1}}}`, 400, gqlType, false, "GRAPHQL_VALIDATION_FAILED"},
		{"missing variable graphql-response", gqlType, `{"query":"` + wsQuery + `"}`, 400, gqlType, false, "GRAPHQL_VALIDATION_FAILED"},
		{"body not JSON json", jsonType, `{"query":`, 400, jsonType, false, ""},
		{"body not JSON graphql-response", gqlType, `{"query":`, 400, gqlType, false, ""},
		{"preferred of two", gqlType + ", " + jsonType + ";q=0.9", `{"query":"{"}`, 400, gqlType, false, "GRAPHQL_PARSE_FAILED"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			req := httptest.NewRequest(http.MethodPost, "/query", strings.NewReader(c.body))
			req.Header.Set("Content-Type", "application/json")
			if c.accept != "" {
				req.Header.Set("Accept", c.accept)
			}
			checkGraphQLAnswer(t, h, req, c.wantStatus, c.wantType, c.wantData, c.wantCode)
		})
	}
	t.Run("GET parse json", func(t *testing.T) {
		req := httptest.NewRequest(http.MethodGet, "/query?query="+url.QueryEscape("{"), nil)
		req.Header.Set("Accept", jsonType)
		checkGraphQLAnswer(t, h, req, 200, jsonType, false, "GRAPHQL_PARSE_FAILED")
	})
	t.Run("GET parse graphql-response", func(t *testing.T) {
		req := httptest.NewRequest(http.MethodGet, "/query?query="+url.QueryEscape("{"), nil)
		req.Header.Set("Accept", gqlType)
		checkGraphQLAnswer(t, h, req, 400, gqlType, false, "GRAPHQL_PARSE_FAILED")
	})
}

func checkGraphQLAnswer(t *testing.T, h http.Handler, req *http.Request, wantStatus int, wantType string, wantData bool, wantCode string) {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	res := rec.Result()
	body, _ := io.ReadAll(res.Body)
	if res.StatusCode != wantStatus {
		t.Errorf("status %d, want %d (body %s)", res.StatusCode, wantStatus, body)
	}
	if ct := res.Header.Get("Content-Type"); !strings.HasPrefix(ct, wantType) {
		t.Errorf("Content-Type %q, want %q", ct, wantType)
	}
	var result map[string]json.RawMessage
	if err := json.Unmarshal(body, &result); err != nil {
		t.Fatalf("body %s: %v", body, err)
	}
	if _, ok := result["data"]; ok != wantData {
		t.Errorf("data key present %t, want %t (body %s)", ok, wantData, body)
	}
	if wantData {
		if _, ok := result["errors"]; ok {
			t.Errorf("errors in a successful answer: %s", body)
		}
		return
	}
	var errs []struct {
		Message    string         `json:"message"`
		Extensions map[string]any `json:"extensions"`
	}
	if err := json.Unmarshal(result["errors"], &errs); err != nil || len(errs) == 0 {
		t.Fatalf("no errors in %s", body)
	}
	if wantCode != "" && errs[0].Extensions["code"] != wantCode {
		t.Errorf("code %v, want %s (body %s)", errs[0].Extensions["code"], wantCode, body)
	}
}
