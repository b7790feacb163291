import { describe, expect, it } from "vitest";
import type { CodexModelFieldsFragment } from "../gql/graphql";
import { changed, effortsFor, fromSession, startSettings, toInput, withModel, type Settings } from "./settings";

const model = (id: string, efforts: string[], def: string | null, isDefault = false): CodexModelFieldsFragment => ({
  id,
  model: id,
  displayName: id.toUpperCase(),
  description: "",
  isDefault,
  reasoningEfforts: efforts,
  defaultReasoningEffort: def,
});
const models = [model("small", ["low", "medium"], "low"), model("big", ["medium", "high", "xhigh"], "high", true)];
const parent: Settings = { model: "small", reasoningEffort: "low", permissionModeId: "workspace-write", planMode: false };

describe("settings", () => {
  it("starts on the default model and its default effort", () => {
    expect(startSettings(models)).toEqual({ model: "big", reasoningEffort: "high", permissionModeId: "workspace-write", planMode: false });
    expect(startSettings([])).toEqual({ model: "", reasoningEffort: "", permissionModeId: "workspace-write", planMode: false });
  });
  it("reads a session's settings", () => {
    expect(fromSession({ model: null, reasoningEffort: null, permissionModeId: null, planMode: true })).toEqual({ model: "", reasoningEffort: "", permissionModeId: "workspace-write", planMode: true });
  });
  it("offers the model's efforts, or all for an unlisted model", () => {
    expect(effortsFor(models, "small")).toEqual(["", "low", "medium"]);
    expect(effortsFor(models, "other-provider-model")).toEqual(["", "none", "minimal", "low", "medium", "high", "xhigh"]);
  });
  it.each([
    ["an unsupported effort becomes the model's default", "big", "high"],
    ["a supported effort stays", "small", "low"],
    ["a free-text model keeps the effort", "mine", "low"],
  ])("%s", (_, m, effort) => {
    expect(withModel(models, parent, m)).toEqual({ ...parent, model: m, reasoningEffort: effort });
  });
  it("sends what is set for a new session", () => {
    expect(toInput(parent)).toEqual({ model: "small", reasoningEffort: "low", permissionModeId: "workspace-write", planMode: false });
    expect(toInput({ ...parent, model: " ", reasoningEffort: "" })).toEqual({ permissionModeId: "workspace-write", planMode: false });
  });
  it.each<[string, Settings, ReturnType<typeof changed>]>([
    ["nothing changed", parent, undefined],
    ["model and effort", { ...parent, model: "big", reasoningEffort: "high" }, { model: "big", reasoningEffort: "high" }],
    ["permissions only", { ...parent, permissionModeId: "full-access" }, { permissionModeId: "full-access" }],
    ["plan mode only", { ...parent, planMode: true }, { planMode: true }],
  ])("a fork sends only what changed: %s", (_, chosen, want) => {
    expect(changed(parent, chosen)).toEqual(want);
  });
});
