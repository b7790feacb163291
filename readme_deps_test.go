package main

import (
	"bytes"
	"encoding/json"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestREADMEArchitectureDependsOnMatchesImports checks the README's
// architecture table against the imports `go list` finds (issue 33): every
// package a hand-written package imports from this module is named in its
// row's "depends on" column ("everything below" names every row under it),
// and sits in a row below it (or in its own row). A package the table does
// not name (ent's generated packages, a test kit) counts as the row of its
// nearest named parent directory. Test files are left out: a test may
// import from anywhere.
func TestREADMEArchitectureDependsOnMatchesImports(t *testing.T) {
	t.Parallel()
	rows := architectureRows(t, markdownLines(t, "README.md"))
	if len(rows) == 0 {
		t.Fatal("README.md: no architecture table found")
	}
	rowOf := map[string]int{} // package dir -> row index
	for i, r := range rows {
		for _, p := range r.packages {
			rowOf[p] = i
		}
	}
	find := func(dir string) (int, bool) {
		for d := dir; ; d = path.Dir(d) {
			if i, ok := rowOf[d]; ok {
				return i, true
			}
			if d == "." || d == "/" {
				return 0, false
			}
		}
	}
	module, imports := goListImports(t)
	var problems []string
	for dir, deps := range imports {
		from, ok := rowOf[dir]
		if !ok {
			continue // not in the table: TestREADMEArchitectureMatchesGoList says so when it must be
		}
		for _, imp := range deps {
			if imp != module && !strings.HasPrefix(imp, module+"/") {
				continue
			}
			impDir := strings.TrimPrefix(strings.TrimPrefix(imp, module), "/")
			if impDir == "" {
				impDir = "."
			}
			to, ok := find(impDir)
			if !ok {
				problems = append(problems, dir+" imports "+impDir+", which no row names")
				continue
			}
			if to == from {
				continue
			}
			if to < from {
				problems = append(problems, dir+" imports "+impDir+", a row above it (`"+rows[to].packages[0]+"`): move a row, or the code")
				continue
			}
			if !rows[from].lists(rows[to]) {
				name := rows[to].packages[0]
				if _, named := rowOf[impDir]; named {
					name = impDir
				}
				problems = append(problems, dir+" imports "+impDir+", which its row's \"depends on\" does not list (add `"+name+"`)")
			}
		}
	}
	slices.Sort(problems)
	problems = slices.Compact(problems)
	for _, p := range problems {
		t.Errorf("README.md architecture table: %s", p)
	}
}

type architectureRow struct {
	packages []string // first column, "." for the root
	depends  []string // the "depends on" column's backticked names
	below    bool     // "everything below"
}

// lists reports whether r's "depends on" column names a package of o.
func (r architectureRow) lists(o architectureRow) bool {
	if r.below {
		return true
	}
	for _, d := range r.depends {
		if slices.Contains(o.packages, d) {
			return true
		}
	}
	return false
}

// architectureRows is the architecture table's rows, in order.
func architectureRows(t *testing.T, lines []string) []architectureRow {
	t.Helper()
	var rows []architectureRow
	inSection, header := false, true
	for _, line := range lines {
		if strings.HasPrefix(line, "## ") {
			if inSection {
				break
			}
			inSection = strings.TrimSpace(line) == "## Architecture"
			continue
		}
		if !inSection || !strings.HasPrefix(line, "|") {
			if len(rows) > 0 {
				break
			}
			continue
		}
		cells := strings.Split(line, "|")
		if len(cells) < 5 {
			t.Fatalf("README.md architecture row with fewer than three columns: %s", line)
		}
		if header || strings.Trim(cells[1], " -:") == "" {
			header = false
			continue
		}
		var r architectureRow
		for _, m := range backtickedRE.FindAllStringSubmatch(cells[1], -1) {
			dir := strings.TrimSuffix(m[1], "/")
			if dir == "" {
				dir = "."
			}
			r.packages = append(r.packages, dir)
		}
		deps := cells[len(cells)-2]
		r.below = strings.Contains(deps, "everything below")
		for _, m := range backtickedRE.FindAllStringSubmatch(deps, -1) {
			r.depends = append(r.depends, strings.TrimSuffix(m[1], "/"))
		}
		rows = append(rows, r)
	}
	return rows
}

// goListImports is the module's path and, by package directory ("." for
// the root), the imports of its non-test Go files.
func goListImports(t *testing.T) (string, map[string][]string) {
	t.Helper()
	out, root := goList(t, "-json=Dir,Module,Imports", "./...")
	module := ""
	imports := map[string][]string{}
	dec := json.NewDecoder(bytes.NewReader(out))
	for dec.More() {
		var p struct {
			Dir     string
			Module  struct{ Path string }
			Imports []string
		}
		if err := dec.Decode(&p); err != nil {
			t.Fatal(err)
		}
		rel, err := filepath.Rel(root, p.Dir)
		if err != nil {
			t.Fatal(err)
		}
		module = p.Module.Path
		imports[filepath.ToSlash(rel)] = p.Imports
	}
	return module, imports
}
