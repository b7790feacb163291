// The workspaces and which one is shown. current() is the one picked
// last, at once (the state follows at the next render), for loaders that
// outlive renders.
import { useCallback, useRef, useState } from "react";
import { query } from "../client";
import { WorkspacesDocument, type WorkspaceFieldsFragment } from "../gql/graphql";

export function useWorkspaces() {
  const [workspaces, setWorkspaces] = useState<WorkspaceFieldsFragment[] | null>(null);
  const [wsId, setWsId] = useState<string | undefined>();
  const ref = useRef(wsId);
  ref.current = wsId;

  const current = useCallback(() => ref.current, []);

  // pick shows ws; false when it was shown already.
  const pick = useCallback((ws: string | undefined): boolean => {
    if (ws === ref.current) return false;
    ref.current = ws;
    setWsId(ws);
    return true;
  }, []);

  const reload = useCallback(async () => {
    const d = await query(WorkspacesDocument, {});
    setWorkspaces(d.workspaces);
    return d.workspaces;
  }, []);

  return { workspaces, wsId, current, pick, reload };
}
