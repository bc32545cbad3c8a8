// The validator screen's 1–5 scores by keyboard: keys 1–5 score the row in focus (else the first row not
// scored yet), then focus moves to the next row. Typing in a text box or a list is left alone.
import { keyOf } from "./keymap.js";

const grid = document.querySelector("#validation-form .likert-grid");

if (grid) {
  const rows = [...grid.querySelectorAll(".likert-row")];
  const typing = (element) =>
    element instanceof HTMLTextAreaElement ||
    element instanceof HTMLSelectElement ||
    (element instanceof HTMLInputElement && !["radio", "checkbox"].includes(element.type));

  document.addEventListener("keydown", (event) => {
    if (event.ctrlKey || event.metaKey || event.altKey || typing(event.target)) return;
    const key = keyOf(event);
    if (!/^[1-5]$/.test(key)) return;
    const focused = event.target instanceof Element ? event.target.closest(".likert-row") : null;
    const row = focused || rows.find((r) => !r.querySelector("input:checked"));
    if (!row) return;
    event.preventDefault();
    const input = row.querySelector(`input[value="${key}"]`);
    input.checked = true;
    input.dispatchEvent(new Event("change", { bubbles: true }));
    const next = rows[rows.indexOf(row) + 1];
    (next ? next.querySelector("input:checked, input") : document.getElementById("validation-save")).focus();
  });
}
