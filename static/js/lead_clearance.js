// On a narrow screen the local lead sticks to the top above the items: a field being edited must never sit
// under it. The lead's height (with the top bar's) becomes the page's scroll padding, so focusing or scrolling
// to a field stops below it, and a field focused under it is brought out.

const NARROW = window.matchMedia("(max-width: 56rem)");

function coveredHeight() {
  const lead = document.querySelector(".lead-column");
  if (!lead || !NARROW.matches || getComputedStyle(lead).position !== "sticky") return 0;
  return Math.max(0, lead.getBoundingClientRect().bottom);
}

function update() {
  document.documentElement.style.scrollPaddingTop = `${Math.ceil(coveredHeight()) + 8}px`;
}

export function initLeadClearance() {
  const lead = document.querySelector(".lead-column");
  if (!lead) return;
  update();
  new ResizeObserver(update).observe(lead);
  NARROW.addEventListener("change", update);
  document.addEventListener("focusin", (event) => {
    const field = event.target;
    if (!field.matches?.("textarea, input, select") || lead.contains(field)) return;
    const bottom = coveredHeight();
    if (!bottom) return;
    const top = field.getBoundingClientRect().top;
    if (top < bottom + 8) window.scrollBy({ top: top - bottom - 8 });
  });
}
