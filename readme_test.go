package main

// The README is the front door (issue 21): at most 200 lines, every link in
// it and in the docs resolves, and its architecture table names the
// packages `go list ./...` finds. These tests read files and run `go list`;
// they own no database and start no tuttid.

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode"
)

const readmeMaxLines = 200

// linkedMarkdown is every Markdown file whose links must resolve.
func linkedMarkdown(t *testing.T) []string {
	t.Helper()
	docs, err := filepath.Glob(filepath.Join("docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	return append([]string{"README.md", "DEVELOPERS.md"}, docs...)
}

func TestREADMEIsAtMost200Lines(t *testing.T) {
	t.Parallel()
	lines := markdownLines(t, "README.md")
	if len(lines) > readmeMaxLines {
		t.Errorf("README.md has %d lines, at most %d: move detail into docs/", len(lines), readmeMaxLines)
	}
}

func TestMarkdownLinksResolve(t *testing.T) {
	t.Parallel()
	anchors := map[string]map[string]bool{} // file -> its heading anchors
	anchorsOf := func(file string) map[string]bool {
		if a, ok := anchors[file]; ok {
			return a
		}
		a := headingAnchors(markdownLines(t, file))
		anchors[file] = a
		return a
	}
	for _, file := range linkedMarkdown(t) {
		for _, l := range markdownLinks(markdownLines(t, file)) {
			target, anchor, _ := strings.Cut(l.target, "#")
			resolved := file
			if target != "" {
				resolved = filepath.Join(filepath.Dir(file), filepath.FromSlash(target))
				if _, err := os.Stat(resolved); err != nil {
					t.Errorf("%s:%d: link %q: no file %s", file, l.line, l.target, resolved)
					continue
				}
			}
			if anchor == "" {
				continue
			}
			if !strings.HasSuffix(resolved, ".md") {
				t.Errorf("%s:%d: link %q: an anchor into a file that is not Markdown", file, l.line, l.target)
				continue
			}
			if !anchorsOf(resolved)[anchor] {
				t.Errorf("%s:%d: link %q: %s has no heading with anchor #%s", file, l.line, l.target, resolved, anchor)
			}
		}
	}
}

// TestREADMEArchitectureMatchesGoList checks the first column of the
// README's architecture table against `go list ./...`. The rule: every
// package with a hand-written (non-test) Go file must be named, except test
// kits (last path element ending in "test"); a package whose Go files are
// all generated ("// Code generated ... DO NOT EDIT.") may be named but need
// not be; nothing may be named that `go list` does not find. The root
// package is written `.`; others by their directory (`codex/codextest`).
func TestREADMEArchitectureMatchesGoList(t *testing.T) {
	t.Parallel()
	pkgs := goListPackages(t)
	named := architecturePackages(t, markdownLines(t, "README.md"))
	if len(named) == 0 {
		t.Fatal("README.md: no architecture table found (a table after the heading \"## Architecture\")")
	}
	var missing, extra []string
	for dir, p := range pkgs {
		if !named[dir] && p.required() {
			missing = append(missing, dir)
		}
	}
	for dir := range named {
		if _, ok := pkgs[dir]; !ok {
			extra = append(extra, dir)
		}
	}
	slices.Sort(missing)
	slices.Sort(extra)
	if len(missing) > 0 {
		t.Errorf("README.md architecture table: packages missing from its first column (add a row, or the name to a row): %s", strings.Join(missing, ", "))
	}
	if len(extra) > 0 {
		t.Errorf("README.md architecture table: named but not found by `go list ./...` (remove or rename): %s", strings.Join(extra, ", "))
	}
}

func markdownLines(t *testing.T, file string) []string {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
}

type mdLink struct {
	line   int
	target string
}

var (
	linkRE     = regexp.MustCompile(`\]\(([^)\s]+)\)`)
	codeSpanRE = regexp.MustCompile("`[^`]*`")
	schemeRE   = regexp.MustCompile(`^[a-zA-Z][a-zA-Z0-9+.-]*:`)
)

// markdownLinks is every relative link outside code (fenced blocks,
// indented blocks, code spans); links with a scheme (https:, mailto:) are
// left out.
func markdownLinks(lines []string) []mdLink {
	var links []mdLink
	fenced := false
	for i, line := range lines {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			fenced = !fenced
			continue
		}
		if fenced || strings.HasPrefix(line, "    ") && isIndentedCode(lines, i) {
			continue
		}
		for _, m := range linkRE.FindAllStringSubmatch(codeSpanRE.ReplaceAllString(line, ""), -1) {
			if !schemeRE.MatchString(m[1]) {
				links = append(links, mdLink{line: i + 1, target: m[1]})
			}
		}
	}
	return links
}

// isIndentedCode says whether line i is in an indented code block: it
// follows a blank line or another such line, not a list item's text.
func isIndentedCode(lines []string, i int) bool {
	for j := i - 1; j >= 0; j-- {
		switch {
		case strings.TrimSpace(lines[j]) == "":
			return true
		case !strings.HasPrefix(lines[j], "    "):
			return false
		}
	}
	return true
}

// headingAnchors is the anchors GitHub gives a file's headings: lower
// case, punctuation dropped, spaces to hyphens, "-1", "-2" on repeats.
func headingAnchors(lines []string) map[string]bool {
	anchors := map[string]bool{}
	seen := map[string]int{}
	fenced := false
	for _, line := range lines {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			fenced = !fenced
			continue
		}
		if fenced || !strings.HasPrefix(line, "#") {
			continue
		}
		text := strings.TrimSpace(strings.TrimLeft(line, "#"))
		var b strings.Builder
		for _, r := range strings.ToLower(text) {
			switch {
			case unicode.IsLetter(r), unicode.IsDigit(r), r == '-', r == '_':
				b.WriteRune(r)
			case r == ' ':
				b.WriteRune('-')
			}
		}
		a := b.String()
		if n := seen[a]; n > 0 {
			anchors[a+"-"+strconv.Itoa(n)] = true
		} else {
			anchors[a] = true
		}
		seen[a]++
	}
	return anchors
}

var backtickedRE = regexp.MustCompile("`([^`]+)`")

// architecturePackages is the set of package directories ("." for the
// root) named in the first column of the first table after "## Architecture".
func architecturePackages(t *testing.T, lines []string) map[string]bool {
	t.Helper()
	named := map[string]bool{}
	inSection, inTable := false, false
	for _, line := range lines {
		if strings.HasPrefix(line, "## ") {
			if inSection {
				break
			}
			inSection = strings.TrimSpace(line) == "## Architecture"
			continue
		}
		if !inSection {
			continue
		}
		if !strings.HasPrefix(line, "|") {
			if inTable {
				break
			}
			continue
		}
		first := strings.Split(line, "|")[1]
		if !inTable { // the header row
			inTable = true
			continue
		}
		if strings.Trim(first, " -:") == "" { // the delimiter row
			continue
		}
		for _, m := range backtickedRE.FindAllStringSubmatch(first, -1) {
			dir := strings.TrimSuffix(m[1], "/")
			if dir == "" {
				dir = "."
			}
			if named[dir] {
				t.Errorf("README.md architecture table names %q twice", dir)
			}
			named[dir] = true
		}
	}
	return named
}

type listedPackage struct {
	dir       string // relative to the module root, "." for the root
	generated bool   // every non-test Go file is generated
}

// required says whether the architecture table must name p.
func (p listedPackage) required() bool {
	return !p.generated && !strings.HasSuffix(filepath.Base(p.dir), "test")
}

var generatedRE = regexp.MustCompile(`^// Code generated .* DO NOT EDIT\.$`)

// goList runs `go list` args with the go on PATH in the module root and
// returns its output and that root.
func goList(t *testing.T, args ...string) (out []byte, root string) {
	t.Helper()
	goBin, err := exec.LookPath("go")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("no go on PATH: %v", err)
		}
		t.Skipf("no go on PATH: %v", err)
	}
	if root, err = os.Getwd(); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(goBin, append([]string{"list"}, args...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if out, err = cmd.Output(); err != nil {
		t.Fatalf("go list %v: %v\n%s", args, err, stderr.String())
	}
	return out, root
}

// goListPackages runs `go list ./...` with the go on PATH and returns the
// module's packages by directory relative to the module root.
func goListPackages(t *testing.T) map[string]listedPackage {
	t.Helper()
	out, root := goList(t, "-f", "{{.Dir}}\t{{join .GoFiles \"\\t\"}}", "./...")
	pkgs := map[string]listedPackage{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Split(line, "\t")
		rel, err := filepath.Rel(root, fields[0])
		if err != nil {
			t.Fatal(err)
		}
		p := listedPackage{dir: filepath.ToSlash(rel), generated: true}
		for _, f := range fields[1:] {
			if f != "" && !isGenerated(t, filepath.Join(fields[0], f)) {
				p.generated = false
			}
		}
		pkgs[p.dir] = p
	}
	return pkgs
}

// isGenerated reports whether a Go file carries the generated-code comment
// before its package clause.
func isGenerated(t *testing.T, file string) bool {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		line := s.Text()
		if generatedRE.MatchString(line) {
			return true
		}
		if strings.HasPrefix(line, "package ") {
			return false
		}
	}
	return false
}
