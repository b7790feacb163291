package codex

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

var jsonScanCases = []string{
	`"plain"`, `"esc \" \\ \/ \b \f \n \r \t end"`, `"\u00e9\ud83d\ude00 \ud800 lone"`, "\"bad \xff utf8\"",
	"\"ctl \x01\"", `"unterminated`, `"bad \x escape"`, `""`, `null`, `true`, `false`, `nul`, `12`, `-0.5e+3`,
	`01`, `1.`, `-`, `{}`, `[]`, `{"a":1,"a":2}`, `{"type":"agentMessage","id":"i1","text":"hi\nthere","status":"completed"}`,
	`{"type":"reasoning","summary":["a","b"]}`, `{"a":[1,{"b":null}],"c":"d"}`, ` { "k" : "v" } `, `{"k":"v",}`,
	`[1,2,]`, `{"k" "v"}`, `{"\u0074ype":"plan","text":"x"}`, `[{"type":"userMessage"}]`, `"x" "y"`, `{"k":tru}`,
}

// TestUnquoteMatchesEncodingJSON: unquote (and so str) answers what
// json.Unmarshal into a string does, for every case.
func TestUnquoteMatchesEncodingJSON(t *testing.T) {
	for _, c := range jsonScanCases {
		var want string
		wantOK := json.Unmarshal([]byte(c), &want) == nil
		got, ok := unquote([]byte(c))
		if ok != wantOK || got != want {
			t.Errorf("unquote(%q) = %q, %t; encoding/json: %q, %t", c, got, ok, want, wantOK)
		}
	}
}

// TestScanWholeMatchesValid: the scanner accepts exactly what json.Valid
// does.
func TestScanWholeMatchesValid(t *testing.T) {
	for _, c := range jsonScanCases {
		if got, want := wholeValue([]byte(c)), json.Valid([]byte(c)); got != want {
			t.Errorf("wholeValue(%q) = %t, json.Valid %t", c, got, want)
		}
	}
}

// TestItemFieldsMatchEncodingJSON: the fast split of an item is the map
// json.Unmarshal makes.
func TestItemFieldsMatchEncodingJSON(t *testing.T) {
	for _, c := range jsonScanCases {
		var want itemFields
		_ = json.Unmarshal([]byte(c), &want)
		got := itemFieldsOf([]byte(c))
		if !sameFields(got, want) {
			t.Errorf("itemFieldsOf(%q) = %v, encoding/json %v", c, got, want)
		}
	}
}

func sameFields(a, b itemFields) bool {
	if (a == nil) != (b == nil) || len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if string(b[k]) != string(v) {
			return false
		}
	}
	return true
}

// TestDecodeTurnMatchesProjectTurn: a turn decoded by the fast path is
// the one json.Unmarshal and projectTurn make, for plain and odd turns.
func TestDecodeTurnMatchesProjectTurn(t *testing.T) {
	long := strings.Repeat("line of a long reply \"quoted\" \\ tab\t\n", 5000)
	text, _ := json.Marshal(long)
	turns := []string{
		`{"id":"t1","items":[{"type":"userMessage","id":"u1","content":[{"type":"text","text":"hi"}]},{"type":"agentMessage","id":"a1","text":` + string(text) + `}],"status":"completed","error":null}`,
		`{"id":"t2","items":[],"status":"failed","error":{"message":"boom","codexErrorInfo":"other"}}`,
		`{"id":"t3","items":null,"status":"interrupted"}`,
		`{"ID":"t4","Items":[{"type":"plan","text":"p"}],"status":"completed"}`,
		`{"id":"t5","items":[{"type":"agentMessage","id":"a","text":"\u00e9\ud83d\ude00"}],"status":"inProgress","extra":{"x":[1,2]}}`,
	}
	for _, raw := range turns {
		var wt wireTurn
		if err := json.Unmarshal([]byte(raw), &wt); err != nil {
			t.Fatal(err)
		}
		want := projectTurn(wt)
		got, err := decodeTurn([]byte(raw))
		if err != nil {
			t.Fatalf("decodeTurn(%.40s): %v", raw, err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("decodeTurn(%.40s) = %+v, want %+v", raw, got, want)
		}
	}
	if _, err := decodeTurn([]byte(`{"id":5}`)); err == nil {
		t.Error("a turn whose id is a number decoded")
	}
}

// FuzzUnquote: unquote and wholeValue agree with encoding/json on any
// input.
func FuzzUnquote(f *testing.F) {
	for _, c := range jsonScanCases {
		f.Add(c)
	}
	f.Fuzz(func(t *testing.T, c string) {
		var want string
		wantOK := json.Unmarshal([]byte(c), &want) == nil
		if got, ok := unquote([]byte(c)); ok != wantOK || got != want {
			t.Errorf("unquote(%q) = %q, %t; encoding/json: %q, %t", c, got, ok, want, wantOK)
		}
		if got, valid := wholeValue([]byte(c)), json.Valid([]byte(c)); got != valid {
			t.Errorf("wholeValue(%q) = %t, json.Valid %t", c, got, valid)
		}
	})
}
