package codex

import (
	"slices"
	"testing"
)

func TestChildEnv(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   []string
		want []string
	}{
		{"empty", []string{}, []string{}},
		{
			"tuttid's own variables are dropped, the rest kept in order",
			[]string{"PATH=/usr/bin", "TUTTID_TOKEN=s3cret", "HOME=/home/u", "TUTTID_DB=/x.db", "CODEX_HOME=/c",
				"HTTPS_PROXY=http://p:3128", "OPENAI_API_KEY=sk", "TUTTID_=x"},
			[]string{"PATH=/usr/bin", "HOME=/home/u", "CODEX_HOME=/c", "HTTPS_PROXY=http://p:3128", "OPENAI_API_KEY=sk"},
		},
		{"the prefix in any case", []string{"tuttid_token=s", "Tuttid_No_Auth=1", "A=1"}, []string{"A=1"}},
		{
			"only the name counts",
			[]string{"TUTTIDX=1", "X_TUTTID_TOKEN=2", "NOTE=TUTTID_TOKEN=3", "TUTTID=4"},
			[]string{"TUTTIDX=1", "X_TUTTID_TOKEN=2", "NOTE=TUTTID_TOKEN=3", "TUTTID=4"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := childEnv(tc.in); !slices.Equal(got, tc.want) {
				t.Errorf("childEnv(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}

func TestChildEnvInherits(t *testing.T) {
	t.Setenv("TUTTID_TOKEN", "from-the-environment")
	t.Setenv("TUTTID_CHILD_ENV_TEST", "x")
	got := childEnv(nil)
	if got == nil {
		t.Fatal("childEnv(nil) = nil: the child would inherit everything")
	}
	for _, kv := range got {
		if envName(kv) == "TUTTID_TOKEN" || envName(kv) == "TUTTID_CHILD_ENV_TEST" {
			t.Errorf("childEnv(nil) keeps %q", kv)
		}
	}
	if !slices.ContainsFunc(got, func(kv string) bool { return envName(kv) == "PATH" }) {
		t.Errorf("childEnv(nil) lost PATH: %q", got)
	}
}
