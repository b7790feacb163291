import { describe, expect, it } from "vitest";
import { accountLabel, initialAccount, reduceAccount, type Account, type AccountState } from "./account";

const out: Account = { signedIn: false, requiresOpenaiAuth: true, authMode: null, email: null, planType: null };
const inKey: Account = { signedIn: true, requiresOpenaiAuth: true, authMode: "apiKey", email: null, planType: null };

function run(s: AccountState, ...inputs: Parameters<typeof reduceAccount>[1][]): AccountState {
  return inputs.reduce(reduceAccount, s);
}

describe("reduceAccount", () => {
  it("opens the dialog when codexAccount says signed out", () => {
    const s = run(initialAccount, { type: "loaded", account: out });
    expect(s.open).toBe(true);
    expect(s.account).toEqual(out);
  });
  it("keeps it closed when signed in", () => {
    expect(run(initialAccount, { type: "loaded", account: inKey }).open).toBe(false);
  });
  it("opens on agent.provider_not_signed_in and marks the account signed out", () => {
    const s = run(initialAccount, { type: "loaded", account: inKey }, { type: "notSignedIn", message: "sign in" });
    expect(s.open).toBe(true);
    expect(s.account?.signedIn).toBe(false);
    expect(s.error).toBe("sign in");
  });
  it("closes when the login completes at once", () => {
    const s = run(initialAccount, { type: "loaded", account: out }, { type: "loginStarted", login: { loginId: null, authUrl: null, verificationUrl: null, userCode: null, account: inKey } });
    expect(s.open).toBe(false);
    expect(s.account).toEqual(inKey);
  });
  it("keeps a pending login's code and URL, then closes on ACCOUNT_UPDATED signed in", () => {
    let s = run(
      initialAccount,
      { type: "loaded", account: out },
      { type: "loginStarted", login: { loginId: "l1", authUrl: null, verificationUrl: "https://x/device", userCode: "ABCD-1234", account: null } },
    );
    expect(s.pending).toEqual({ loginId: "l1", authUrl: undefined, verificationUrl: "https://x/device", userCode: "ABCD-1234" });
    expect(s.open).toBe(true);
    s = reduceAccount(s, { type: "updated", account: inKey });
    expect(s.open).toBe(false);
    expect(s.pending).toBeNull();
  });
  it("shows why a login failed and drops the pending login", () => {
    let s = run(initialAccount, { type: "loaded", account: out }, { type: "loginStarted", login: { loginId: "l1", authUrl: "https://a", verificationUrl: null, userCode: null, account: null } });
    s = reduceAccount(s, { type: "updated", account: out, error: "denied" });
    expect(s).toMatchObject({ open: true, pending: null, error: "denied" });
  });
  it("a cancelled login leaves the dialog open without it", () => {
    const s = run(
      initialAccount,
      { type: "loaded", account: out },
      { type: "loginStarted", login: { loginId: "l1", authUrl: "https://a", verificationUrl: null, userCode: null, account: null } },
      { type: "loginCancelled" },
    );
    expect(s).toMatchObject({ open: true, pending: null });
  });
  it("opens again on sign-out (ACCOUNT_UPDATED signed out)", () => {
    const s = run(initialAccount, { type: "loaded", account: inKey }, { type: "updated", account: out });
    expect(s.open).toBe(true);
  });
  it("a signed-out update does not open again the dialog the person closed while signed out", () => {
    // A cancelled login's completion reached the page after Not now.
    const s = run(initialAccount, { type: "loaded", account: out }, { type: "close" }, { type: "updated", account: out });
    expect(s.open).toBe(false);
  });
  it("can be closed and opened by the person", () => {
    const s = run(initialAccount, { type: "loaded", account: out }, { type: "close" });
    expect(s.open).toBe(false);
    expect(reduceAccount(s, { type: "open" }).open).toBe(true);
  });
});

describe("accountLabel", () => {
  it.each([
    [null, ""],
    [inKey, "apiKey"],
    [{ ...inKey, email: "a@b.c" }, "a@b.c"],
    [out, "not signed in"],
  ])("%j -> %s", (a, want) => expect(accountLabel(a as Account | null)).toBe(want));
});
