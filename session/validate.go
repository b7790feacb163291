package session

import (
	"path/filepath"
	"slices"
	"strings"
	"unicode/utf8"

	"tuttid/agent"
	"tuttid/apperr"
)

// Size limits on what a client sends; bounded so that one request cannot
// fill the database.
const (
	MaxNameLen    = 200
	MaxTitleLen   = 500
	MaxPathLen    = 4096
	MaxIDLen      = 128
	MaxMessageLen = 256 << 10
	MaxModelLen   = 200
)

// CheckID rejects an id that is empty, too long or not printable ASCII.
func CheckID(what, id string) error {
	if id == "" {
		return apperr.New(apperr.InvalidInput, "%s is required", what)
	}
	if len(id) > MaxIDLen {
		return apperr.New(apperr.InvalidInput, "%s is longer than %d characters", what, MaxIDLen)
	}
	for _, r := range id {
		if r <= ' ' || r > '~' {
			return apperr.New(apperr.InvalidInput, "%s may only hold printable ASCII characters without spaces", what)
		}
	}
	return nil
}

// CheckText rejects text that is not UTF-8 or longer than max bytes.
func CheckText(what, s string, max int) error {
	if !utf8.ValidString(s) {
		return apperr.New(apperr.InvalidInput, "%s is not valid UTF-8", what)
	}
	if len(s) > max {
		return apperr.New(apperr.InvalidInput, "%s is longer than %d bytes", what, max)
	}
	return nil
}

// CheckPath rejects a path that is not absolute.
func CheckPath(what, p string) error {
	if err := CheckText(what, p, MaxPathLen); err != nil {
		return err
	}
	if !filepath.IsAbs(p) {
		return apperr.New(apperr.InvalidInput, "%s must be an absolute path, got %q", what, p)
	}
	return nil
}

// SettingsOverride holds the settings a request gives; nil keeps the base.
//
// It is also the wire shape of the override: GraphQL's ComposerSettingsInput
// is bound to it (gqlgen.yml) and REST decodes its JSON into it, so that
// neither transport converts.
type SettingsOverride struct {
	Model            *string `json:"model,omitempty"`
	ReasoningEffort  *string `json:"reasoningEffort,omitempty"`
	PermissionModeID *string `json:"permissionModeId,omitempty"`
	PlanMode         *bool   `json:"planMode,omitempty"`
	BrowserUse       *bool   `json:"browserUse,omitempty"`
	ComputerUse      *bool   `json:"computerUse,omitempty"`
}

// Apply returns base with the override applied, validated.
func (o SettingsOverride) Apply(base agent.ComposerSettings) (agent.ComposerSettings, error) {
	s := base
	if o.Model != nil {
		s.Model = strings.TrimSpace(*o.Model)
	}
	if o.ReasoningEffort != nil {
		s.ReasoningEffort = *o.ReasoningEffort
	}
	if o.PermissionModeID != nil {
		s.PermissionModeID = *o.PermissionModeID
	}
	if o.PlanMode != nil {
		s.PlanMode = *o.PlanMode
	}
	if o.BrowserUse != nil {
		s.BrowserUse = *o.BrowserUse
	}
	if o.ComputerUse != nil {
		s.ComputerUse = *o.ComputerUse
	}
	return s, CheckSettings(s)
}

// CheckSettings rejects settings the runtime would not understand.
func CheckSettings(s agent.ComposerSettings) error {
	if err := CheckText("settings.model", s.Model, MaxModelLen); err != nil {
		return err
	}
	if s.ReasoningEffort != "" && !slices.Contains(agent.ReasoningEfforts(), s.ReasoningEffort) {
		return apperr.New(apperr.InvalidInput, "settings.reasoningEffort %q is not one of %s",
			s.ReasoningEffort, strings.Join(agent.ReasoningEfforts(), ", "))
	}
	if s.ComputerUse {
		return apperr.New(apperr.InvalidInput, "settings.%s", agent.ComputerUseUnsupported)
	}
	if s.PermissionModeID != "" && !slices.Contains(agent.PermissionModes(), s.PermissionModeID) {
		return apperr.New(apperr.InvalidInput, "settings.permissionModeId %q is not one of %s",
			s.PermissionModeID, strings.Join(agent.PermissionModes(), ", "))
	}
	return nil
}
