// Counts that follow the page as it changes: "QA items N of 2–3" (and the add button at the
// maximum), lead items still to verify, each text's length against its limit as it is typed,
// and the field a refused save names.

import { codePointLength } from "./offsets.js";

function showLength(field) {
  const max = Number(field.dataset.max);
  const label = field.closest("label");
  const counter = label && label.querySelector(".length");
  if (!max || !counter) return;
  const length = codePointLength(field.value); // the server counts code points, as Python's len() does
  counter.textContent = `${length} / ${max}`;
  const over = length > max;
  counter.classList.toggle("is-over", over);
  field.toggleAttribute("aria-invalid", over);
  counter.title = over ? `${length - max} characters over the limit: this will not be saved until it is shorter` : "";
}

function countItems() {
  const section = document.querySelector(".items-section");
  if (!section) return;
  const leads = document.querySelectorAll('#items-list .item-card[data-kind="lead"]').length;
  const count = document.querySelector("#lead-count .n");
  if (count) count.textContent = String(leads);
  const add = document.getElementById("add-item");
  if (add) add.hidden = leads >= Number(section.dataset.leadMax);
  const reminder = document.getElementById("verification-reminder");
  if (reminder) {
    const left = document.querySelectorAll("#items-list .verify-panel:not(.is-recorded)").length;
    reminder.hidden = left === 0;
    reminder.textContent = `This project needs every lead-section QA verified on the standard page before the pair is submitted${left ? ` (${left} not yet)` : ""}.`;
  }
}

function markRefusedField(box) {
  const form = box && box.closest("form.item-form");
  if (!form) return;
  for (const field of form.querySelectorAll("textarea")) {
    const refused = field.name === box.dataset.field;
    if (refused) field.setAttribute("aria-invalid", "true");
    else if (Number(field.dataset.max) >= codePointLength(field.value)) field.removeAttribute("aria-invalid");
  }
}

export function initCounters() {
  for (const field of document.querySelectorAll("textarea[data-max], input[data-max]")) showLength(field);
  countItems();
  document.addEventListener("input", (event) => {
    if (event.target.dataset && event.target.dataset.max) showLength(event.target);
  });
  document.body.addEventListener("htmx:afterSettle", (event) => {
    for (const field of event.detail.elt.querySelectorAll?.("textarea[data-max]") ?? []) showLength(field);
    const box = event.detail.elt.closest?.(".save-status") || event.detail.elt.querySelector?.(".save-status");
    if (box) markRefusedField(box);
    countItems();
  });
  document.addEventListener("lq:verification-changed", countItems);
  const list = document.getElementById("items-list");
  if (list) new MutationObserver(countItems).observe(list, { childList: true });
}
