// Package graphiql serves the GraphiQL IDE with all of its JavaScript and CSS
// embedded in the binary, so that it works on machines without internet
// access (unlike gqlgen's playground.Handler, which loads them from a CDN).
//
// The vendored files, their versions and the command that refreshes them are
// listed in assets/VERSIONS.txt.
package graphiql

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

//go:embed assets
var assetFS embed.FS

// assetPrefix is the path, relative to the handler's root, under which the
// embedded files are served.
const assetPrefix = "/graphiql/assets/"

// contentSecurityPolicy allows nothing but this origin. 'unsafe-inline' for
// styles is needed because GraphiQL's components (CodeMirror, emotion) inject
// <style> elements at run time; data: fonts and images are embedded in
// graphiql.min.css. 'self' also covers ws:// and wss:// to the same host for
// subscriptions (CSP Level 3).
const contentSecurityPolicy = "default-src 'self'; " +
	"script-src 'self'; " +
	"style-src 'self' 'unsafe-inline'; " +
	"img-src 'self' data:; " +
	"font-src 'self' data:; " +
	"connect-src 'self'; " +
	"object-src 'none'; " +
	"base-uri 'self'; " +
	"form-action 'self'; " +
	"frame-ancestors 'self'"

const (
	cacheImmutable   = "public, max-age=31536000, immutable"
	cacheRevalidate  = "no-cache"
	minGzipSize      = 1024
	defaultTitle     = "GraphiQL"
	defaultEndpoint  = "/query"
	allowedMethods   = "GET, HEAD"
	htmlContentType  = "text/html; charset=utf-8"
	plainContentType = "text/plain; charset=utf-8"
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

func (a *asset) gzipped() []byte {
	a.gzOnce.Do(func() {
		if len(a.body) < minGzipSize || !compressible(a.contentType) {
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

// loadAssets indexes the embedded files; each Handler has its own index,
// read-only once built. A failure here is a broken build, hence the panic.
func loadAssets() map[string]*asset {
	assets := make(map[string]*asset)
	entries, err := fs.ReadDir(assetFS, "assets")
	if err != nil {
		panic("graphiql: reading embedded assets: " + err.Error())
	}
	for _, e := range entries {
		if e.IsDir() {
			continue
		}
		body, err := assetFS.ReadFile("assets/" + e.Name())
		if err != nil {
			panic("graphiql: reading embedded asset: " + err.Error())
		}
		sum := sha256.Sum256(body)
		version := hex.EncodeToString(sum[:6])
		assets[e.Name()] = &asset{
			body:        body,
			contentType: contentTypeFor(e.Name()),
			version:     version,
			etag:        `"` + version + `"`,
		}
	}
	return assets
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
	default: // LICENSE-*, VERSIONS.txt
		return plainContentType
	}
}

func compressible(contentType string) bool {
	return strings.HasPrefix(contentType, "text/")
}

var pageTemplate = template.Must(template.New("page").Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="same-origin">
<link rel="icon" href="data:,">
<title>{{.Title}}</title>
{{range .Styles}}<link rel="stylesheet" href="{{.}}">
{{end}}</head>
<body>
<div id="graphiql" data-endpoint="{{.Endpoint}}"><p class="tuttid-graphiql-message">Loading GraphiQL…</p></div>
<noscript>GraphiQL needs JavaScript.</noscript>
{{range .Scripts}}<script src="{{.}}"></script>
{{end}}</body>
</html>
`))

// The page's assets in load order. React and ReactDOM must come before
// GraphiQL's UMD bundle, which reads window.React and window.ReactDOM.
var (
	pageStyles  = []string{"graphiql.min.css", "tuttid-graphiql.css"}
	pageScripts = []string{
		"react.production.min.js",
		"react-dom.production.min.js",
		"graphiql.min.js",
		"tuttid-graphiql.js",
	}
)

// assetURL is the page-relative URL of an embedded file. It has no leading
// slash so the page also works when the handler is mounted under a prefix
// (see Handler).
func assetURL(as map[string]*asset, name string) string {
	a, ok := as[name]
	if !ok {
		panic("graphiql: missing embedded asset " + name)
	}
	return strings.TrimPrefix(assetPrefix, "/") + name + "?v=" + a.version
}

type handler struct {
	page     []byte
	pageETag string
	assets   map[string]*asset
}

// Handler returns an http.Handler serving GraphiQL for the GraphQL endpoint
// at endpoint (a URL path such as "/query", or an absolute URL), with title
// as the page title. Empty arguments default to "GraphiQL" and "/query".
//
// The handler answers GET and HEAD:
//   - "/": the HTML page;
//   - "/graphiql/assets/NAME": the embedded files (JS, CSS, licences);
//   - anything else: 404.
//
// Mount it at the root, mux.Handle("/", graphiql.Handler("tuttid", "/query")),
// or under a prefix ending in a slash with the prefix stripped:
// mux.Handle("/ui/", http.StripPrefix("/ui", graphiql.Handler(...))). The page
// loads its assets through relative URLs, so both work.
//
// Queries and mutations are sent by HTTP POST to endpoint; subscriptions go
// over graphql-ws (graphql-transport-ws) to the same URL with the ws:// or
// wss:// scheme.
func Handler(title, endpoint string) http.Handler {
	if title == "" {
		title = defaultTitle
	}
	if endpoint == "" {
		endpoint = defaultEndpoint
	}
	as := loadAssets()
	data := struct {
		Title, Endpoint string
		Styles, Scripts []string
	}{Title: title, Endpoint: endpoint}
	for _, n := range pageStyles {
		data.Styles = append(data.Styles, assetURL(as, n))
	}
	for _, n := range pageScripts {
		data.Scripts = append(data.Scripts, assetURL(as, n))
	}
	var buf bytes.Buffer
	if err := pageTemplate.Execute(&buf, data); err != nil {
		panic("graphiql: rendering page: " + err.Error())
	}
	sum := sha256.Sum256(buf.Bytes())
	return &handler{
		page:     buf.Bytes(),
		pageETag: `"` + hex.EncodeToString(sum[:6]) + `"`,
		assets:   as,
	}
}

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p := r.URL.Path
	var a *asset
	switch {
	case p == "/":
	case strings.HasPrefix(p, assetPrefix):
		a = h.assets[strings.TrimPrefix(p, assetPrefix)]
		if a == nil {
			http.NotFound(w, r)
			return
		}
	default:
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
	if a == nil {
		hdr.Set("Content-Type", htmlContentType)
		hdr.Set("Content-Security-Policy", contentSecurityPolicy)
		hdr.Set("Referrer-Policy", "same-origin")
		hdr.Set("Cache-Control", cacheRevalidate)
		hdr.Set("ETag", h.pageETag)
		http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(h.page))
		return
	}

	hdr.Set("Content-Type", a.contentType)
	if r.URL.Query().Get("v") == a.version {
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
