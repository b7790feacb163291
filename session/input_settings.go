package session

import (
	"slices"
	"strings"

	"tuttid/agent"
	"tuttid/apperr"
	"tuttid/validate"
)

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

// CheckSettings rejects settings the runtime would not understand; the
// reasoning effort, which depends on Codex's models, is checked by
// Service.CheckModelSettings.
func CheckSettings(s agent.ComposerSettings) error {
	if err := validate.Line("settings.model", s.Model, validate.MaxModelLen); err != nil {
		return err
	}
	// The reasoning effort depends on the model: Service.CheckModelSettings.
	if s.ComputerUse {
		return apperr.New(apperr.InvalidInput, "settings.%s", agent.ComputerUseUnsupported)
	}
	if s.PermissionModeID != "" && !slices.Contains(agent.PermissionModes(), s.PermissionModeID) {
		return apperr.New(apperr.InvalidInput, "settings.permissionModeId %q is not one of %s",
			s.PermissionModeID, strings.Join(agent.PermissionModes(), ", "))
	}
	return nil
}
