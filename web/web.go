// Package web serves tuttid's web GUI, a single-page app embedded in the
// binary: a Vite + TypeScript + React build (source in web/ui, built into
// web/dist by `make gui`, committed so that building tuttid needs no Node)
// that talks to the GraphQL API at /query over HTTP POST (urql) and, for
// live activity, over a graphql-transport-ws WebSocket (graphql-ws).
//
// The page shows a workspace's fork tree, the shown session's conversation
// as it streams, where forks happened, and the fork, send and stop actions.
// The page itself (index.html) is a template rendered here once, with the
// built files' content versions in their URLs.
package web

import (
	"bytes"
	"embed"
	"html/template"
	"net/http"
	"strings"

	"tuttid/webasset"
)

//go:embed index.html dist
var staticFS embed.FS

// distDir holds the built app (app.js, app.css), written by `make gui`.
const distDir = "dist"

// Endpoint is the GraphQL endpoint the page calls: an absolute path on the
// page's host, for POST and (as ws:// or wss://) for the WebSocket.
const Endpoint = "/query"

// ContentSecurityPolicy is sent with the page. Nothing but this origin:
// no inline script or style (React sets style properties through the
// CSSOM, which style-src does not govern; the app uses no component that
// injects <style> elements). connect-src 'self' also allows ws:// and
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
//   - "/NAME": a built file (app.js, app.css), cached for good
//     when asked for with the ?v= version the page uses, else revalidated;
//   - anything else: 404.
//
// Mount it under a prefix with the prefix stripped, as tuttid does:
// mux.Handle("/app/", http.StripPrefix("/app", web.Handler())). The page
// loads its files through relative URLs, so any prefix works; it calls the
// API at the absolute path Endpoint. A failure here is a broken build,
// hence the panics.
func Handler() http.Handler {
	assets, err := webasset.Load(staticFS, distDir)
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
	tmpl := template.Must(template.ParseFS(staticFS, pageTemplateName))
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
