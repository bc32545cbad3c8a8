// The review screen by keyboard: one key per criterion verdict, Enter submits and opens the next item.
// Pass: 1 2 3 …  Flag: Q W E … (the reason box opens and takes the typing)  A: pass the rest
// Enter: submit and next (Ctrl+Enter inside a reason)  Esc: leave a reason  ?: the list of keys
import { keyOf } from "./keymap.js";

const screen = document.getElementById("review-screen");
const form = document.getElementById("judgment-form");
const dialog = document.getElementById("review-keys");

if (screen && form) {
  const criteria = [...form.querySelectorAll("fieldset.criterion")];
  const next = document.getElementById("judgment-submit-next");
  const needsReason = form.hasAttribute("data-flag-needs-reason");

  const reasonOf = (fieldset) => fieldset.querySelector("textarea");
  const choose = (fieldset, verdict) => {
    const input = fieldset.querySelector(`input[value="${verdict}"]`);
    input.checked = true;
    input.dispatchEvent(new Event("change", { bubbles: true }));
  };
  const syncRequired = (fieldset) => {
    const flagged = fieldset.querySelector('input[value="flag"]').checked;
    reasonOf(fieldset).required = needsReason && flagged;
  };
  criteria.forEach((fieldset) => {
    syncRequired(fieldset);
    fieldset.addEventListener("change", () => syncRequired(fieldset));
  });

  // The first evidence highlight in view inside its pane (the page itself does not move).
  const mark = document.querySelector(".evidence-text mark");
  if (mark) {
    const pane = mark.closest(".lead-text");
    pane.scrollTop = Math.max(0, mark.offsetTop - pane.offsetTop - pane.clientHeight / 3);
  }

  const byKey = new Map();
  criteria.forEach((fieldset) => {
    if (fieldset.dataset.passKey) byKey.set(fieldset.dataset.passKey, [fieldset, "pass"]);
    if (fieldset.dataset.flagKey) byKey.set(fieldset.dataset.flagKey, [fieldset, "flag"]);
  });

  const submitNext = () => form.requestSubmit(next);

  // Closing the list of keys gives the focus back to the page: left on the dialog's hidden Close button,
  // the next Enter would press that button (nothing) instead of submitting, until the browser moves it.
  const openKeys = () => dialog?.showModal();
  dialog?.addEventListener("close", () => {
    if (dialog.contains(document.activeElement)) document.activeElement.blur();
  });

  document.addEventListener("keydown", (event) => {
    if (event.altKey || event.isComposing) return;
    const target = event.target;
    const typing = target instanceof HTMLElement && (target.matches("textarea, input[type=text], select") || target.isContentEditable);
    if (dialog && dialog.open) return; // the dialog closes itself on Esc
    const inClosedDialog = dialog && target instanceof Node && dialog.contains(target);
    if (typing) {
      if (keyOf(event) === "Escape") {
        target.blur();
        event.preventDefault();
      } else if (keyOf(event) === "Enter" && (event.ctrlKey || event.metaKey)) {
        event.preventDefault();
        submitNext();
      }
      return;
    }
    if (event.ctrlKey || event.metaKey) return;
    const key = keyOf(event);
    if (key === "?") {
      event.preventDefault();
      openKeys();
      return;
    }
    if (keyOf(event) === "Enter") {
      const ownAction = target instanceof HTMLButtonElement || target instanceof HTMLAnchorElement;
      if (ownAction && !inClosedDialog) return; // their own action
      event.preventDefault();
      submitNext();
      return;
    }
    if (key === "a") {
      event.preventDefault();
      criteria.filter((f) => !f.querySelector("input:checked")).forEach((f) => choose(f, "pass"));
      return;
    }
    const found = byKey.get(key);
    if (!found) return;
    event.preventDefault();
    const [fieldset, verdict] = found;
    choose(fieldset, verdict);
    if (verdict === "flag") reasonOf(fieldset).focus();
  });

  document.getElementById("keys-help-open")?.addEventListener("click", openKeys);
}
