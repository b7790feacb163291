package server_test

import (
	"bufio"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"tuttid/agent/agenttest"
)

// TestConnectionTimeouts: a keep-alive connection that sends nothing more
// and a request whose body trickles in are closed within their bounds,
// token or not; a body sent in time is answered, and a WebSocket stays
// open and live past both bounds (issue 22, 18).
func TestConnectionTimeouts(t *testing.T) {
	const bound = 700 * time.Millisecond
	slack := 2 * time.Second
	h := startServer(t, harnessOpts{runtime: agenttest.Idle(), bodyTimeout: bound, idleTimeout: bound})
	addr := strings.TrimPrefix(h.url, "http://")
	dial := func() net.Conn {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c
	}
	// closedWithin reads c until it is closed, failing after d.
	closedWithin := func(t *testing.T, what string, c net.Conn, start time.Time, d time.Duration) {
		t.Helper()
		_ = c.SetReadDeadline(start.Add(d))
		_, err := io.Copy(io.Discard, c)
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			t.Errorf("%s: the connection is still open after %s", what, time.Since(start).Round(time.Millisecond))
			return
		}
		t.Logf("%s: closed after %s", what, time.Since(start).Round(time.Millisecond))
	}

	t.Run("idle keep-alive", func(t *testing.T) {
		c := dial()
		if _, err := io.WriteString(c, "GET /healthz HTTP/1.1\r\nHost: "+addr+"\r\n\r\n"); err != nil {
			t.Fatal(err)
		}
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil || resp.StatusCode != 200 {
			t.Fatalf("healthz: %v %v", resp, err)
		}
		resp.Body.Close()
		closedWithin(t, "idle", c, time.Now(), bound+slack)
	})

	t.Run("slow body", func(t *testing.T) {
		for _, token := range []bool{false, true} {
			c := dial()
			hdr := "POST /query HTTP/1.1\r\nHost: " + addr + "\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n"
			if token {
				hdr += "Authorization: Bearer " + h.token + "\r\n"
			}
			start := time.Now()
			if _, err := io.WriteString(c, hdr+"\r\n{"); err != nil {
				t.Fatal(err)
			}
			stop := make(chan struct{})
			go func() { // a byte every 100 ms: 100 s for the whole body
				for {
					select {
					case <-stop:
						return
					case <-time.After(100 * time.Millisecond):
						if _, err := io.WriteString(c, " "); err != nil {
							return
						}
					}
				}
			}()
			closedWithin(t, "slow body", c, start, bound+slack)
			close(stop)
		}
	})

	t.Run("a body sent in time", func(t *testing.T) {
		req, _ := http.NewRequest("POST", h.url+"/query", strings.NewReader(`{"query":"{ workspaces { id } }"}`))
		req.Header.Set("Content-Type", "application/json")
		if status, _, body := rawDo(t, withToken(req, h.token)); status != 200 {
			t.Errorf("query: %d %s", status, body)
		}
	})

	t.Run("WebSocket outlives the bounds", func(t *testing.T) {
		h := *h
		h.t = t
		ws := h.createWorkspace("ws-timeouts")
		id := h.seedSession(ws, "codex", "thread-1")
		sub := h.ws(protoTransportWS).subscribe(activityQuery, activityVars(ws, "", 0))
		h.mustSubscribed(sub, ws, "", 0)
		time.Sleep(3 * bound) // past the body's and the idle bound
		h.must(`mutation($in: UpdateSessionInput!) { updateSession(input: $in) { id } }`,
			map[string]any{"in": map[string]any{"workspaceId": ws, "agentSessionId": id, "title": "renamed"}}, nil)
		e, err := nextEvent(sub, 10*time.Second)
		if err != nil || e.Kind != "SESSION_UPDATED" {
			t.Fatalf("after %s the WebSocket gave %+v, %v; want SESSION_UPDATED", 3*bound, e, err)
		}
	})
}

func withToken(r *http.Request, token string) *http.Request {
	r.Header.Set("Authorization", "Bearer "+token)
	return r
}
