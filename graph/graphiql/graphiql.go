// Package graphiql serves the GraphiQL IDE with all of its JavaScript and CSS
// embedded in the binary, so that it works on machines without internet
// access (unlike gqlgen's playground.Handler, which loads them from a CDN).
//
// The vendored files, their versions and the command that refreshes them are
// listed in assets/VERSIONS.txt.
package graphiql

import (
	"bytes"
	"embed"
	"html/template"
	"net/http"
	"strings"

	"tuttid/webasset"
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
	defaultTitle    = "GraphiQL"
	defaultEndpoint = "/query"
)

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
func assetURL(as map[string]*webasset.Asset, name string) string {
	a, ok := as[name]
	if !ok {
		panic("graphiql: missing embedded asset " + name)
	}
	return strings.TrimPrefix(assetPrefix, "/") + name + "?v=" + a.Version()
}

type handler struct {
	page   *webasset.Asset
	assets map[string]*webasset.Asset
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
	as, err := webasset.Load(assetFS, "assets")
	if err != nil {
		panic("graphiql: " + err.Error()) // a broken build
	}
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
	return &handler{page: webasset.New(buf.Bytes(), webasset.HTMLContentType), assets: as}
}

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p := r.URL.Path
	a := h.page
	if p != "/" {
		name, ok := strings.CutPrefix(p, assetPrefix)
		if a = h.assets[name]; !ok || a == nil {
			http.NotFound(w, r)
			return
		}
	}
	if !webasset.AllowGetHead(w, r) {
		return
	}
	if a == h.page {
		a.ServePage(w, r, contentSecurityPolicy)
		return
	}
	a.Serve(w, r, "")
}
