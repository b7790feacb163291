package codextest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// What the model server does for the sign-in tests: Codex's built-in
// "openai" provider pointed at it (OpenAIConfig), an API key it accepts,
// failures it answers with, the usage limits it reports, and the device
// code endpoints of Codex's sign-in service (LoginIssuerEnv).
//
// Observed on Codex 0.169.0 and 0.171.0 with the openai provider:
//
//   - Codex first tries a WebSocket (GET /v1/responses with Upgrade). A 426
//     answer makes it fall back to POST at once; anything else (a plain
//     HTTP/1.0 answer, a refused upgrade) costs five "Reconnecting... n/5"
//     error notifications and about 6 s before the fallback.
//   - After an API key login every model request carries
//     "Authorization: Bearer <key>". A 401 is retried as a stream error
//     (five "Reconnecting..." errors with codexErrorInfo
//     responseStreamDisconnected {httpStatusCode: 401}, about 6.5 s), then
//     the turn fails with httpConnectionFailed {httpStatusCode: 401}.
//   - A 500 is first retried silently (request_max_retries, 4 by default:
//     five requests), then as a stream error with an "error" notification
//     willRetry true; so six 500s in a row give one such notification.
//   - A 429 (with an OpenAI error body, no Retry-After) fails the turn at
//     once: responseTooManyFailedAttempts {httpStatusCode: 429}, no retry.
//   - x-codex-primary-used-percent, -window-minutes, -reset-at (and the
//     secondary ones) on a response become account/rateLimits/updated; the
//     percent is rounded to a whole number.
//   - model/list answers from Codex's bundled catalog: no request reaches
//     this server for it.

// LoginIssuerEnv is the environment variable that points Codex's ChatGPT
// and device code logins at another sign-in service: set it to
// ModelServer.IssuerURL so that the device code login runs offline (the
// ChatGPT login's authUrl then names this server too; its callback is
// Codex's own, on 127.0.0.1:1455).
const LoginIssuerEnv = "CODEX_APP_SERVER_LOGIN_ISSUER"

// DeviceUserCode is the code the fake sign-in service hands out.
const DeviceUserCode = "TUTT-1234"

const deviceAuthPath = "/api/accounts/deviceauth/"

type authState struct {
	apiKey     string
	failures   []failure
	limits     *RateLimitHeaders
	websockets int
	deviceReqs []string
}

type failure struct {
	status int
	msg    string
}

// RateLimitHeaders are the usage limits the server reports on every
// response, as Codex reads them.
type RateLimitHeaders struct {
	PrimaryUsedPercent     float64
	PrimaryWindowMinutes   int
	PrimaryResetsAt        time.Time
	SecondaryUsedPercent   float64
	SecondaryWindowMinutes int
}

// IssuerURL is this server's root, for LoginIssuerEnv.
func (m *ModelServer) IssuerURL() string { return m.srv.URL }

// SetAPIKey makes the server accept model requests only with
// "Authorization: Bearer key" and answer any other with 401, as OpenAI
// does for a wrong key. "" accepts every request (the default).
func (m *ModelServer) SetAPIKey(key string) {
	m.mu.Lock()
	m.auth.apiKey = key
	m.mu.Unlock()
}

// FailNext makes the next n model requests fail with the HTTP status
// (500, 429, ...) and an OpenAI error body; later ones are answered as
// scripted. Calls add up, in order.
func (m *ModelServer) FailNext(n, status int, msg string) {
	if msg == "" {
		msg = fmt.Sprintf("codextest: scripted failure %d", status)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	for range n {
		m.auth.failures = append(m.auth.failures, failure{status: status, msg: msg})
	}
}

// SetRateLimits makes every model response report these limits; nil stops.
func (m *ModelServer) SetRateLimits(h *RateLimitHeaders) {
	m.mu.Lock()
	m.auth.limits = h
	m.mu.Unlock()
}

// WebSocketAttempts counts the WebSocket upgrades Codex tried (each
// refused with 426).
func (m *ModelServer) WebSocketAttempts() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.auth.websockets
}

// DeviceAuthRequests lists the paths of the device code requests Codex
// made to the fake sign-in service.
func (m *ModelServer) DeviceAuthRequests() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]string(nil), m.auth.deviceReqs...)
}

// refusal decides whether a model request is refused before its reply:
// a scripted failure first, then a wrong key.
func (m *ModelServer) refusal(req Request) (status int, msg string, refused bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.auth.failures) > 0 {
		f := m.auth.failures[0]
		m.auth.failures = m.auth.failures[1:]
		return f.status, f.msg, true
	}
	if m.auth.apiKey != "" && req.Header.Get("Authorization") != "Bearer "+m.auth.apiKey {
		// The key is never echoed, as OpenAI does not either.
		return http.StatusUnauthorized, "Incorrect API key provided", true
	}
	return 0, "", false
}

// refuseWebSocket answers Codex's WebSocket attempt with 426, which makes
// it use plain HTTP at once.
func (m *ModelServer) refuseWebSocket(w http.ResponseWriter, r *http.Request) {
	m.mu.Lock()
	m.auth.websockets++
	m.mu.Unlock()
	writeError(w, http.StatusUpgradeRequired, "codextest: no WebSocket, use HTTP")
}

func (m *ModelServer) rateLimitHeaders(h http.Header) {
	m.mu.Lock()
	l := m.auth.limits
	m.mu.Unlock()
	if l == nil {
		return
	}
	f := func(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
	h.Set("x-codex-primary-used-percent", f(l.PrimaryUsedPercent))
	h.Set("x-codex-primary-window-minutes", strconv.Itoa(l.PrimaryWindowMinutes))
	if !l.PrimaryResetsAt.IsZero() {
		h.Set("x-codex-primary-reset-at", strconv.FormatInt(l.PrimaryResetsAt.Unix(), 10))
	}
	h.Set("x-codex-secondary-used-percent", f(l.SecondaryUsedPercent))
	h.Set("x-codex-secondary-window-minutes", strconv.Itoa(l.SecondaryWindowMinutes))
}

// serveDeviceAuth is the device code part of Codex's sign-in service: a
// user code, then "still pending" for every poll (nobody approves it).
func (m *ModelServer) serveDeviceAuth(w http.ResponseWriter, r *http.Request) {
	_, _ = io.Copy(io.Discard, r.Body)
	m.mu.Lock()
	m.auth.deviceReqs = append(m.auth.deviceReqs, r.URL.Path)
	m.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	switch strings.TrimPrefix(r.URL.Path, deviceAuthPath) {
	case "usercode":
		b, _ := json.Marshal(map[string]any{"device_auth_id": "codextest_device", "user_code": DeviceUserCode, "interval": "5"})
		_, _ = w.Write(b)
	case "token":
		w.WriteHeader(http.StatusForbidden)
		_, _ = io.WriteString(w, `{"error":"authorization_pending"}`)
	default:
		writeError(w, http.StatusNotFound, "codextest: no such endpoint "+r.URL.Path)
	}
}
