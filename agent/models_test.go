package agent

import (
	"errors"
	"strings"
	"testing"
)

func TestCheckEffort(t *testing.T) {
	models := []Model{
		{ID: "big", Model: "big", IsDefault: true, ReasoningEfforts: []string{"low", "max"}},
		{ID: "small", Model: "small", ReasoningEfforts: []string{"low", "medium"}},
	}
	for _, c := range []struct {
		name, model, effort string
		wantErr             string // "" for none, else a piece of the message
	}{
		{"no effort", "small", "", ""},
		{"listed model, supported", "small", "medium", ""},
		{"listed model, beyond the static list", "big", "max", ""},
		{"no model: the static list", "", "max", "unknown reasoning effort"},
		{"listed model, unsupported names the supported", "small", "high", "low, medium"},
		{"unlisted model, static list", "other-provider-model", "high", ""},
		{"unlisted model, unknown effort", "other-provider-model", "extreme", "unknown reasoning effort"},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := CheckEffort(models, c.model, c.effort)
			switch {
			case c.wantErr == "" && err != nil:
				t.Fatalf("err = %v", err)
			case c.wantErr != "" && (!errors.Is(err, ErrInvalidSettings) || !strings.Contains(err.Error(), c.wantErr)):
				t.Fatalf("err = %v, want ErrInvalidSettings naming %q", err, c.wantErr)
			}
		})
	}
	if err := CheckEffort(nil, "", "max"); !errors.Is(err, ErrInvalidSettings) {
		t.Errorf("no models known, max: %v", err)
	}
}

func TestLoginInputNeverPrintsTheKey(t *testing.T) {
	in := LoginInput{Provider: ProviderCodex, Method: LoginAPIKey, APIKey: "sk-secret-123"}
	for _, s := range []string{in.String(), in.GoString(), in.LogValue().String()} {
		if strings.Contains(s, "sk-secret-123") {
			t.Errorf("key printed: %s", s)
		}
	}
}
