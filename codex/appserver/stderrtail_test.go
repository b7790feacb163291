package appserver

import (
	"strings"
	"testing"
)

func TestStderrTailKeepsTheErrorNotTheBacktrace(t *testing.T) {
	tests := []struct {
		name  string
		lines []string
		want  string
	}{
		{"empty", nil, ""},
		{"error then backtrace",
			[]string{"WARNING: x", "Error: CODEX_HOME points to \"/nope\"", "", "Stack backtrace:", "   0: <unknown>"},
			"WARNING: x | Error: CODEX_HOME points to \"/nope\""},
		{"bounded", []string{"1", "2", "3", "4", "5", "6", "7"}, "1 | 2 | 3 | 4 | 5"},
		{"long line cut", []string{strings.Repeat("a", 600)}, strings.Repeat("a", 500) + "…"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var tail stderrTail
			for _, l := range tt.lines {
				tail.add(l)
			}
			if got := tail.String(); got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}
