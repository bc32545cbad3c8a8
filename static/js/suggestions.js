// A model's suggestions on the validation screen: A takes every one shown, each "Use it" button takes its own.
// Taking fills the validator's own controls (the suggestion is never sent by itself) and marks the field as
// taken, so the server records accepted (saved as suggested), changed (taken, then changed) or ignored.
import { keyOf } from "./keymap.js";

const form = document.querySelector("#validation-form");
if (form) {
  const take = (box) => {
    const field = box.dataset.suggestion;
    const value = box.dataset.value;
    if (field === "question") {
      const radio = form.querySelector(`input[name=question][value="${value}"]`);
      if (radio) radio.checked = true;
      const reason = form.querySelector("select[name=question_reason]");
      if (reason) reason.value = box.dataset.reason || "";
    } else if (field === "location") {
      const radio = form.querySelector(`input[name=location_relevant][value="${value}"]`);
      if (radio) radio.checked = true;
    } else if (field === "answer") {
      const answer = form.querySelector("textarea[name=answer]");
      if (answer) answer.value = value;
    }
    box.querySelector("input[data-taken]").value = field;
    box.querySelector(".suggestion-taken").hidden = false;
    box.classList.add("taken");
  };

  for (const button of form.querySelectorAll("button[data-take]")) {
    button.addEventListener("click", () => take(button.closest("[data-suggestion]")));
  }
  document.addEventListener("keydown", (event) => {
    if (event.altKey || event.ctrlKey || event.metaKey || event.isComposing) return;
    const target = event.target;
    if (target instanceof HTMLElement && (target.matches("textarea, select, input:not([type=radio]):not([type=checkbox])") || target.isContentEditable)) return;
    if (keyOf(event) !== "a") return;
    event.preventDefault();
    for (const box of form.querySelectorAll("[data-suggestion]")) take(box);
  });
  form.dataset.suggestionsReady = "";
}
