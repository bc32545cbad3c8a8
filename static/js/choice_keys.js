// One key per choice on a judging form, whatever the keyboard layout (keys read through keymap.js).
// A choice's key is its input's `data-key` (shown beside it in a <kbd>): a radio is chosen, a checkbox
// toggled; `data-focus` names what takes the focus next (the reason list after "bad"). A button's key sends the
// form with that button, unless its `data-needs` names an empty field: then that field takes the focus (a
// rejection's reason). Enter saves and opens the next item (the form's [data-save-next] button), from a menu
// too; inside a text box Ctrl+Enter does (or sends the button the box's `data-submit` names), Esc leaves the box.
// Keys the form does not name (the 1–5 scores: likert_keys.js) are left to others. What the form held when sent
// comes back after a detour through the sign-in page (form_keep.js).
import { keepOnSubmit, restore } from "./form_keep.js";
import { keyOf } from "./keymap.js";

// A menu's options by their first letter under any layout: the browser's own type-to-select matches the character
// typed ("ب" with an Arabic layout), so a letter read from the physical key picks the next option starting with it.
function chooseByLetter(select, event, key) {
  if (key.length !== 1 || key === (event.key || "").toLowerCase()) return false; // a Latin layout: the browser's
  const options = [...select.options];
  const from = select.selectedIndex;
  for (let step = 1; step <= options.length; step += 1) {
    const option = options[(from + step) % options.length];
    if (!option.disabled && option.value && option.text.trim().toLowerCase().startsWith(key)) {
      select.value = option.value;
      select.dispatchEvent(new Event("change", { bubbles: true }));
      return true;
    }
  }
  return false;
}

for (const form of document.querySelectorAll("form[data-choice-keys]")) {
  restore(form); // what was sent while signed out elsewhere, back after signing in again
  keepOnSubmit(form);
  const byKey = new Map(
    [...form.querySelectorAll("input[data-key], button[data-key]")].map((input) => [input.dataset.key, input]),
  );
  const next = form.querySelector("[data-save-next]");
  const saveNext = () => (next ? form.requestSubmit(next) : form.requestSubmit());

  document.addEventListener("keydown", (event) => {
    if (event.altKey || event.isComposing) return;
    const target = event.target;
    if (target instanceof Element && target.closest("dialog")) return;
    const key = keyOf(event);
    const typing =
      target instanceof HTMLElement &&
      (target.matches("textarea, select, input:not([type=radio]):not([type=checkbox])") || target.isContentEditable);
    if (typing) {
      if (target instanceof HTMLSelectElement && !event.ctrlKey && !event.metaKey && chooseByLetter(target, event, key)) {
        event.preventDefault();
        return;
      }
      if (key === "Escape") {
        target.blur();
        event.preventDefault();
      } else if (key === "Enter" && target instanceof HTMLSelectElement && form.contains(target)) {
        // A menu has no Enter of its own to send the form (a text box does: its first button, Save and next)
        event.preventDefault();
        saveNext();
      } else if (key === "Enter" && (event.ctrlKey || event.metaKey) && form.contains(target)) {
        event.preventDefault();
        const own = target.dataset.submit ? form.querySelector(target.dataset.submit) : null;
        if (own) form.requestSubmit(own);
        else saveNext();
      }
      return;
    }
    if (event.ctrlKey || event.metaKey) return;
    if (key === "Enter") {
      if (target instanceof HTMLButtonElement || target instanceof HTMLAnchorElement) return; // their own action
      event.preventDefault();
      saveNext();
      return;
    }
    const input = byKey.get(key);
    if (!input) return;
    event.preventDefault();
    if (input instanceof HTMLButtonElement) {
      const needed = input.dataset.needs ? form.querySelector(input.dataset.needs) : null;
      if (needed && !needed.value.trim()) needed.focus();
      else form.requestSubmit(input);
      return;
    }
    input.checked = input.type === "checkbox" ? !input.checked : true;
    input.dispatchEvent(new Event("change", { bubbles: true }));
    const follow = input.dataset.focus ? form.querySelector(input.dataset.focus) : null;
    (follow || input).focus();
  });
  form.dataset.keysReady = ""; // listening (a module runs after the page is shown: tests wait for this)
}
