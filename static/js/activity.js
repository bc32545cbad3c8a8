// Active time: seconds in which the tab was visible and the annotator did
// something (typed, pointed, scrolled) within the last minute. Sent every ~20 s
// and when the page goes away; zero is never sent.

import { currentItemId } from "./spans.js";

const IDLE_AFTER_MS = 60_000;
const SEND_EVERY_MS = 20_000;

export function initActivity() {
  const workspace = document.getElementById("workspace");
  const url = workspace && workspace.dataset.activityUrl;
  if (!url) return;

  let lastInput = Date.now(); // opening the page is activity
  let lastTick = Date.now();
  let counted = 0; // milliseconds not yet sent

  const touch = () => {
    lastInput = Date.now();
  };
  for (const type of ["pointerdown", "pointermove", "keydown", "input", "wheel", "scroll", "focusin"]) {
    document.addEventListener(type, touch, { capture: true, passive: true });
  }

  setInterval(() => {
    const now = Date.now();
    // Count real elapsed time (timers are throttled), but never a long gap such as a sleeping laptop.
    const elapsed = Math.min(now - lastTick, 5000);
    lastTick = now;
    if (document.visibilityState === "visible" && now - lastInput < IDLE_AFTER_MS) counted += elapsed;
  }, 1000);

  const payload = () => {
    const seconds = Math.floor(counted / 1000);
    if (seconds < 1) return null;
    counted -= seconds * 1000;
    const data = new FormData();
    data.append("seconds", String(seconds));
    const item = currentItemId();
    if (item) data.append("item", item);
    const token = document.querySelector("input[name=csrfmiddlewaretoken]");
    if (token) data.append("csrfmiddlewaretoken", token.value);
    return { data, seconds };
  };

  setInterval(() => {
    const sending = payload();
    if (!sending) return;
    fetch(url, { method: "POST", body: sending.data, credentials: "same-origin", keepalive: true })
      .then((response) => {
        // Signed out or a stale token: keep the seconds for a beat after signing in again.
        if (response.status >= 500 || response.status === 401 || response.status === 403) counted += sending.seconds * 1000;
      })
      .catch(() => {
        counted += sending.seconds * 1000; // offline: send it with the next beat
      });
  }, SEND_EVERY_MS);

  const beacon = () => {
    const sending = payload();
    if (sending && !navigator.sendBeacon(url, sending.data)) counted += sending.seconds * 1000;
  };
  window.addEventListener("pagehide", beacon);
  document.addEventListener("visibilitychange", () => {
    if (document.visibilityState === "hidden") beacon();
  });
}
