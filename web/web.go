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
	"embed"
	"html/template"
	"net/http"
	"strings"

	"tuttid/webasset"
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

// pageTemplateName is the page, rendered once with its assets' versions.
const pageTemplateName = "index.html"

type handler struct {
	page   *webasset.Asset
	assets map[string]*webasset.Asset
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
// API at the absolute path Endpoint. A failure here is a broken build,
// hence the panics.
func Handler() http.Handler {
	assets, err := webasset.Load(staticFS, "static", pageTemplateName)
	if err != nil {
		panic("web: " + err.Error())
	}
	url := func(name string) string {
		a, ok := assets[name]
		if !ok {
			panic("web: missing embedded file " + name)
		}
		return name + "?v=" + a.Version()
	}
	tmpl := template.Must(template.ParseFS(staticFS, "static/"+pageTemplateName))
	var buf bytes.Buffer
	if err := tmpl.Execute(&buf, map[string]string{
		"Endpoint": Endpoint,
		"CSS":      url("app.css"),
		"JS":       url("app.js"),
	}); err != nil {
		panic("web: rendering the page: " + err.Error())
	}
	return &handler{page: webasset.New(buf.Bytes(), webasset.HTMLContentType), assets: assets}
}

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p := r.URL.Path
	var a *webasset.Asset
	if p == "/" || p == "" {
		a = h.page
	} else if name, ok := strings.CutPrefix(p, "/"); ok && !strings.Contains(name, "/") {
		a = h.assets[name]
	}
	if a == nil {
		http.NotFound(w, r)
		return
	}
	if !webasset.AllowGetHead(w, r) {
		return
	}
	if a == h.page {
		a.ServePage(w, r, ContentSecurityPolicy)
		return
	}
	a.Serve(w, r, "")
}
