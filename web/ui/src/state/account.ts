// Codex's sign-in as a pure reducer: what the account is, whether the
// `Sign in to Codex` dialog is open, and the login under way (the URL or
// code Codex gave). useCodexAccount runs it; the tests run it alone. No
// API key ever enters this state: it stays in the dialog's field until it
// is sent in StartCodexLogin.
import type { CodexAccountFieldsFragment, StartCodexLoginMutation } from "../gql/graphql";

export type Account = CodexAccountFieldsFragment;

export interface PendingLogin {
  loginId: string;
  authUrl?: string;
  verificationUrl?: string;
  userCode?: string;
}

export interface AccountState {
  // null until codexAccount was read.
  account: Account | null;
  open: boolean;
  pending: PendingLogin | null;
  // Why the last login failed (ACCOUNT_UPDATED's error), or an operation's.
  error: string | null;
}

export const initialAccount: AccountState = { account: null, open: false, pending: null, error: null };

export type AccountInput =
  // codexAccount was read, or logoutCodex answered.
  | { type: "loaded"; account: Account }
  // An operation answered agent.provider_not_signed_in.
  | { type: "notSignedIn"; message?: string }
  // The person asked for the dialog, or closed it.
  | { type: "open" }
  | { type: "close" }
  | { type: "loginStarted"; login: StartCodexLoginMutation["startCodexLogin"] }
  | { type: "loginCancelled" }
  | { type: "loginFailed"; message: string }
  // ACCOUNT_UPDATED.
  | { type: "updated"; account: Account | null; error?: string | null };

export function reduceAccount(s: AccountState, input: AccountInput): AccountState {
  switch (input.type) {
    case "loaded":
      return { ...s, account: input.account, open: !input.account.signedIn, pending: input.account.signedIn ? null : s.pending };
    case "notSignedIn":
      return { ...s, open: true, error: input.message ?? s.error, account: s.account ? { ...s.account, signedIn: false } : s.account };
    case "open":
      return { ...s, open: true };
    case "close":
      return { ...s, open: false };
    case "loginStarted": {
      const l = input.login;
      if (l.account?.signedIn) return { ...s, account: l.account, open: false, pending: null, error: null };
      if (!l.loginId) return { ...s, error: null };
      return {
        ...s,
        error: null,
        pending: { loginId: l.loginId, authUrl: l.authUrl ?? undefined, verificationUrl: l.verificationUrl ?? undefined, userCode: l.userCode ?? undefined },
      };
    }
    case "loginCancelled":
      return { ...s, pending: null };
    case "loginFailed":
      return { ...s, error: input.message };
    case "updated": {
      const account = input.account ?? s.account;
      if (input.error) return { ...s, account, pending: null, error: input.error, open: true };
      if (account?.signedIn) return { ...s, account, open: false, pending: null, error: null };
      // Signed out: the dialog opens when the account was signed in (or not
      // yet read); one the person closed while signed out stays closed.
      return { ...s, account, open: account && s.account?.signedIn !== false ? true : s.open };
    }
  }
}

// accountLabel is what the top bar shows of the account.
export function accountLabel(a: Account | null): string {
  if (!a) return "";
  if (a.email) return a.email;
  if (a.authMode) return a.authMode;
  return a.signedIn ? "signed in" : "not signed in";
}
