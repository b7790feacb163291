// Package web serves tuttid's web GUI: a single-page app (plain HTML, CSS
// and JavaScript modules, no build step) embedded in the binary, that talks
// to the GraphQL API at /query over HTTP POST and, for live activity, over a
// graphql-transport-ws WebSocket to the same path.
//
// The page lists a workspace's sessions (forks indented under their
// parents), shows the active session's turns and messages as they stream,
// sends messages, interrupts a running turn, and forks: the whole
// conversation ("Fork conversation") or through a completed turn ("Fork from
// here"), then activates the child, whose header links back to its parent.
package web

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"html/template"
	"io/fs"
	"net/http"
	"path"
	"strconv"
	"strings"
	"sync"
	"time"
)

//go:embed static
var staticFS embed.FS

// Endpoint is the GraphQL endpoint the page calls: an absolute path on the
// page's host, for POST and (as ws:// or wss://) for the WebSocket.
const Endpoint = "/query"

// ContentSecurityPolicy is sent with the page. Nothing but this origin:
// no inline script or style (the app sets styles only through the CSSOM,
// which style-src does not govern). connect-src 'self' also allows ws:// and
// wss:// to the same host (CSP Level 3, as Chromium, Firefox and Safari
// implement it); the GUI tests check that the subscription is not blocked.
const ContentSecurityPolicy = "default-src 'self'; " +
	"script-src 'self'; " +
	"style-src 'self'; " +
	"img-src 'self' data:; " +
	"font-src 'self'; " +
	"connect-src 'self'; " +
	"object-src 'none'; " +
	"base-uri 'none'; " +
	"form-action 'none'; " +
	"frame-ancestors 'none'"

const (
	cacheImmutable   = "public, max-age=31536000, immutable"
	cacheRevalidate  = "no-cache"
	minGzipSize      = 1024
	allowedMethods   = "GET, HEAD"
	htmlContentType  = "text/html; charset=utf-8"
	plainContentType = "text/plain; charset=utf-8"
	pageTemplateName = "index.html"
)

// asset is one embedded file, ready to serve.
type asset struct {
	body        []byte
	contentType string
	version     string // short content hash, used in ?v= for cache busting
	etag        string

	gzOnce sync.Once
	gzBody []byte // nil when compressing does not pay off
}

func newAsset(body []byte, contentType string) *asset {
	sum := sha256.Sum256(body)
	v := hex.EncodeToString(sum[:6])
	return &asset{body: body, contentType: contentType, version: v, etag: `"` + v + `"`}
}

func (a *asset) gzipped() []byte {
	a.gzOnce.Do(func() {
		if len(a.body) < minGzipSize || !strings.HasPrefix(a.contentType, "text/") {
			return
		}
		var buf bytes.Buffer
		zw, err := gzip.NewWriterLevel(&buf, gzip.BestCompression)
		if err != nil {
			return
		}
		if _, err := zw.Write(a.body); err != nil {
			return
		}
		if err := zw.Close(); err != nil {
			return
		}
		if buf.Len() < len(a.body) {
			a.gzBody = buf.Bytes()
		}
	})
	return a.gzBody
}

// contentTypeFor maps the embedded files' extensions to media types without
// depending on the system's MIME tables.
func contentTypeFor(name string) string {
	switch path.Ext(name) {
	case ".js":
		return "text/javascript; charset=utf-8"
	case ".css":
		return "text/css; charset=utf-8"
	case ".html":
		return htmlContentType
	case ".svg":
		return "image/svg+xml"
	default:
		return plainContentType
	}
}

type handler struct {
	page   *asset
	assets map[string]*asset
}

// Handler returns the GUI's http.Handler. It answers GET and HEAD:
//   - "/": the page;
//   - "/NAME": an embedded file (app.js, gql.js, app.css), cached for good
//     when asked for with the ?v= version the page uses, else revalidated;
//   - anything else: 404.
//
// Mount it under a prefix with the prefix stripped, as tuttid does:
// mux.Handle("/app/", http.StripPrefix("/app", web.Handler())). The page
// loads its files through relative URLs, so any prefix works; it calls the
// API at the absolute path Endpoint.
func Handler() http.Handler {
	h := &handler{assets: make(map[string]*asset)}
	entries, err := fs.ReadDir(staticFS, "static")
	if err != nil {
		panic("web: reading embedded files: " + err.Error())
	}
	for _, e := range entries {
		if e.IsDir() || e.Name() == pageTemplateName {
			continue
		}
		body, err := staticFS.ReadFile("static/" + e.Name())
		if err != nil {
			panic("web: reading embedded file: " + err.Error())
		}
		h.assets[e.Name()] = newAsset(body, contentTypeFor(e.Name()))
	}
	tmpl := template.Must(template.ParseFS(staticFS, "static/"+pageTemplateName))
	url := func(name string) string {
		a, ok := h.assets[name]
		if !ok {
			panic("web: missing embedded file " + name)
		}
		return name + "?v=" + a.version
	}
	var buf bytes.Buffer
	if err := tmpl.Execute(&buf, map[string]string{
		"Endpoint": Endpoint,
		"CSS":      url("app.css"),
		"JS":       url("app.js"),
	}); err != nil {
		panic("web: rendering the page: " + err.Error())
	}
	h.page = newAsset(buf.Bytes(), htmlContentType)
	return h
}

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p := r.URL.Path
	var a *asset
	if p == "/" || p == "" {
		a = h.page
	} else if name, ok := strings.CutPrefix(p, "/"); ok && !strings.Contains(name, "/") {
		a = h.assets[name]
	}
	if a == nil {
		http.NotFound(w, r)
		return
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", allowedMethods)
		http.Error(w, http.StatusText(http.StatusMethodNotAllowed), http.StatusMethodNotAllowed)
		return
	}

	hdr := w.Header()
	hdr.Set("X-Content-Type-Options", "nosniff")
	hdr.Set("Content-Type", a.contentType)
	if a == h.page {
		hdr.Set("Content-Security-Policy", ContentSecurityPolicy)
		hdr.Set("Referrer-Policy", "same-origin")
		hdr.Set("Cache-Control", cacheRevalidate)
	} else if r.URL.Query().Get("v") == a.version {
		hdr.Set("Cache-Control", cacheImmutable)
	} else {
		hdr.Set("Cache-Control", cacheRevalidate)
	}
	body, etag := a.body, a.etag
	if gz := a.gzipped(); gz != nil {
		hdr.Add("Vary", "Accept-Encoding")
		if acceptsGzip(r.Header.Get("Accept-Encoding")) {
			hdr.Set("Content-Encoding", "gzip")
			body = gz
			etag = `"` + a.version + `-gzip"`
		}
	}
	hdr.Set("ETag", etag)
	http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(body))
}

// acceptsGzip reports whether an Accept-Encoding header value accepts gzip:
// listed (or, failing that, "*") with a non-zero quality.
func acceptsGzip(header string) bool {
	gzipQ, starQ := -1.0, -1.0
	for _, part := range strings.Split(header, ",") {
		coding, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		q := 1.0
		for _, param := range strings.Split(params, ";") {
			k, v, ok := strings.Cut(strings.TrimSpace(param), "=")
			if ok && strings.EqualFold(strings.TrimSpace(k), "q") {
				if f, err := strconv.ParseFloat(strings.TrimSpace(v), 64); err == nil {
					q = f
				}
			}
		}
		switch strings.ToLower(strings.TrimSpace(coding)) {
		case "gzip", "x-gzip":
			gzipQ = max(gzipQ, q)
		case "*":
			starQ = max(starQ, q)
		}
	}
	if gzipQ >= 0 {
		return gzipQ > 0
	}
	return starQ > 0
}
