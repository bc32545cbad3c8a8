// Checking a judge: y marks the answer correct, n incorrect (three-way: c correct, i incorrect, a not attempted), whatever the keyboard layout (keymap.js reads
// event.code when the layout is not Latin). The forms are looked up at each key: htmx swaps in the next item.
import { keyOf } from "./keymap.js";

document.addEventListener("keydown", (event) => {
  if (event.altKey || event.ctrlKey || event.metaKey || event.isComposing) return;
  const target = event.target;
  if (target instanceof HTMLElement && (target.matches("textarea, select, input") || target.isContentEditable)) return;
  const form = document.querySelector(`form[data-judge-key="${keyOf(event)}"]`);
  if (!form) return;
  event.preventDefault();
  form.requestSubmit();
});
document.body.dataset.judgeKeysReady = ""; // listening (a module runs after the page is shown: tests wait for this)
