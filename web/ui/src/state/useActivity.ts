// The shown workspace's activity subscription, run through reduceActivity:
// returns what it shows (the connection, the streamed text) and hands the
// effects each event asks for to apply.
import { useCallback, useEffect, useRef, useState } from "react";
import { client, onConnState, toApiError } from "../client";
import { ActivityDocument } from "../gql/graphql";
import { idle, reduceActivity, type ActivityInput, type Effect, type LiveState, type Shown } from "./activity";

export function useActivity(wsId: string | undefined, shown: () => Shown, apply: (e: Effect) => void, fail: (e: unknown) => void) {
  const [live, setLive] = useState<LiveState>(idle);
  const ref = useRef(live);
  const applyRef = useRef(apply);
  applyRef.current = apply;

  const dispatch = useCallback((input: ActivityInput) => {
    const step = reduceActivity(ref.current, input);
    ref.current = step.state;
    setLive(step.state);
    for (const e of step.effects) applyRef.current(e);
  }, []);

  useEffect(() => {
    if (!wsId) {
      dispatch({ type: "unsubscribe" });
      return;
    }
    const off = onConnState((state, code) => dispatch({ type: "connection", state, code }));
    dispatch({ type: "subscribe" });
    const sub = client.subscription(ActivityDocument, { ws: wsId }).subscribe((res) => {
      if (res.error) {
        const err = toApiError(res.error);
        // A resync comes as the RESYNC_REQUIRED event too, which reloads.
        if (err.code !== "activity.resync_required") fail(err);
        return;
      }
      const event = res.data?.activity;
      if (event) dispatch({ type: "event", event, shown: shown() });
    });
    return () => {
      off();
      sub.unsubscribe();
    };
  }, [wsId, dispatch, shown, fail]);

  // showOther empties the streams when another session is shown.
  const showOther = useCallback(() => dispatch({ type: "show" }), [dispatch]);

  return { conn: live.conn, streams: live.streams, showOther };
}
