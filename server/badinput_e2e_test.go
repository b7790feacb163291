package server_test

import (
	"bytes"
	"compress/gzip"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"tuttid/agent/agenttest"
)

// lockedBuffer is a log the server writes while the test reads it.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestBadInputAnswered: bodies and values a client gets wrong are answered
// with a stable client error code, not internal, and no log line (at any
// level) holds the request's body (issue 22, 19): a batch (a JSON array),
// a gzip body, afterSeq of 2^63 in a variable (over HTTP and WebSocket), a
// lowercase enum value, JSON nested 5,000 deep, a body that is not a
// GraphQL request.
func TestBadInputAnswered(t *testing.T) {
	var log lockedBuffer
	h := startServer(t, harnessOpts{runtime: agenttest.Idle(), logTo: &log})
	ws := h.createWorkspace("bad-input")
	const secret = "sk-SECRET-IN-THE-BODY"
	gz := func(s string) string {
		var b bytes.Buffer
		zw := gzip.NewWriter(&b)
		_, _ = zw.Write([]byte(s))
		_ = zw.Close()
		return b.String()
	}
	read := `{"query":"{ workspaces { id } }","variables":{"key":"` + secret + `"}}`
	activity := `{"query":"subscription($ws: ID!, $a: Int64) { activity(workspaceId: $ws, afterSeq: $a) { kind } }","variables":{"ws":"` + ws + `","a":9223372036854775808,"key":"` + secret + `"}}`
	respond := `{"query":"mutation($in: RespondToApprovalInput!) { respondToApproval(input: $in) { id } }","variables":{"key":"` + secret + `","in":{"workspaceId":"w","agentSessionId":"s","approvalId":"a","decision":"accept"}}}`
	deep := `{"query":"{ workspaces { id } }","variables":{"key":"` + secret + `","a":` + strings.Repeat("[", 5000) + strings.Repeat("]", 5000) + `}}`
	for _, tc := range []struct {
		name, body, encoding string
		status               int
		code                 string
	}{
		{"batch", `[` + read + `]`, "", 400, "invalid_input"},
		{"deep batch", strings.Repeat("[", 5000) + secret + strings.Repeat("]", 5000), "", 400, "invalid_input"},
		{"gzip", gz(read), "gzip", 415, "unsupported_media_type"},
		{"afterSeq 2^63", activity, "", 200, "invalid_input"},
		{"lowercase enum", respond, "", 200, "invalid_input"},
		{"nested 5000 deep", deep, "", 400, "invalid_input"},
		{"query not a string", `{"query":1,"variables":{"key":"` + secret + `"}}`, "", 400, "invalid_input"},
		{"not JSON", `query=` + secret, "", 400, "invalid_input"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req, _ := http.NewRequest("POST", h.url+"/query", strings.NewReader(tc.body))
			req.Header.Set("Content-Type", "application/json")
			if tc.encoding != "" {
				req.Header.Set("Content-Encoding", tc.encoding)
			}
			status, _, body := rawDo(t, withToken(req, h.token))
			if status != tc.status || graphQLCode(body) != tc.code {
				t.Errorf("got %d %.300s, want %d %s", status, body, tc.status, tc.code)
			}
			if strings.Contains(string(body), secret) {
				t.Errorf("the answer repeats the body: %s", body)
			}
		})
	}
	t.Run("afterSeq 2^63 over WebSocket", func(t *testing.T) {
		h := *h
		h.t = t
		sub := h.ws(protoTransportWS).subscribe(activityQuery, map[string]any{"ws": ws, "after": float64(1 << 63)})
		r, ok, timedOut := sub.next(10 * time.Second)
		if !ok || timedOut || len(r.Errors) != 1 || r.Errors[0].Code() != "invalid_input" {
			t.Errorf("got %+v ok=%v timedOut=%v, want one invalid_input error", r, ok, timedOut)
		}
	})
	if logs := log.String(); strings.Contains(logs, secret) || strings.Contains(logs, "level=ERROR") {
		t.Errorf("the log holds a request body or an error:\n%s", logs)
	}
}
