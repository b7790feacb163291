// How the page runs what can fail: a load that fails shows the error (or
// the sign-in page when the token is refused); an action the person asked
// for also marks the page busy meanwhile and clears the last error first.
import { useCallback, useRef, useState, type MutableRefObject } from "react";
import { toApiError, type ApiError } from "../client";

export interface Operations {
  error: ApiError | null;
  dismiss: () => void;
  signIn: boolean;
  needSignIn: () => void;
  fail: (e: unknown) => void;
  guarded: (fn: () => Promise<void>) => Promise<void>;
  busy: boolean;
  act: (fn: () => Promise<void>) => Promise<void>;
  // Called with the server's message when an operation answers
  // agent.provider_not_signed_in (the page opens `Sign in to Codex`
  // instead of showing the error).
  notSignedIn: MutableRefObject<(message: string) => void>;
}

export function useOperations(): Operations {
  const [error, setError] = useState<ApiError | null>(null);
  const [signIn, setSignIn] = useState(false);
  const [busy, setBusy] = useState(false);
  const notSignedIn = useRef<(message: string) => void>(() => {});

  const fail = useCallback((e: unknown) => {
    const err = toApiError(e);
    if (err.code === "unauthenticated") setSignIn(true);
    else if (err.code === "agent.provider_not_signed_in") notSignedIn.current(err.message);
    else setError(err);
  }, []);

  const guarded = useCallback(
    async (fn: () => Promise<void>) => {
      try {
        await fn();
      } catch (e) {
        fail(e);
      }
    },
    [fail],
  );

  const act = useCallback(
    async (fn: () => Promise<void>) => {
      setBusy(true);
      setError(null);
      try {
        await fn();
      } catch (e) {
        fail(e);
      } finally {
        setBusy(false);
      }
    },
    [fail],
  );

  const dismiss = useCallback(() => setError(null), []);
  const needSignIn = useCallback(() => setSignIn(true), []);
  return { error, dismiss, signIn, needSignIn, fail, guarded, busy, act, notSignedIn };
}
