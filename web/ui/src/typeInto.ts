// Test support: typeInto sets an input's or a textarea's value as a
// person's typing does. React tracks the value set on the element itself,
// so the prototype's setter is called, then the input event React's
// onChange listens for.
import { act } from "react";

export function typeInto(el: HTMLInputElement | HTMLTextAreaElement, value: string) {
  const proto = el instanceof HTMLTextAreaElement ? HTMLTextAreaElement.prototype : HTMLInputElement.prototype;
  act(() => {
    Object.getOwnPropertyDescriptor(proto, "value")!.set!.call(el, value);
    el.dispatchEvent(new Event("input", { bubbles: true }));
  });
}
