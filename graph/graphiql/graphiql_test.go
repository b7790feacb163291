package graphiql

import (
	"bytes"
	"compress/gzip"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"tuttid/webasset"
)

// assetRefRE finds the URLs of the page's scripts and style sheets. (The only
// other URL in the page is the empty data: favicon, which stops browsers
// from asking for /favicon.ico.)
var assetRefRE = regexp.MustCompile(`<script src="([^"]*)"|<link rel="stylesheet" href="([^"]*)"`)

// get sends a request through a real HTTP server. The client's transport is
// told not to negotiate compression so the test sees exactly what was sent.
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
		Transport: &http.Transport{DisableCompression: true},
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		},
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

// newServer mounts the handler the way tuttid does.
func newServer(t *testing.T, title, endpoint string) *httptest.Server {
	t.Helper()
	mux := http.NewServeMux()
	mux.Handle("/", Handler(title, endpoint))
	mux.HandleFunc("POST /query", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"data":null}`)
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

// pageAssets fetches the page at pagePath and returns its asset URLs resolved
// to server paths (with query).
func pageAssets(t *testing.T, srv *httptest.Server, pagePath string) []string {
	t.Helper()
	resp, body := get(t, srv, http.MethodGet, pagePath, nil)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: status %d", pagePath, resp.StatusCode)
	}
	base, err := url.Parse("http://example.invalid" + pagePath)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, m := range assetRefRE.FindAllStringSubmatch(string(body), -1) {
		raw := m[1] + m[2]
		ref, err := url.Parse(raw)
		if err != nil {
			t.Fatalf("bad asset URL %q: %v", raw, err)
		}
		if ref.IsAbs() || ref.Host != "" || strings.HasPrefix(raw, "/") {
			t.Errorf("asset URL %q is not page-relative", raw)
		}
		out = append(out, base.ResolveReference(ref).RequestURI())
	}
	if len(out) != len(pageStyles)+len(pageScripts) {
		t.Fatalf("page references %d assets %v, want %d", len(out), out, len(pageStyles)+len(pageScripts))
	}
	return out
}

func TestPage(t *testing.T) {
	srv := newServer(t, "tuttid", "/query")

	tests := []struct {
		name   string
		method string
		status int
		body   bool
	}{
		{name: "GET", method: http.MethodGet, status: http.StatusOK, body: true},
		{name: "HEAD", method: http.MethodHead, status: http.StatusOK, body: false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			resp, body := get(t, srv, tc.method, "/", nil)
			if resp.StatusCode != tc.status {
				t.Fatalf("status = %d, want %d", resp.StatusCode, tc.status)
			}
			if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/html") {
				t.Errorf("Content-Type = %q, want text/html", ct)
			}
			csp := resp.Header.Get("Content-Security-Policy")
			for _, want := range []string{"default-src 'self'", "script-src 'self';", "connect-src 'self'"} {
				if !strings.Contains(csp, want) {
					t.Errorf("Content-Security-Policy %q lacks %q", csp, want)
				}
			}
			if strings.Contains(csp, "http") || strings.Contains(csp, "unsafe-eval") {
				t.Errorf("Content-Security-Policy %q allows more than this origin", csp)
			}
			if cc := resp.Header.Get("Cache-Control"); cc != webasset.CacheRevalidate {
				t.Errorf("Cache-Control = %q, want %q", cc, webasset.CacheRevalidate)
			}
			if !tc.body {
				if len(body) != 0 {
					t.Errorf("HEAD returned a %d-byte body", len(body))
				}
				return
			}
			html := string(body)
			for _, bad := range []string{"http://", "https://", "//unpkg", "//cdn"} {
				if strings.Contains(html, bad) {
					t.Errorf("page contains %q:\n%s", bad, html)
				}
			}
			for _, want := range []string{"<title>tuttid</title>", `data-endpoint="/query"`, `<div id="graphiql"`, `<link rel="icon" href="data:,">`} {
				if !strings.Contains(html, want) {
					t.Errorf("page lacks %q:\n%s", want, html)
				}
			}
			if strings.Contains(html, "<script>") {
				t.Errorf("page has an inline script, which the CSP forbids:\n%s", html)
			}
		})
	}
}

func TestPageAssets(t *testing.T) {
	srv := newServer(t, "tuttid", "/query")
	for _, target := range pageAssets(t, srv, "/") {
		t.Run(target, func(t *testing.T) {
			if !strings.HasPrefix(target, assetPrefix) {
				t.Fatalf("asset %q is not served under %s", target, assetPrefix)
			}
			resp, body := get(t, srv, http.MethodGet, target, nil)
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("status = %d, want 200", resp.StatusCode)
			}
			ct := resp.Header.Get("Content-Type")
			switch {
			case strings.Contains(target, ".js?"):
				if !strings.HasPrefix(ct, "text/javascript") {
					t.Errorf("Content-Type = %q, want text/javascript", ct)
				}
			case strings.Contains(target, ".css?"):
				if !strings.HasPrefix(ct, "text/css") {
					t.Errorf("Content-Type = %q, want text/css", ct)
				}
			default:
				t.Errorf("unexpected asset kind %q", target)
			}
			if len(body) == 0 {
				t.Error("empty body")
			}
			if ce := resp.Header.Get("Content-Encoding"); ce != "" {
				t.Errorf("Content-Encoding = %q without Accept-Encoding", ce)
			}
			if cc := resp.Header.Get("Cache-Control"); cc != webasset.CacheImmutable {
				t.Errorf("Cache-Control = %q, want %q", cc, webasset.CacheImmutable)
			}
			if resp.Header.Get("ETag") == "" {
				t.Error("no ETag")
			}
			if nosniff := resp.Header.Get("X-Content-Type-Options"); nosniff != "nosniff" {
				t.Errorf("X-Content-Type-Options = %q", nosniff)
			}
		})
	}
}

func TestAssetContents(t *testing.T) {
	srv := newServer(t, "", "")
	tests := []struct {
		path string
		want string // a substring the file must contain
	}{
		{assetPrefix + "graphiql.min.js", "createGraphiQLFetcher"},
		{assetPrefix + "graphiql.min.js", "graphql-transport-ws"},
		{assetPrefix + "graphiql.min.css", ".graphiql-container"},
		{assetPrefix + "react.production.min.js", "react.production.min.js"},
		{assetPrefix + "react-dom.production.min.js", "react-dom.production.min.js"},
		{assetPrefix + "tuttid-graphiql.js", "subscriptionUrl"},
		{assetPrefix + "LICENSE-graphiql", "MIT"},
		{assetPrefix + "VERSIONS.txt", "graphiql"},
	}
	for _, tc := range tests {
		t.Run(tc.path+"/"+tc.want, func(t *testing.T) {
			resp, body := get(t, srv, http.MethodGet, tc.path, nil)
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("status = %d", resp.StatusCode)
			}
			if !bytes.Contains(body, []byte(tc.want)) {
				t.Errorf("%s does not contain %q", tc.path, tc.want)
			}
			// Not requested with the current ?v=, so it must revalidate.
			if cc := resp.Header.Get("Cache-Control"); cc != webasset.CacheRevalidate {
				t.Errorf("Cache-Control = %q, want %q", cc, webasset.CacheRevalidate)
			}
		})
	}
}

func TestNotFound(t *testing.T) {
	srv := newServer(t, "tuttid", "/query")
	tests := []string{
		assetPrefix + "nope.js",
		assetPrefix + "graphiql.min.js.map",
		assetPrefix,
		assetPrefix + "sub/graphiql.min.js",
		"/graphiql/",
		"/graphiql",
		"/graphiql/graphiql.min.js",
		"/assets/graphiql.min.js",
		"/index.html",
		"/favicon.ico",
		"/nope",
	}
	for _, target := range tests {
		t.Run(target, func(t *testing.T) {
			for _, method := range []string{http.MethodGet, http.MethodPost} {
				resp, _ := get(t, srv, method, target, nil)
				if resp.StatusCode != http.StatusNotFound {
					t.Errorf("%s %s: status = %d, want 404", method, target, resp.StatusCode)
				}
			}
		})
	}
}

func TestMethodNotAllowed(t *testing.T) {
	srv := newServer(t, "tuttid", "/query")
	tests := []struct{ method, path string }{
		{http.MethodPost, "/"},
		{http.MethodPut, "/"},
		{http.MethodDelete, assetPrefix + "graphiql.min.js"},
	}
	for _, tc := range tests {
		t.Run(tc.method+" "+tc.path, func(t *testing.T) {
			resp, _ := get(t, srv, tc.method, tc.path, nil)
			if resp.StatusCode != http.StatusMethodNotAllowed {
				t.Fatalf("status = %d, want 405", resp.StatusCode)
			}
			if allow := resp.Header.Get("Allow"); allow != "GET, HEAD" {
				t.Errorf("Allow = %q", allow)
			}
		})
	}
}

func TestConditionalAndGzip(t *testing.T) {
	srv := newServer(t, "tuttid", "/query")
	js := assetPrefix + "graphiql.min.js"
	plainResp, plain := get(t, srv, http.MethodGet, js, nil)
	if plainResp.StatusCode != http.StatusOK {
		t.Fatalf("status = %d", plainResp.StatusCode)
	}

	t.Run("gzip", func(t *testing.T) {
		resp, body := get(t, srv, http.MethodGet, js, map[string]string{"Accept-Encoding": "br, gzip"})
		if ce := resp.Header.Get("Content-Encoding"); ce != "gzip" {
			t.Fatalf("Content-Encoding = %q, want gzip", ce)
		}
		if !strings.Contains(resp.Header.Get("Vary"), "Accept-Encoding") {
			t.Errorf("Vary = %q", resp.Header.Get("Vary"))
		}
		if len(body) >= len(plain) {
			t.Errorf("gzip body %d bytes, plain %d", len(body), len(plain))
		}
		zr, err := gzip.NewReader(bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		got, err := io.ReadAll(zr)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, plain) {
			t.Error("gunzipped body differs from the plain one")
		}
		if resp.Header.Get("ETag") == plainResp.Header.Get("ETag") {
			t.Error("gzip and plain responses share an ETag")
		}
	})

	tests := []struct {
		name   string
		path   string
		hdr    map[string]string
		status int
	}{
		{"asset etag", js, map[string]string{"If-None-Match": plainResp.Header.Get("ETag")}, http.StatusNotModified},
		{"asset stale etag", js, map[string]string{"If-None-Match": `"stale"`}, http.StatusOK},
		{"gzip refused", js, map[string]string{"Accept-Encoding": "gzip;q=0, *"}, http.StatusOK},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			resp, _ := get(t, srv, http.MethodGet, tc.path, tc.hdr)
			if resp.StatusCode != tc.status {
				t.Fatalf("status = %d, want %d", resp.StatusCode, tc.status)
			}
			if ce := resp.Header.Get("Content-Encoding"); ce != "" {
				t.Errorf("Content-Encoding = %q, want none", ce)
			}
		})
	}

	t.Run("page etag", func(t *testing.T) {
		first, _ := get(t, srv, http.MethodGet, "/", nil)
		resp, _ := get(t, srv, http.MethodGet, "/", map[string]string{"If-None-Match": first.Header.Get("ETag")})
		if resp.StatusCode != http.StatusNotModified {
			t.Fatalf("status = %d, want 304", resp.StatusCode)
		}
	})
}

func TestMountedUnderPrefix(t *testing.T) {
	mux := http.NewServeMux()
	mux.Handle("/ui/", http.StripPrefix("/ui", Handler("tuttid", "/query")))
	srv := httptest.NewServer(mux)
	defer srv.Close()

	resp, _ := get(t, srv, http.MethodGet, "/ui", nil)
	if resp.StatusCode/100 != 3 || resp.Header.Get("Location") != "/ui/" {
		t.Errorf("GET /ui: status %d Location %q, want redirect to /ui/", resp.StatusCode, resp.Header.Get("Location"))
	}
	for _, target := range pageAssets(t, srv, "/ui/") {
		if !strings.HasPrefix(target, "/ui"+assetPrefix) {
			t.Errorf("asset %q not under /ui%s", target, assetPrefix)
			continue
		}
		resp, body := get(t, srv, http.MethodGet, target, nil)
		if resp.StatusCode != http.StatusOK || len(body) == 0 {
			t.Errorf("GET %s: status %d, %d bytes", target, resp.StatusCode, len(body))
		}
	}
}

func TestPageEscaping(t *testing.T) {
	srv := newServer(t, `<script>alert(1)</script>`, `/query?x="><script>`)
	_, body := get(t, srv, http.MethodGet, "/", nil)
	html := string(body)
	if strings.Contains(html, "<script>alert") || strings.Contains(html, `"><script>`) {
		t.Errorf("title or endpoint not escaped:\n%s", html)
	}
}
