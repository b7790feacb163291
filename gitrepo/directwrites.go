package gitrepo

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// A checkpoint's commit and ref are written by tuttid itself, the way git
// writes them (a loose object; a loose ref through its .lock file), when
// the repository is one where that is exactly what git would do: SHA-1
// objects, the files ref backend, no core.sharedRepository permissions.
// Each saves a git process at every turn's end (a few milliseconds each,
// more on a loaded machine); any other repository, or any surprise, goes
// through git commit-tree and git update-ref as before.

// direct says whether r's repository takes directly written objects and
// refs, and what git makes of file modes there (for trees built in
// process); it is read once, when r is opened.
type direct struct {
	objects bool
	refs    bool
	// fileMode, symlinks: core.fileMode and core.symlinks (true unless
	// set false).
	fileMode bool
	symlinks bool
	// plainBlobs: no end-of-line setting and no attributes file outside
	// the working tree, so a file's blob is its bytes unless a
	// .gitattributes of the working tree says otherwise.
	plainBlobs bool
}

// probeConfig reads, in one git call, what Open needs from the
// configuration: whether objects and refs may be written directly (the
// object format, the ref storage, the shared-repository setting), the
// file-mode settings and the global excludes file.
func (g *Git) probeConfig(ctx context.Context, root, commonDir string) (direct, string) {
	out, err := g.run(ctx, call{dir: root}, "config", "-z", "--get-regexp",
		`^(core\.sharedrepository|core\.excludesfile|core\.filemode|core\.symlinks|core\.autocrlf|core\.attributesfile|extensions\..*)$`)
	if err != nil && exitCode(err) != 1 { // 1: none set
		return direct{}, globalExcludes("", g.env)
	}
	var excludes string
	for _, rec := range splitZ(out) {
		if key, val, _ := strings.Cut(rec, "\n"); strings.EqualFold(key, "core.excludesfile") {
			excludes = val
		}
	}
	return g.probeDirect(out, commonDir), globalExcludes(excludes, g.env)
}

// probeDirect decides direct from probeConfig's output.
func (g *Git) probeDirect(out []byte, commonDir string) direct {
	d := direct{objects: true, refs: true, fileMode: true, symlinks: true, plainBlobs: true}
	attributes := ""
	for _, rec := range splitZ(out) {
		key, val, hasVal := strings.Cut(rec, "\n")
		switch strings.ToLower(key) {
		case "extensions.objectformat":
			if !strings.EqualFold(val, "sha1") {
				d.objects, d.refs = false, false
			}
		case "extensions.refstorage":
			if !strings.EqualFold(val, "files") {
				d.objects, d.refs = false, false
			}
		case "core.sharedrepository":
			d.objects, d.refs = false, false
		case "core.filemode":
			d.fileMode = configTrue(val, hasVal)
		case "core.symlinks":
			d.symlinks = configTrue(val, hasVal)
		case "core.autocrlf":
			// "input" converts too.
			d.plainBlobs = !configTrue(val, hasVal)
		case "core.attributesfile":
			attributes = val
		}
	}
	files := []string{
		filepath.Join(commonDir, "info", "attributes"),
		globalFile(attributes, "attributes", g.env),
		"/etc/gitattributes", // Debian's git; other builds keep theirs under their prefix
	}
	if bin, err := exec.LookPath(g.bin); err == nil {
		files = append(files, filepath.Join(filepath.Dir(filepath.Dir(bin)), "etc", "gitattributes"))
	}
	for _, f := range files {
		if _, err := os.Stat(f); f != "" && !errors.Is(err, fs.ErrNotExist) {
			d.plainBlobs = false
		}
	}
	if _, err := os.Stat(filepath.Join(commonDir, "reftable")); err == nil {
		d.objects, d.refs = false, false
	}
	return d
}

// configTrue reads a git boolean (a key without a value is true; the last
// setting wins, as probeDirect reads them in order).
func configTrue(val string, hasVal bool) bool {
	if !hasVal {
		return true
	}
	switch strings.ToLower(strings.TrimSpace(val)) {
	case "false", "no", "off", "0", "":
		return false
	}
	return true
}
