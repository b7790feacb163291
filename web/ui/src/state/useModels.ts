// Codex's models, read once; none when Codex cannot list them (the model
// control then takes free text only).
import { useEffect, useState } from "react";
import { query } from "../client";
import { ModelsDocument, type CodexModelFieldsFragment } from "../gql/graphql";

export function useModels(): readonly CodexModelFieldsFragment[] {
  const [models, setModels] = useState<readonly CodexModelFieldsFragment[]>([]);
  useEffect(() => {
    let gone = false;
    query(ModelsDocument, {}).then(
      (r) => !gone && setModels(r.models),
      () => {},
    );
    return () => {
      gone = true;
    };
  }, []);
  return models;
}
