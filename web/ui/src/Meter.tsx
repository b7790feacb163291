// A labelled meter (role="meter"): the Context and Usage meters.
import type { MeterView } from "./state/meters";

export function Meter({ name, view, testId }: { name: string; view: MeterView; testId: string }) {
  return (
    <span className="meter-wrap" title={`${name}: ${view.text}`}>
      <span className="meter-name">{name}</span>
      <span
        className="meter"
        role="meter"
        aria-label={name}
        aria-valuemin={0}
        aria-valuemax={100}
        aria-valuenow={Math.round(view.percent)}
        aria-valuetext={view.text}
        data-testid={testId}
      >
        <span className="meter-fill" style={{ width: `${view.percent}%` }} />
      </span>
      <span className="meter-text">{view.text}</span>
    </span>
  );
}
