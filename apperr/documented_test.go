package apperr

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// declaredCodes is every constant of type Code declared in the package's
// non-test files, read from the source so that a code added without an
// HTTP status or a line in docs/errors.md is found.
func declaredCodes(t *testing.T) []Code {
	t.Helper()
	fset := token.NewFileSet()
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	var codes []Code
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, decl := range f.Decls {
			gd, ok := decl.(*ast.GenDecl)
			if !ok || gd.Tok != token.CONST {
				continue
			}
			for _, spec := range gd.Specs {
				vs := spec.(*ast.ValueSpec)
				if id, ok := vs.Type.(*ast.Ident); !ok || id.Name != "Code" {
					continue
				}
				for i, v := range vs.Values {
					lit, ok := v.(*ast.BasicLit)
					if !ok || lit.Kind != token.STRING {
						t.Fatalf("%s: Code %s is not a string literal", fset.Position(v.Pos()), vs.Names[i].Name)
					}
					s, err := strconv.Unquote(lit.Value)
					if err != nil {
						t.Fatal(err)
					}
					codes = append(codes, Code(s))
				}
			}
		}
	}
	return codes
}

// errorsDocRow is a row of docs/errors.md's table: | `code` | status | when |
var errorsDocRow = regexp.MustCompile("^\\|\\s*`([^`]+)`\\s*\\|\\s*(\\d{3})\\s*\\|")

// TestEveryCodeIsDocumented fails when a Code has no HTTP status of its
// own, or docs/errors.md does not list it with that status.
func TestEveryCodeIsDocumented(t *testing.T) {
	t.Parallel()
	doc, err := os.ReadFile(filepath.Join("..", "docs", "errors.md"))
	if err != nil {
		t.Fatal(err)
	}
	documented := map[Code]int{}
	for _, line := range strings.Split(string(doc), "\n") {
		if m := errorsDocRow.FindStringSubmatch(line); m != nil {
			status, _ := strconv.Atoi(m[2])
			documented[Code(m[1])] = status
		}
	}
	codes := declaredCodes(t)
	if len(codes) < len(httpStatus) {
		t.Fatalf("found %d Code constants in the source, fewer than the %d HTTP statuses: the source scan is broken", len(codes), len(httpStatus))
	}
	for _, c := range codes {
		status, ok := httpStatus[c]
		if !ok {
			t.Errorf("code %q has no HTTP status in httpStatus", c)
			continue
		}
		switch doc, ok := documented[c]; {
		case !ok:
			t.Errorf("code %q is missing from docs/errors.md (a row | `%s` | %d | when |)", c, c, status)
		case doc != status:
			t.Errorf("code %q: docs/errors.md says HTTP %d, apperr says %d", c, doc, status)
		}
	}
	for c := range documented {
		if _, ok := httpStatus[c]; !ok {
			t.Errorf("docs/errors.md lists %q, which is not an apperr code", c)
		}
	}
}
