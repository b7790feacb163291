// Codex's sign-in on the page, run through reduceAccount: reads
// codexAccount once, and offers the dialog's operations. The API key is a
// parameter of signInWithKey only: it goes into StartCodexLogin's
// variables and is kept nowhere (no state, storage, URL or log).
import { useCallback, useEffect, useReducer } from "react";
import { mutate, query, toApiError } from "../client";
import { CancelCodexLoginDocument, CodexAccountDocument, LogoutCodexDocument, StartCodexLoginDocument, type CodexLoginMethod } from "../gql/graphql";
import { initialAccount, reduceAccount, type AccountInput, type AccountState } from "./account";

export interface CodexAccountHook extends AccountState {
  dispatch: (input: AccountInput) => void;
  signInWithKey: (apiKey: string) => Promise<void>;
  signInWith: (method: "CHATGPT" | "DEVICE_CODE") => Promise<void>;
  cancelLogin: () => Promise<void>;
  signOut: () => Promise<void>;
}

export function useCodexAccount(fail: (e: unknown) => void): CodexAccountHook {
  const [state, dispatch] = useReducer(reduceAccount, initialAccount);

  useEffect(() => {
    let gone = false;
    query(CodexAccountDocument, {}).then(
      (r) => !gone && dispatch({ type: "loaded", account: r.codexAccount }),
      (e) => !gone && fail(e),
    );
    return () => {
      gone = true;
    };
  }, [fail]);

  const start = useCallback(async (method: CodexLoginMethod, apiKey?: string) => {
    try {
      const r = await mutate(StartCodexLoginDocument, { input: apiKey === undefined ? { method } : { method, apiKey } });
      dispatch({ type: "loginStarted", login: r.startCodexLogin });
    } catch (e) {
      // The server's message never carries the key (issue 23).
      dispatch({ type: "loginFailed", message: toApiError(e).message });
    }
  }, []);

  const signInWithKey = useCallback((apiKey: string) => start("API_KEY", apiKey), [start]);
  const signInWith = useCallback((method: "CHATGPT" | "DEVICE_CODE") => start(method), [start]);

  const { pending } = state;
  const cancelLogin = useCallback(async () => {
    if (!pending) return;
    try {
      await mutate(CancelCodexLoginDocument, { loginId: pending.loginId });
    } catch (e) {
      fail(e);
    }
    dispatch({ type: "loginCancelled" });
  }, [pending, fail]);

  const signOut = useCallback(async () => {
    try {
      const r = await mutate(LogoutCodexDocument, {});
      dispatch({ type: "loaded", account: r.logoutCodex });
    } catch (e) {
      fail(e);
    }
  }, [fail]);

  return { ...state, dispatch, signInWithKey, signInWith, cancelLogin, signOut };
}
