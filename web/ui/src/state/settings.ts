// The settings a person picks for a new session or a fork (Model,
// Reasoning effort, Permissions, Plan mode), as pure functions: where the
// controls start, what a model change does to the effort, and what a fork
// sends (only what differs from its parent's settings).
import type { CodexModelFieldsFragment, ComposerSettingsInput } from "../gql/graphql";

export interface Settings {
  // "" leaves it to Codex's configuration.
  model: string;
  reasoningEffort: string;
  permissionModeId: string;
  planMode: boolean;
}

export const permissionModes: readonly { id: string; label: string }[] = [
  { id: "read-only", label: "Read only" },
  { id: "workspace-write", label: "Workspace write" },
  { id: "full-access", label: "Full access" },
];

// Codex's efforts, for a model models does not list.
export const allEfforts: readonly string[] = ["none", "minimal", "low", "medium", "high", "xhigh"];

// startSettings: the default model preselected with its default effort.
export function startSettings(models: readonly CodexModelFieldsFragment[]): Settings {
  const m = models.find((x) => x.isDefault) ?? models[0];
  return { model: m?.model ?? "", reasoningEffort: m?.defaultReasoningEffort ?? "", permissionModeId: "workspace-write", planMode: false };
}

// fromSession: a session's settings as the controls show them.
export function fromSession(s: { model?: string | null; reasoningEffort?: string | null; permissionModeId?: string | null; planMode: boolean }): Settings {
  return { model: s.model ?? "", reasoningEffort: s.reasoningEffort ?? "", permissionModeId: s.permissionModeId ?? "workspace-write", planMode: s.planMode };
}

// effortsFor: the efforts the model supports ("" = Codex's default first).
export function effortsFor(models: readonly CodexModelFieldsFragment[], model: string): string[] {
  const m = models.find((x) => x.model === model || x.id === model);
  return ["", ...(m ? m.reasoningEfforts : allEfforts)];
}

// withModel changes the model; an effort the new model does not support
// becomes its default.
export function withModel(models: readonly CodexModelFieldsFragment[], s: Settings, model: string): Settings {
  const m = models.find((x) => x.model === model || x.id === model);
  let effort = s.reasoningEffort;
  if (m && effort && !m.reasoningEfforts.includes(effort)) effort = m.defaultReasoningEffort ?? "";
  return { ...s, model, reasoningEffort: effort };
}

// toInput: the settings of a new session (what is set).
export function toInput(s: Settings): ComposerSettingsInput {
  const out: ComposerSettingsInput = { permissionModeId: s.permissionModeId, planMode: s.planMode };
  if (s.model.trim()) out.model = s.model.trim();
  if (s.reasoningEffort) out.reasoningEffort = s.reasoningEffort;
  return out;
}

// changed: what a fork sends as its settings, only what the person changed
// from the parent's; undefined when nothing was.
export function changed(parent: Settings, chosen: Settings): ComposerSettingsInput | undefined {
  const out: ComposerSettingsInput = {};
  if (chosen.model.trim() !== parent.model && chosen.model.trim()) out.model = chosen.model.trim();
  if (chosen.reasoningEffort !== parent.reasoningEffort && chosen.reasoningEffort) out.reasoningEffort = chosen.reasoningEffort;
  if (chosen.permissionModeId !== parent.permissionModeId) out.permissionModeId = chosen.permissionModeId;
  if (chosen.planMode !== parent.planMode) out.planMode = chosen.planMode;
  return Object.keys(out).length ? out : undefined;
}
