// A model's suggestions beside a person's own controls (a validator's, a translator's): A takes every one shown,
// each "Use it" button takes its own. Taking fills the person's controls from the suggestion's <data value
// data-into="selector"> elements (a radio is checked, any other control gets the value) and marks the field as
// taken, so the server records accepted (saved as suggested), changed (taken, then changed) or ignored.
import { keyOf } from "./keymap.js";

const form = document.querySelector("form[data-suggestions]");
if (form) {
  const take = (box) => {
    for (const source of box.querySelectorAll("data[data-into]")) {
      const target = form.querySelector(source.dataset.into);
      if (!target) continue;
      if (target.type === "radio" || target.type === "checkbox") target.checked = true;
      else target.value = source.value;
      target.dispatchEvent(new Event("change", { bubbles: true }));
    }
    box.querySelector("input[data-taken]").value = box.dataset.suggestion;
    box.querySelector(".suggestion-taken").hidden = false;
    box.classList.add("taken");
  };

  for (const button of form.querySelectorAll("button[data-take]")) {
    button.addEventListener("click", () => take(button.closest("[data-suggestion]")));
  }
  document.addEventListener("keydown", (event) => {
    if (event.altKey || event.ctrlKey || event.metaKey || event.isComposing) return;
    const target = event.target;
    const typing =
      target instanceof HTMLElement &&
      (target.matches("textarea, select, input:not([type=radio]):not([type=checkbox])") || target.isContentEditable);
    if (typing || keyOf(event) !== "a") return;
    event.preventDefault();
    for (const box of form.querySelectorAll("[data-suggestion]")) take(box);
  });
  form.dataset.suggestionsReady = "";
}
