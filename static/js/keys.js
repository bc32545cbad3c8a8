// Keyboard-first authoring: a key for every step of a pair (shown on the buttons as <kbd>
// and listed in the `?` overlay). Single keys act only when the cursor is not in a text
// field; Esc leaves one. Ctrl+S, Ctrl+Enter and Ctrl+Shift+Enter work everywhere.

import { keyOf } from "./keymap.js";
import { activateItem, addSelectionTo, currentItemId, focusLead, openFind } from "./spans.js";

const TEXT_INPUT = "textarea, select, input:not([type=checkbox]):not([type=radio]):not([type=button]):not([type=submit]):not([type=hidden])";

const isTyping = (element) => Boolean(element && (element.isContentEditable || element.matches?.(TEXT_INPUT)));
const leadCards = () => Array.from(document.querySelectorAll("#items-list .item-card"));
const activeCard = () => {
  const id = currentItemId();
  return id ? document.getElementById(`item-${id}`) : null;
};

function click(selector, within = document) {
  const target = within && within.querySelector(selector);
  if (!target || target.hidden || target.disabled) return false;
  target.click();
  return true;
}

function visible(element) {
  if (!element) return false;
  const closed = element.closest("details:not([open])");
  return !closed || element.closest("summary") !== null;
}

function screen(number) {
  const button = document.querySelector(`#screening-form button.decision[data-key="${number}"]`);
  if (!button || !visible(button)) return false;
  if (button.value === "other") {
    const note = button.form.elements.note;
    if (!note.value.trim()) {
      note.focus(); // the reason first; the 4 on the button (or Enter on it) records it
      return true;
    }
  }
  button.click();
  return true;
}

function moveItem(step) {
  const cards = leadCards();
  if (!cards.length) return;
  const index = cards.indexOf(activeCard());
  const next = cards[Math.max(0, Math.min(cards.length - 1, (index < 0 ? cards.length : index) + step))];
  activateItem(next.dataset.itemId);
  next.focus();
  next.scrollIntoView({ block: "nearest" });
}

function focusIn(selector) {
  const card = activeCard();
  const target = card && card.querySelector(selector);
  if (!target) return false;
  target.focus();
  if (target.select && target.type === "search") target.select();
  return true;
}

function wholeArticle() {
  const details = activeCard()?.querySelector("details.whole-article");
  if (!details) return false;
  details.open = !details.open;
  if (details.open) details.querySelector(".article-body")?.focus({ preventScroll: false });
  else details.querySelector("summary")?.focus();
  return true;
}

function giveBack() {
  const panel = document.getElementById("give-back");
  if (!panel) return false;
  panel.open = true;
  panel.querySelector("input[name=reason], textarea[name=reason]")?.focus();
  return true;
}

function overlay() {
  const dialog = document.getElementById("keys-overlay");
  if (dialog && !dialog.open) dialog.showModal();
}

const SINGLE_KEYS = {
  "?": () => (overlay(), true),
  1: () => screen(1),
  2: () => screen(2),
  3: () => screen(3),
  4: () => screen(4),
  n: () => click("#add-item"),
  e: () => {
    const id = currentItemId();
    return id ? (addSelectionTo(id), true) : false;
  },
  l: () => (focusLead(), true),
  "/": openFind,
  q: () => focusIn("textarea[name=question]"),
  "[": () => (moveItem(-1), true),
  "]": () => (moveItem(1), true),
  v: () => focusIn(".verify-q"),
  f: () => click(".record-found", activeCard()),
  x: () => click(".record-not-found", activeCard()),
  p: () => click(".record-not-possible", activeCard()),
  w: () => wholeArticle(),
  s: giveBack,
  u: () => click("#undo-skip"),
  g: () => click("#guidelines-toggle"),
};

function onKeydown(event) {
  if (event.defaultPrevented || event.isComposing) return;
  const key = keyOf(event);
  const target = event.target;
  const modifier = event.ctrlKey || event.metaKey;
  if (modifier && !event.altKey && key === "s") {
    const form = (target.closest && target.closest("form.item-form")) || activeCard()?.querySelector("form.item-form");
    if (form) form.requestSubmit();
    event.preventDefault();
    return;
  }
  if (modifier && key === "Enter") {
    if (target.closest && target.closest("#give-back-form")) {
      target.form.requestSubmit();
    } else {
      // The pair page and the document-QA page submit the pair; the rewrite page resubmits the item.
      if (!click(event.shiftKey ? "#submit-pair" : "#submit-next")) click("#resubmit");
    }
    event.preventDefault();
    return;
  }
  if (key === "Escape" && isTyping(target) && !target.closest("dialog[open]")) {
    const card = target.closest(".item-card");
    (card || document.getElementById("local-lead"))?.focus({ preventScroll: true });
    event.preventDefault();
    return;
  }
  if (modifier || event.altKey || isTyping(target) || target.closest?.("dialog[open]")) return;
  const action = SINGLE_KEYS[key];
  if (action && action() !== false) event.preventDefault();
}

export function initKeys() {
  if (!document.getElementById("workspace")) return;
  document.addEventListener("keydown", onKeydown);
  // A closed dialog gives the focus back to the page: left on its hidden Close button, the next keys
  // would be taken for the dialog's until the browser moves the focus itself.
  document.addEventListener(
    "close",
    (event) => {
      if (event.target instanceof HTMLDialogElement && event.target.contains(document.activeElement)) {
        document.activeElement.blur();
      }
    },
    true,
  );
  const toggle = document.getElementById("keys-toggle");
  if (toggle) {
    toggle.hidden = false;
    toggle.addEventListener("click", overlay);
  }
  // A new item (n or the button): the keys go on from its card.
  document.body.addEventListener("htmx:afterSwap", (event) => {
    if (event.detail.target?.id !== "items-list") return;
    const cards = leadCards();
    const card = cards[cards.length - 1];
    if (card) {
      activateItem(card.dataset.itemId);
      card.focus({ preventScroll: true });
      card.scrollIntoView({ block: "nearest" });
    }
  });
}
