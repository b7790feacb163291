// The Model, Reasoning effort, Permissions and Plan mode controls of New
// session and the fork dialog. Plain form controls (no Radix Select: it
// injects <style>, which the page's CSP refuses); the model is a text
// input with the models as suggestions, so another provider's model can be
// typed.
import type { CodexModelFieldsFragment } from "./gql/graphql";
import { effortsFor, permissionModes, withModel, type Settings } from "./state/settings";

interface Props {
  idPrefix: string;
  models: readonly CodexModelFieldsFragment[];
  value: Settings;
  onChange: (s: Settings) => void;
}

export function SettingsFields({ idPrefix, models, value, onChange }: Props) {
  const listId = `${idPrefix}-models`;
  return (
    <div className="settings-fields" data-testid={`${idPrefix}-settings`}>
      <label>
        Model
        <input
          aria-label="Model"
          list={listId}
          data-testid={`${idPrefix}-model`}
          value={value.model}
          placeholder="Codex's default"
          autoComplete="off"
          maxLength={200}
          onChange={(e) => onChange(withModel(models, value, e.target.value))}
        />
        <datalist id={listId}>
          {models.map((m) => (
            <option key={m.id} value={m.model}>
              {m.displayName}
            </option>
          ))}
        </datalist>
      </label>
      <label>
        Reasoning effort
        <select
          aria-label="Reasoning effort"
          data-testid={`${idPrefix}-effort`}
          value={value.reasoningEffort}
          onChange={(e) => onChange({ ...value, reasoningEffort: e.target.value })}
        >
          {effortsFor(models, value.model).map((e) => (
            <option key={e} value={e}>
              {e || "default"}
            </option>
          ))}
        </select>
      </label>
      <div role="radiogroup" aria-label="Permissions" className="settings-permissions">
        {permissionModes.map((p) => (
          <label key={p.id}>
            <input
              type="radio"
              name={`${idPrefix}-permissions`}
              value={p.id}
              checked={value.permissionModeId === p.id}
              onChange={() => onChange({ ...value, permissionModeId: p.id })}
            />
            {p.label}
          </label>
        ))}
      </div>
      <label>
        <input type="checkbox" data-testid={`${idPrefix}-plan`} checked={value.planMode} onChange={(e) => onChange({ ...value, planMode: e.target.checked })} />
        Plan mode
      </label>
    </div>
  );
}
