package explore

import (
	"strings"
	"testing"
	"time"

	"tuttid/apperr"
)

func TestNormalizeRefusesBadRequests(t *testing.T) {
	two := []BranchInput{{Name: "a"}, {Name: "b"}}
	base := func() Input {
		return Input{WorkspaceID: "w", ParentSessionID: "s", RequestID: "r", Prompt: "go", Branches: append([]BranchInput(nil), two...)}
	}
	nine := make([]BranchInput, 9)
	for i := range nine {
		nine[i] = BranchInput{Name: string(rune('a' + i))}
	}
	tests := []struct {
		name string
		edit func(*Input)
		want string // in the message
	}{
		{"one branch", func(in *Input) { in.Branches = in.Branches[:1] }, "2 to 8 branches, not 1"},
		{"nine branches", func(in *Input) { in.Branches = nine }, "2 to 8 branches, not 9"},
		{"a repeated name", func(in *Input) { in.Branches[1].Name = "a" }, `"a" is used twice`},
		{"an upper-case name", func(in *Input) { in.Branches[0].Name = "A" }, "branch name"},
		{"a name too long", func(in *Input) { in.Branches[0].Name = strings.Repeat("x", 33) }, "branch name"},
		{"a name starting with -", func(in *Input) { in.Branches[0].Name = "-x" }, "branch name"},
		{"no prompt anywhere", func(in *Input) { in.Prompt = "" }, "has no prompt"},
		{"a check command too long", func(in *Input) { c := strings.Repeat("x", 16<<10+1); in.CheckCommand = &c }, "checkCommand"},
		{"a check command with NUL", func(in *Input) { c := "go test\x00"; in.CheckCommand = &c }, "NUL"},
		{"a check bound too long", func(in *Input) { in.CheckTimeout = 2 * time.Hour }, "checkTimeoutSeconds"},
		{"no requestId", func(in *Input) { in.RequestID = "" }, "requestId"},
		{"a requestId too long for its forks", func(in *Input) { in.RequestID = strings.Repeat("r", 100) }, "too long"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := base()
			tt.edit(&in)
			_, err := normalize(in)
			if apperr.CodeOf(err) != apperr.InvalidInput || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("normalize: %v, want invalid_input with %q", err, tt.want)
			}
		})
	}
	t.Run("a branch's own prompt or the shared one", func(t *testing.T) {
		in := base()
		in.Prompt = "shared"
		in.Branches[1].Prompt = "own"
		got, err := normalize(in)
		if err != nil {
			t.Fatal(err)
		}
		if got.Branches[0].Prompt != "shared" || got.Branches[1].Prompt != "own" {
			t.Fatalf("prompts %q %q", got.Branches[0].Prompt, got.Branches[1].Prompt)
		}
	})
	t.Run("the fingerprint ignores the requestId", func(t *testing.T) {
		a, b := base(), base()
		b.RequestID = "other"
		if a.fingerprint() != b.fingerprint() {
			t.Fatal("fingerprints differ by requestId alone")
		}
		b.Prompt = "else"
		if a.fingerprint() == b.fingerprint() {
			t.Fatal("fingerprints equal for another prompt")
		}
	})
}
