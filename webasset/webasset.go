// Package webasset serves files embedded in the binary the way browsers
// cache them best: a content-hash version for ?v= cache busting (cached for
// good when asked for with it, revalidated otherwise), an ETag, and gzip
// for clients that accept it. The GUI and GraphiQL both serve through it.
package webasset

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"net/http"
	"path"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Cache-Control values.
const (
	CacheImmutable  = "public, max-age=31536000, immutable"
	CacheRevalidate = "no-cache"
)

// HTMLContentType is the type of pages.
const HTMLContentType = "text/html; charset=utf-8"

// minGzipSize is where compressing starts to pay off.
const minGzipSize = 1024

// Asset is one file, ready to serve. Safe for concurrent use.
type Asset struct {
	body        []byte
	contentType string
	version     string // short content hash, used in ?v= for cache busting
	etag        string

	gzOnce sync.Once
	gzBody []byte // nil when compressing does not pay off
}

// New returns an Asset of body.
func New(body []byte, contentType string) *Asset {
	sum := sha256.Sum256(body)
	v := hex.EncodeToString(sum[:6])
	return &Asset{body: body, contentType: contentType, version: v, etag: `"` + v + `"`}
}

// Version is the content hash a page puts in ?v= to reference a.
func (a *Asset) Version() string { return a.version }

// Load reads every file of dir in fsys, except those named in skip.
func Load(fsys fs.FS, dir string, skip ...string) (map[string]*Asset, error) {
	entries, err := fs.ReadDir(fsys, dir)
	if err != nil {
		return nil, fmt.Errorf("read embedded %s: %w", dir, err)
	}
	out := make(map[string]*Asset)
	for _, e := range entries {
		if e.IsDir() || contains(skip, e.Name()) {
			continue
		}
		body, err := fs.ReadFile(fsys, path.Join(dir, e.Name()))
		if err != nil {
			return nil, fmt.Errorf("read embedded %s: %w", e.Name(), err)
		}
		out[e.Name()] = New(body, ContentTypeFor(e.Name()))
	}
	return out, nil
}

// ContentTypeFor maps file extensions to media types without depending on
// the system's MIME tables.
func ContentTypeFor(name string) string {
	switch path.Ext(name) {
	case ".js":
		return "text/javascript; charset=utf-8"
	case ".css":
		return "text/css; charset=utf-8"
	case ".html":
		return HTMLContentType
	case ".svg":
		return "image/svg+xml"
	default: // LICENSE-*, VERSIONS.txt
		return "text/plain; charset=utf-8"
	}
}

// AllowGetHead answers 405 to anything but GET and HEAD and reports
// whether the request may go on.
func AllowGetHead(w http.ResponseWriter, r *http.Request) bool {
	if r.Method == http.MethodGet || r.Method == http.MethodHead {
		return true
	}
	w.Header().Set("Allow", "GET, HEAD")
	http.Error(w, http.StatusText(http.StatusMethodNotAllowed), http.StatusMethodNotAllowed)
	return false
}

// Serve writes a with cacheControl, or, when cacheControl is empty,
// CacheImmutable if the request asks for a's current ?v= version and
// CacheRevalidate otherwise. Conditional requests get 304.
func (a *Asset) Serve(w http.ResponseWriter, r *http.Request, cacheControl string) {
	if cacheControl == "" {
		cacheControl = CacheRevalidate
		if r.URL.Query().Get("v") == a.version {
			cacheControl = CacheImmutable
		}
	}
	hdr := w.Header()
	hdr.Set("X-Content-Type-Options", "nosniff")
	hdr.Set("Content-Type", a.contentType)
	hdr.Set("Cache-Control", cacheControl)
	body, etag := a.body, a.etag
	if gz := a.gzipped(); gz != nil {
		hdr.Add("Vary", "Accept-Encoding")
		if AcceptsGzip(r.Header.Get("Accept-Encoding")) {
			hdr.Set("Content-Encoding", "gzip")
			body = gz
			etag = `"` + a.version + `-gzip"`
		}
	}
	hdr.Set("ETag", etag)
	http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(body))
}

// ServePage writes a as an HTML page: always revalidated, under the
// given Content-Security-Policy, sending no referrer to other sites.
func (a *Asset) ServePage(w http.ResponseWriter, r *http.Request, csp string) {
	w.Header().Set("Content-Security-Policy", csp)
	w.Header().Set("Referrer-Policy", "same-origin")
	a.Serve(w, r, CacheRevalidate)
}

func (a *Asset) gzipped() []byte {
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

// AcceptsGzip reports whether an Accept-Encoding header value accepts gzip:
// listed (or, failing that, "*") with a non-zero quality.
func AcceptsGzip(header string) bool {
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

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
