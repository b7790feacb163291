// The shown workspace's activity subscription, run through reduceActivity:
// returns what it shows (the connection, the streamed text) and hands the
// effects each event asks for to apply. Events are handled per animation
// frame (reduceBatch): a burst re-renders and reloads once a frame, not
// once an event.
import { startTransition, useCallback, useEffect, useMemo, useRef, useState } from "react";
import { client, onConnState, toApiError } from "../client";
import { ActivityDocument, type ActivityFieldsFragment } from "../gql/graphql";
import { idle, reduceBatch, type ActivityInput, type Effect, type LiveState, type Shown } from "./activity";
import { batcher } from "./batch";

export function useActivity(wsId: string | undefined, shown: () => Shown, apply: (e: Effect) => void, fail: (e: unknown) => void) {
  const [live, setLive] = useState<LiveState>(idle);
  const ref = useRef(live);
  const applyRef = useRef(apply);
  applyRef.current = apply;
  const shownRef = useRef(shown);
  shownRef.current = shown;
  // Bumped to subscribe again after the server dropped the subscription.
  const [epoch, setEpoch] = useState(0);

  const run = useCallback((inputs: ActivityInput[]) => {
    const step = reduceBatch(ref.current, inputs);
    ref.current = step.state;
    // A transition: what the stream shows renders in slices, leaving the
    // page to input meanwhile (with eight branches streaming, a render
    // that blocked would wait for the cores the agents use).
    startTransition(() => setLive(step.state));
    for (const e of step.effects) applyRef.current(e);
  }, []);

  // The events of a frame see what is shown when they are handled.
  const events = useMemo(
    () =>
      batcher<ActivityFieldsFragment>((evs) => {
        const now = shownRef.current();
        run(evs.map((event) => ({ type: "event", event, shown: now })));
      }),
    [run],
  );

  // Any other input comes after the events before it.
  const dispatch = useCallback(
    (input: ActivityInput) => {
      events.flush();
      run([input]);
    },
    [events, run],
  );

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
      if (!event) return;
      if (event.kind === "RESYNC_REQUIRED") {
        // The server dropped this subscription (it fell behind a burst)
        // and ends it after this event: subscribe again, whose SUBSCRIBED
        // reloads what was missed (one reload, not one now and one then).
        events.flush();
        setEpoch((n) => n + 1);
        return;
      }
      events.push(event);
    });
    return () => {
      off();
      sub.unsubscribe();
      // What the old workspace sent and was not handled yet is moot.
      events.drop();
    };
  }, [wsId, epoch, dispatch, events, fail]);

  // showOther empties the streams when another session is shown.
  const showOther = useCallback(() => dispatch({ type: "show" }), [dispatch]);

  // dismissWarning hides a warning; it is not shown again.
  const dismissWarning = useCallback((key: string) => dispatch({ type: "dismissWarning", key }), [dispatch]);

  return { conn: live.conn, streams: live.streams, retries: live.retries, warnings: live.warnings, showOther, dismissWarning };
}
