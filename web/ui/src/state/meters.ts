// What the Context and Usage meters show, as pure functions.
import type { RateLimitsFieldsFragment } from "../gql/graphql";

export interface MeterView {
  // In percent, 0..100.
  percent: number;
  text: string;
}

// contextMeter: the session's tokens of its model's context window; null
// when Codex reported no usage or no window.
export function contextMeter(u: { totalTokens: number; contextWindow?: number | null } | null | undefined): MeterView | null {
  if (!u || !u.contextWindow || u.contextWindow <= 0) return null;
  const percent = Math.min(100, Math.max(0, (u.totalTokens / u.contextWindow) * 100));
  return { percent, text: `${compact(u.totalTokens)} of ${compact(u.contextWindow)} tokens (${Math.round(percent)}%)` };
}

// usageMeter: the primary rate-limit window (else the secondary), with
// when it resets; null when Codex reports none.
export function usageMeter(r: RateLimitsFieldsFragment | null | undefined): MeterView | null {
  const w = r?.primary ?? r?.secondary;
  if (!w) return null;
  const percent = Math.min(100, Math.max(0, w.usedPercent));
  const resets = w.resetsAt ? `, resets ${new Date(w.resetsAt).toLocaleString()}` : "";
  return { percent, text: `${Math.round(percent)}% used${resets}` };
}

function compact(n: number): string {
  if (n >= 1_000_000) return `${(n / 1_000_000).toFixed(1)}M`;
  if (n >= 1_000) return `${(n / 1_000).toFixed(1)}k`;
  return String(n);
}
