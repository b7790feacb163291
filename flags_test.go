package main

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

// TestFlagsFromEnv: the command line wins over the environment, which wins
// over the default; an empty variable is unset; a wrong value in the
// environment is a usage error naming the variable.
func TestFlagsFromEnv(t *testing.T) {
	for _, tc := range []struct {
		name    string
		env     string // TUTTID_TEST_ADDR, "" unset
		args    []string
		want    string
		wantErr string
	}{
		{"default", "", nil, "fallback", ""},
		{"environment", "from-env", nil, "from-env", ""},
		{"command line", "from-env", []string{"--addr", "from-args"}, "from-args", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("TUTTID_TEST_ADDR", tc.env)
			t.Setenv("TUTTID_TEST_MAX", "12")
			var stderr strings.Builder
			f := newFlags("tuttid", &stderr)
			addr := f.string("addr", "TUTTID_TEST_ADDR", "fallback", "address")
			n := f.int64("max", "TUTTID_TEST_MAX", 1, "bound")
			if err := f.parse(tc.args); err != nil {
				t.Fatal(err)
			}
			if *addr != tc.want || *n != 12 {
				t.Errorf("addr %q, max %d; want %q, 12", *addr, *n, tc.want)
			}
		})
	}
	t.Setenv("TUTTID_TEST_NO", "maybe")
	var stderr strings.Builder
	f := newFlags("tuttid", &stderr)
	f.bool("no", "TUTTID_TEST_NO", "off")
	var usage usageError
	if err := f.parse(nil); !errors.As(err, &usage) || !strings.Contains(stderr.String(), "TUTTID_TEST_NO") {
		t.Errorf("bad environment value: %v, stderr %q", err, stderr.String())
	}
}

// TestNewLogger: --log-format text or json, and without it text on a
// terminal and json elsewhere.
func TestNewLogger(t *testing.T) {
	for _, tc := range []struct {
		format   string
		terminal bool
		isJSON   bool
	}{
		{"json", true, true},
		{"json", false, true},
		{"text", false, false},
		{"text", true, false},
		{"", true, false},
		{"", false, true},
	} {
		var b strings.Builder
		log, err := newLogger(&b, tc.format, "info", tc.terminal)
		if err != nil {
			t.Fatal(err)
		}
		log.Debug("hidden")
		log.Info("shown", "k", "v")
		line := strings.TrimSpace(b.String())
		var rec map[string]any
		isJSON := json.Unmarshal([]byte(line), &rec) == nil
		if strings.Contains(line, "\n") || isJSON != tc.isJSON ||
			(tc.isJSON && rec["msg"] != "shown") || (!tc.isJSON && !strings.Contains(line, "level=INFO msg=shown k=v")) {
			t.Errorf("format %q, terminal %v: %q", tc.format, tc.terminal, line)
		}
	}
	for _, bad := range [][2]string{{"xml", "info"}, {"json", "loud"}} {
		var usage usageError
		if _, err := newLogger(&strings.Builder{}, bad[0], bad[1], false); !errors.As(err, &usage) {
			t.Errorf("newLogger(%q, %q) = %v, want a usage error", bad[0], bad[1], err)
		}
	}
}
