package server_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// otherPortWorkspace is what the other port's page tries to create.
const otherPortWorkspace = "pwned-from-another-port"

// otherPortServer is a web server on another loopback port of tuttid's
// host: its page tries to read and use tuttid's credential.
type otherPortServer struct {
	url     string
	mu      sync.Mutex
	headers []string // every request's Cookie and Authorization headers
}

func (o *otherPortServer) received() []string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return append([]string(nil), o.headers...)
}

// startOtherPortServer serves a page that, in the browser, reads its
// cookies and storage, posts a mutation to tuttid (at tuttidURL) with the
// browser's credentials (a "simple" request, so no preflight stops it; once
// in cors mode, once no-cors), and runs the mutation over a WebSocket with
// an empty connection_init. window.__result holds what it got.
func startOtherPortServer(t *testing.T, tuttidURL string) *otherPortServer {
	t.Helper()
	o := &otherPortServer{}
	mutation := fmt.Sprintf(`mutation { createWorkspace(input: {name: %q, rootPath: "/tmp"}) { id } }`, otherPortWorkspace)
	wsURL := "ws" + strings.TrimPrefix(tuttidURL, "http") + "/query"
	page := fmt.Sprintf(`<!DOCTYPE html><html><body><script>
(async () => {
  const tuttid = %q, ws = %q, mutation = %q;
  const body = JSON.stringify({ query: mutation });
  const r = { cookie: document.cookie, stored: localStorage.getItem("tuttid-token") || "" };
  try {
    const resp = await fetch(tuttid + "/query", { method: "POST", credentials: "include", headers: { "Content-Type": "text/plain" }, body });
    r.fetch = "status " + resp.status + " " + (await resp.text());
  } catch (e) {
    r.fetch = "failed: " + e;
  }
  try {
    await fetch(tuttid + "/query", { method: "POST", mode: "no-cors", credentials: "include", headers: { "Content-Type": "text/plain" }, body });
    r.noCors = "sent";
  } catch (e) {
    r.noCors = "failed: " + e;
  }
  r.ws = await new Promise((resolve) => {
    const s = new WebSocket(ws, "graphql-transport-ws");
    s.onopen = () => s.send(JSON.stringify({ type: "connection_init", payload: {} }));
    s.onmessage = (m) => {
      const f = JSON.parse(m.data);
      if (f.type === "connection_ack") s.send(JSON.stringify({ id: "1", type: "subscribe", payload: { query: mutation } }));
      else if (f.type === "next") resolve("mutated: " + m.data);
    };
    s.onclose = (e) => resolve("closed " + e.code);
    setTimeout(() => resolve("timeout"), 10000);
  });
  window.__result = r;
})();
</script></body></html>`, tuttidURL, wsURL, mutation)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		o.mu.Lock()
		for _, k := range []string{"Cookie", "Authorization"} {
			if v := r.Header.Get(k); v != "" {
				o.headers = append(o.headers, k+": "+v)
			}
		}
		o.mu.Unlock()
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = w.Write([]byte(page))
	}))
	t.Cleanup(srv.Close)
	o.url = srv.URL
	return o
}
