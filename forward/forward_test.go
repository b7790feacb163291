package forward_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"tuttid/apperr"
	"tuttid/ent/agentsession"
	"tuttid/forward"
	"tuttid/instance"
	"tuttid/store/storetest"
)

// world: sessions owned by a (alive), d (down), here (this instance) and
// nobody (made before instances existed).
func world(t *testing.T, now time.Time) (*forward.Forwarder, *storetest.Store) {
	t.Helper()
	ctx := context.Background()
	st := storetest.New(t)
	st.Workspace(storetest.Workspace{ID: "w"})
	for _, id := range []string{"a", "d", "here", ""} {
		sid := "s-" + id
		st.Session(storetest.Session{ID: sid, Workspace: "w"})
		if err := st.Client.AgentSession.Update().Where(agentsession.ID(sid)).SetInstanceID(id).Exec(ctx); err != nil {
			t.Fatal(err)
		}
	}
	for id, beat := range map[string]time.Time{"a": now, "d": now.Add(-instance.DownAfter - time.Second)} {
		if err := st.Client.Instance.Create().SetID(id).SetAdvertiseURL("http://" + id + ".internal:8080").
			SetHeartbeatAt(beat).SetStartedAt(beat).Exec(ctx); err != nil {
			t.Fatal(err)
		}
	}
	reg := instance.New(instance.Config{Client: st.Client, ID: "here", Now: func() time.Time { return now }})
	return forward.New(forward.Config{Client: st.Client, Registry: reg, Token: "tok"}), st
}

func TestOwner(t *testing.T) {
	f, _ := world(t, time.Now())
	for _, tc := range []struct {
		name, session, forwardedBy string
		owner                      string // "" here
		code                       apperr.Code
		message                    string
	}{
		{name: "own session", session: "s-here"},
		{name: "no owner yet", session: "s-"},
		{name: "no such session: answered here", session: "s-none"},
		{name: "live owner", session: "s-a", owner: "a"},
		{name: "owner down", session: "s-d", code: apperr.SessionUnavailable, message: `instance "d", which is down`},
		{name: "a forwarded command is not forwarded again", session: "s-a", forwardedBy: "b",
			code: apperr.SessionUnavailable, message: "not forwarded again"},
		{name: "a forwarded command of its own session runs", session: "s-here", forwardedBy: "b"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o, err := f.Owner(context.Background(), "w", tc.session, tc.forwardedBy)
			if tc.code != "" {
				if apperr.CodeOf(err) != tc.code || !strings.Contains(err.Error(), tc.message) {
					t.Fatalf("Owner: %v, want %s with %q", err, tc.code, tc.message)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got := ""
			if o != nil {
				got = o.ID
			}
			if got != tc.owner {
				t.Errorf("owner %q, want %q", got, tc.owner)
			}
		})
	}
}

func TestSend(t *testing.T) {
	f, _ := world(t, time.Now())
	var seen *http.Request
	var body string
	owner := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen = r
		b, _ := io.ReadAll(r.Body)
		body = string(b)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusConflict)
		io.WriteString(w, `{"error":{"code":"agent.session_busy","message":"busy"}}`)
	}))
	defer owner.Close()
	h := http.Header{"Content-Type": {"application/json"}, "Cookie": {"secret"}, "Origin": {"http://evil.example"}}
	ans, err := f.Send(context.Background(), &instance.Info{ID: "a", AdvertiseURL: owner.URL + "/"}, http.MethodPost, "/v1/x?y=1", h, []byte(`{"requestId":"r"}`))
	if err != nil {
		t.Fatal(err)
	}
	if ans.Status != http.StatusConflict || string(ans.Body) != `{"error":{"code":"agent.session_busy","message":"busy"}}` {
		t.Errorf("answer %d %s, want the owner's as it was", ans.Status, ans.Body)
	}
	if seen.URL.RequestURI() != "/v1/x?y=1" || body != `{"requestId":"r"}` || seen.Header.Get("Authorization") != "Bearer tok" ||
		seen.Header.Get(forward.Header) != "here" || seen.Header.Get("Cookie") != "" || seen.Header.Get("Origin") != "" {
		t.Errorf("the owner got %s %s %q with headers %v", seen.Method, seen.URL, body, seen.Header)
	}
}

// An owner that goes away mid-way, or never answers in time, is
// agent.session_unavailable naming it; an answer over the bound is refused.
func TestSendFailures(t *testing.T) {
	ctx := context.Background()
	dies := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusOK)
		io.WriteString(w, `{"data":`)
		w.(http.Flusher).Flush()
		conn, _, _ := w.(http.Hijacker).Hijack()
		conn.Close()
	}))
	defer dies.Close()
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-time.After(time.Second):
		}
	}))
	defer slow.Close()
	big := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, strings.Repeat("x", 2048))
	}))
	defer big.Close()

	st := storetest.New(t)
	reg := instance.New(instance.Config{Client: st.Client, ID: "here"})
	f := forward.New(forward.Config{Client: st.Client, Registry: reg, Timeout: 200 * time.Millisecond, MaxAnswer: 1024})
	for _, tc := range []struct {
		name, url string
		code      apperr.Code
		message   string
	}{
		{"dies mid-way", dies.URL, apperr.SessionUnavailable, `instance "a", which owns the session, did not answer`},
		{"too slow", slow.URL, apperr.SessionUnavailable, "did not answer within 200ms"},
		{"nobody listens", "http://127.0.0.1:1", apperr.SessionUnavailable, `instance "a"`},
		{"answer too large", big.URL, apperr.ResultTooLarge, "more than 1024 bytes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := f.Send(ctx, &instance.Info{ID: "a", AdvertiseURL: tc.url}, http.MethodPost, "/query", http.Header{}, []byte("{}"))
			if apperr.CodeOf(err) != tc.code || !strings.Contains(apperr.From(err).Message, tc.message) {
				t.Errorf("Send: %v, want %s with %q", err, tc.code, tc.message)
			}
		})
	}
}
