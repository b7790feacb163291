package web

import (
	"bytes"
	"compress/gzip"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
)

// newServer mounts the handler the way tuttid does, under /app/.
func newServer(t *testing.T) *httptest.Server {
	t.Helper()
	mux := http.NewServeMux()
	mux.Handle("/app/", http.StripPrefix("/app", Handler()))
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

func get(t *testing.T, srv *httptest.Server, method, target string, hdr map[string]string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, srv.URL+target, nil)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	client := &http.Client{
		Transport:     &http.Transport{DisableCompression: true},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, body
}

var refRE = regexp.MustCompile(`<script type="module" src="([^"]*)"|<link rel="stylesheet" href="([^"]*)"`)

// pageRefs returns the page-relative URLs of the page's script and style.
func pageRefs(t *testing.T, page []byte) []string {
	t.Helper()
	var refs []string
	for _, m := range refRE.FindAllSubmatch(page, -1) {
		refs = append(refs, string(m[1])+string(m[2]))
	}
	if len(refs) != 2 {
		t.Fatalf("page refs = %q, want a script and a style sheet", refs)
	}
	return refs
}

func TestWebHandlerRoutes(t *testing.T) {
	srv := newServer(t)
	_, page := get(t, srv, http.MethodGet, "/app/", nil)
	refs := pageRefs(t, page)
	var jsRef, cssRef string
	for _, r := range refs {
		if strings.HasPrefix(r, "app.js?v=") {
			jsRef = r
		}
		if strings.HasPrefix(r, "app.css?v=") {
			cssRef = r
		}
	}
	if jsRef == "" || cssRef == "" {
		t.Fatalf("page refs = %q", refs)
	}

	tests := []struct {
		name, method, target string
		status               int
		contentType          string
		cache                string
		csp                  bool
		bodyHas              string
	}{
		{"page", "GET", "/app/", 200, "text/html; charset=utf-8", "no-cache", true, `<div id="root"></div>`},
		{"page HEAD", "HEAD", "/app/", 200, "text/html; charset=utf-8", "no-cache", true, ""},
		{"script versioned", "GET", "/app/" + jsRef, 200, "text/javascript; charset=utf-8", "public, max-age=31536000, immutable", false, "forkSession"},
		{"style versioned", "GET", "/app/" + cssRef, 200, "text/css; charset=utf-8", "public, max-age=31536000, immutable", false, ".tree-title"},
		{"script without version", "GET", "/app/app.js", 200, "text/javascript; charset=utf-8", "no-cache", false, "graphql-transport-ws"},
		{"stale version revalidates", "GET", "/app/app.js?v=0", 200, "text/javascript; charset=utf-8", "no-cache", false, ""},
		{"template not served", "GET", "/app/index.html", 404, "", "", false, ""},
		{"unknown asset", "GET", "/app/nope.js", 404, "", "", false, ""},
		{"nested path", "GET", "/app/static/app.js", 404, "", "", false, ""},
		{"traversal", "GET", "/app/..%2fweb.go", 404, "", "", false, ""},
		{"post page", "POST", "/app/", 405, "", "", false, ""},
		{"delete asset", "DELETE", "/app/app.css", 405, "", "", false, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			resp, body := get(t, srv, tc.method, tc.target, nil)
			if resp.StatusCode != tc.status {
				t.Fatalf("status = %d, want %d (%s)", resp.StatusCode, tc.status, body)
			}
			if tc.status == 405 && resp.Header.Get("Allow") != "GET, HEAD" {
				t.Errorf("Allow = %q", resp.Header.Get("Allow"))
			}
			if tc.status != 200 {
				return
			}
			if got := resp.Header.Get("Content-Type"); got != tc.contentType {
				t.Errorf("Content-Type = %q, want %q", got, tc.contentType)
			}
			if got := resp.Header.Get("Cache-Control"); got != tc.cache {
				t.Errorf("Cache-Control = %q, want %q", got, tc.cache)
			}
			if got := resp.Header.Get("X-Content-Type-Options"); got != "nosniff" {
				t.Errorf("X-Content-Type-Options = %q", got)
			}
			if got := resp.Header.Get("Content-Security-Policy"); (got != "") != tc.csp || (tc.csp && got != ContentSecurityPolicy) {
				t.Errorf("Content-Security-Policy = %q", got)
			}
			if resp.Header.Get("ETag") == "" {
				t.Error("no ETag")
			}
			if tc.method == "HEAD" && len(body) != 0 {
				t.Errorf("HEAD body has %d bytes", len(body))
			}
			if tc.bodyHas != "" && !bytes.Contains(body, []byte(tc.bodyHas)) {
				t.Errorf("body lacks %q", tc.bodyHas)
			}
		})
	}
}

func TestWebPageIsStrict(t *testing.T) {
	srv := newServer(t)
	_, page := get(t, srv, http.MethodGet, "/app/", nil)
	for _, bad := range []string{"<script>", " style=", "http://", "https://", " on"} {
		if bytes.Contains(page, []byte(bad)) {
			t.Errorf("page contains %q, which the CSP (or offline use) forbids", bad)
		}
	}
	if !bytes.Contains(page, []byte(`data-endpoint="/query"`)) {
		t.Error("page does not name the /query endpoint")
	}
	for _, directive := range []string{"script-src 'self'", "connect-src 'self'", "object-src 'none'", "frame-ancestors 'none'"} {
		if !strings.Contains(ContentSecurityPolicy, directive) {
			t.Errorf("CSP lacks %q", directive)
		}
	}
	// The style sheet loads nothing (no fonts, no images from elsewhere);
	// the script evaluates no strings. The browser tests check that the
	// running page breaks no CSP rule and asks no other origin.
	checks := map[string][]string{
		"app.css": {"@import", "url("}, // local() system fonts only
		"app.js":  {"eval(", "new Function(", "fonts.googleapis", "cdn."},
	}
	for name, bad := range checks {
		_, body := get(t, srv, http.MethodGet, "/app/"+name, nil)
		for _, b := range bad {
			if bytes.Contains(body, []byte(b)) {
				t.Errorf("%s contains %q", name, b)
			}
		}
	}
}

func TestWebConditionalAndGzip(t *testing.T) {
	srv := newServer(t)
	resp, body := get(t, srv, http.MethodGet, "/app/app.js", nil)
	etag := resp.Header.Get("ETag")

	tests := []struct {
		name     string
		hdr      map[string]string
		status   int
		encoding string
	}{
		{"identity", nil, 200, ""},
		{"gzip", map[string]string{"Accept-Encoding": "gzip, deflate"}, 200, "gzip"},
		{"gzip refused", map[string]string{"Accept-Encoding": "gzip;q=0, *"}, 200, ""},
		{"star", map[string]string{"Accept-Encoding": "*"}, 200, "gzip"},
		{"not modified", map[string]string{"If-None-Match": etag}, 304, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			resp, got := get(t, srv, http.MethodGet, "/app/app.js", tc.hdr)
			if resp.StatusCode != tc.status {
				t.Fatalf("status = %d, want %d", resp.StatusCode, tc.status)
			}
			if enc := resp.Header.Get("Content-Encoding"); enc != tc.encoding {
				t.Fatalf("Content-Encoding = %q, want %q", enc, tc.encoding)
			}
			if !strings.Contains(resp.Header.Get("Vary"), "Accept-Encoding") {
				t.Errorf("Vary = %q", resp.Header.Get("Vary"))
			}
			if tc.status != 200 {
				return
			}
			if tc.encoding == "gzip" {
				zr, err := gzip.NewReader(bytes.NewReader(got))
				if err != nil {
					t.Fatal(err)
				}
				if got, err = io.ReadAll(zr); err != nil {
					t.Fatal(err)
				}
			}
			if !bytes.Equal(got, body) {
				t.Error("body differs from the identity body")
			}
		})
	}
}

// TestWebMountedAtRoot: the handler also works without a prefix.
func TestWebMountedAtRoot(t *testing.T) {
	srv := httptest.NewServer(Handler())
	t.Cleanup(srv.Close)
	for target, want := range map[string]int{"/": 200, "/app.css": 200, "/app.js": 200, "/app/": 404} {
		if resp, _ := get(t, srv, http.MethodGet, target, nil); resp.StatusCode != want {
			t.Errorf("GET %s = %d, want %d", target, resp.StatusCode, want)
		}
	}
}
