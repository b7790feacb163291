package graph_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/99designs/gqlgen/client"
	"github.com/99designs/gqlgen/graphql/introspection"

	"tuttid/graph"
)

// introspectionQuery is the fullest introspection query gqlgen knows, as
// GraphiQL sends it.
var introspectionQuery = introspection.NewQuery(introspection.QueryOptions{OneOf: true})

// repeat joins n copies of field(i) in one selection set.
func repeat(n int, field func(i int) string) string {
	var b strings.Builder
	b.WriteString("{")
	for i := range n {
		b.WriteString(field(i))
		b.WriteString(" ")
	}
	b.WriteString("}")
	return b.String()
}

// TestQueryBoundsBeforeValidation: the small queries that made validation
// quadratic (fields sharing one alias with different arguments: an error
// for every pair; 30,000 aliases of __typename: 44 s of comparisons) are
// refused before validation with a stable code, a short answer, and little
// work. Not parallel: it measures the process's allocations.
func TestQueryBoundsBeforeValidation(t *testing.T) {
	e := newEnv(t, nil)
	e.workspace("ws")
	for _, tc := range []struct {
		name  string
		query string
	}{
		{"3,000 aliases a of workspace with different ids (89 KB)",
			repeat(3000, func(i int) string { return fmt.Sprintf(`a: workspace(id:"%d"){id}`, i) })},
		{"30,000 aliases a of __typename",
			repeat(30000, func(int) string { return "a: __typename" })},
		{"1,000 aliases a of workspace with different ids (27 KB)",
			repeat(1000, func(i int) string { return fmt.Sprintf(`a: workspace(id:"%d"){id}`, i) })},
		{"8,000 aliases a of workspace with different ids (250 KB)",
			repeat(8000, func(i int) string { return fmt.Sprintf(`a: workspace(id:"%d"){id}`, i) })},
		{"100,000 __typename without an alias",
			repeat(100000, func(int) string { return "__typename" })},
		{"a fragment spread 2^20 times through 20 fragments",
			fragmentBomb(20)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Logf("query: %d bytes", len(tc.query))
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			start := time.Now()
			resp, err := e.c.RawPost(tc.query)
			took := time.Since(start)
			runtime.ReadMemStats(&after)
			if err != nil {
				t.Fatal(err)
			}
			allocated := after.TotalAlloc - before.TotalAlloc
			t.Logf("answered in %v, %d bytes of errors, %d MiB allocated", took.Round(time.Millisecond), len(resp.Errors), allocated>>20)
			var errs []struct {
				Message    string         `json:"message"`
				Extensions map[string]any `json:"extensions"`
			}
			if err := json.Unmarshal(resp.Errors, &errs); err != nil || len(errs) != 1 {
				t.Fatalf("want one error, have %d (%.300s)", len(errs), resp.Errors)
			}
			t.Logf("%s", errs[0].Message)
			if code := errs[0].Extensions["code"]; code != "request_too_large" {
				t.Errorf("code %v, want request_too_large (%s)", code, errs[0].Message)
			}
			// Generous: the refusal costs a parse of the query; validation
			// of the first of these alone allocated gigabytes.
			if allocated > 64<<20 {
				t.Errorf("%d MiB allocated to refuse a %d-byte query", allocated>>20, len(tc.query))
			}
			if took > 20*time.Second {
				t.Errorf("took %v", took)
			}
		})
	}
}

// fragmentBomb is a query whose fragment F0 spreads F1 twice, F1 spreads F2
// twice, and so on: n fragments that expand to 2^n fields.
func fragmentBomb(n int) string {
	var b strings.Builder
	b.WriteString("{ ...F0 }\n")
	for i := range n {
		fmt.Fprintf(&b, "fragment F%d on Query { ...F%d ...F%d }\n", i, i+1, i+1)
	}
	fmt.Fprintf(&b, "fragment F%d on Query { __typename }\n", n)
	return b.String()
}

// TestQueryBoundsCapValidationErrors: a query within the bounds whose
// every pair of fields conflicts answers a bounded list of errors.
func TestQueryBoundsCapValidationErrors(t *testing.T) {
	t.Parallel()
	// Validation needs no service.
	h := graph.NewHandler(graph.HandlerConfig{})
	// 300 fields a of workspace: 44,850 conflicting pairs.
	query := repeat(300, func(i int) string { return fmt.Sprintf(`a: workspace(id:"%d"){id}`, i) })
	body, _ := json.Marshal(map[string]string{"query": query})
	req := httptest.NewRequest(http.MethodPost, "/query", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	var resp struct {
		Errors []struct {
			Message    string         `json:"message"`
			Extensions map[string]any `json:"extensions"`
		} `json:"errors"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &resp); err != nil {
		t.Fatalf("%v: %.300s", err, rec.Body.Bytes())
	}
	errs := resp.Errors
	t.Logf("%d errors, %d bytes", len(errs), rec.Body.Len())
	if len(errs) == 0 || len(errs) > 101 {
		t.Fatalf("%d errors (%d bytes), want at most 101", len(errs), rec.Body.Len())
	}
	for _, e := range errs {
		if e.Extensions["code"] != "GRAPHQL_VALIDATION_FAILED" {
			t.Errorf("error %q has code %v", e.Message, e.Extensions["code"])
		}
	}
	if last := errs[len(errs)-1].Message; !strings.Contains(last, "too many validation errors") {
		t.Errorf("the last error says %q, want that more were left out", last)
	}
}

// TestQueryBoundsKeepLegitimateQueries: every operation of the GUI (all of
// web/ui/src/ops.graphql in one document, a superset of what it sends),
// GraphiQL's introspection query and many distinct aliases pass the bounds
// and validate.
func TestQueryBoundsKeepLegitimateQueries(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	e.workspace("ws")
	ops, err := os.ReadFile("../web/ui/src/ops.graphql")
	if err != nil {
		t.Fatal(err)
	}
	var out map[string]any
	// The whole file validates; the Workspaces operation needs no variable.
	e.post(string(ops), &out, func(bd *client.Request) { bd.OperationName = "Workspaces" })
	e.post(introspectionQuery, &out)
	if out["__schema"] == nil {
		t.Errorf("introspection answered %v", out)
	}
	// The server's tests subscribe with 2,000 aliases to make big events.
	out = nil
	e.post(repeat(2000, func(i int) string { return fmt.Sprintf("f%d: __typename", i) }), &out)
	if len(out) != 2000 {
		t.Errorf("2,000 aliases answered %d fields", len(out))
	}
}

// TestQueryBoundsWorstCaseWithin: the costliest shapes that pass the
// bounds (as many fields sharing a response name as the bound allows, every
// pair conflicting; as many distinct fields as allowed) stay cheap: a
// capped list of errors from a bounded amount of work. Not parallel: it
// measures the process's allocations.
func TestQueryBoundsWorstCaseWithin(t *testing.T) {
	e := newEnv(t, nil)
	e.workspace("ws")
	for _, tc := range []struct{ name, query string }{
		{"353 aliases a of workspace with different ids",
			repeat(353, func(i int) string { return fmt.Sprintf(`a: workspace(id:"%d"){id}`, i) })},
		{"498 aliases a alternating id and name",
			`{ workspace(id:"ws") ` + repeat(498, func(i int) string { return []string{"a: id", "a: name"}[i%2] }) + `}`},
		{"499 aliases a of __typename",
			repeat(499, func(int) string { return "a: __typename" })},
		{"4,999 distinct aliases of __typename",
			repeat(4999, func(i int) string { return fmt.Sprintf("f%d: __typename", i) })},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			start := time.Now()
			_, err := e.c.RawPost(tc.query)
			took := time.Since(start)
			runtime.ReadMemStats(&after)
			allocated := after.TotalAlloc - before.TotalAlloc
			answer := 0
			if err != nil {
				answer = len(err.Error()) // a validation failure: http 422 and its body
			}
			t.Logf("%d-byte query answered in %v, %d bytes of errors, %d MiB allocated", len(tc.query), took.Round(time.Millisecond), answer, allocated>>20)
			if answer > 64<<10 {
				t.Errorf("%d bytes of errors", answer)
			}
			// Measured up to 30 MiB; unbounded, 3,000 aliases of workspace
			// allocated over 10 GiB.
			if allocated > 512<<20 {
				t.Errorf("%d MiB allocated", allocated>>20)
			}
		})
	}
}
