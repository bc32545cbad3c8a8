// Evidence spans: selecting text in the local lead (mouse or keyboard), the
// highlights of every item's spans, and each item's evidence chips.
//
// The stored lead text (from the JSON script tag) is the source of truth. The
// lead container is always rebuilt from it with text nodes and <mark>s, so the
// concatenated text nodes equal the stored text and a DOM position can be
// counted back to an offset. Offsets are code points (see offsets.js).
//
// By keyboard: find-in-lead (`/`, type to jump, Enter selects the match), the arrows by character (Ctrl or Alt:
// by word), Up and Down by clause (to the next punctuation mark), Ctrl+Up/Down by sentence; with Shift they
// extend the selection. Wiki section heading lines (`== 生活 ==`) of a full text are shown as headings, their
// text unchanged (offsets count them as they are).

import { keyOf } from "./keymap.js";
import { codePointLength, codePointToUtf16, sliceCodePoints, utf16ToCodePoint } from "./offsets.js";

const COLOURS = 6;
const state = {
  lead: null, // the #local-lead element
  text: "", // the stored lead text
  length: 0, // its length in code points
  editable: false,
  anchor: 0, // keyboard selection, in code points
  focus: 0,
  activeItemId: null,
  wordBounds: null,
  placed: false, // the caret was put somewhere (a click, a selection, an added span), not just at the start
  clauseBounds: null,
  sentenceBounds: null,
  headings: [], // [{start, end, level}] of wiki heading lines, in code points
  find: null, // the find-in-lead box, once opened
};

const CLAUSE_MARKS = /[，、；：。！？,;:.!?؟،؛…\n]/u;
const SENTENCE_MARKS = /[。！？.!?؟\n]/u;
const HEADING_LINE = /^[ \t]*(={2,6})[ \t]*[^=\n].*?[ \t]*\1[ \t]*$/gmu;

// Items and their spans

const cards = () => Array.from(document.querySelectorAll("#items-list .item-card"));
const cardFor = (itemId) => document.getElementById(`item-${itemId}`);
const spansInput = (itemId) => document.getElementById(`item-${itemId}-spans`);
const colourFor = (number) => ((number - 1) % COLOURS) + 1;

export function readSpans(itemId) {
  const input = spansInput(itemId);
  if (!input || !input.value) return [];
  try {
    const spans = JSON.parse(input.value);
    return Array.isArray(spans) ? spans : [];
  } catch {
    return [];
  }
}

function writeSpans(itemId, spans) {
  const input = spansInput(itemId);
  if (!input) return;
  spans.sort((a, b) => a.start - b.start || a.end - b.end);
  input.value = JSON.stringify(spans);
  renderChips(itemId);
  renderLead();
  const form = input.closest("form.item-form");
  if (form) form.dispatchEvent(new CustomEvent("lq:spans-changed", { bubbles: true }));
}

function addSpan(itemId, span) {
  const spans = readSpans(itemId);
  if (spans.some((s) => s.start === span.start && s.end === span.end)) {
    notify(itemId, "That text is already evidence for this item.");
    return;
  }
  spans.push(span);
  writeSpans(itemId, spans);
  notify(itemId, "");
}

function removeSpan(itemId, index) {
  const spans = readSpans(itemId);
  spans.splice(index, 1);
  writeSpans(itemId, spans);
}

function notify(itemId, message) {
  const card = cardFor(itemId);
  const evidence = card && card.querySelector(".evidence");
  if (!evidence) return;
  let notice = evidence.querySelector(".evidence-notice");
  if (!notice) {
    notice = document.createElement("p");
    notice.className = "evidence-notice";
    notice.setAttribute("role", "status");
    evidence.append(notice);
  }
  notice.textContent = message;
  notice.hidden = !message;
}

// Chips

function renderChips(itemId) {
  const list = document.querySelector(`ul[data-spans-for="${CSS.escape(String(itemId))}"]`);
  if (!list) return;
  const card = cardFor(itemId);
  const colour = card ? card.dataset.colour : "1";
  const chips = readSpans(itemId).map((span, index) => {
    const chip = document.createElement("li");
    chip.className = `chip c${colour}`;
    chip.dataset.ref = `${itemId}:${index}`;
    const text = document.createElement("span");
    text.className = "chip-text";
    text.textContent = span.text;
    text.title = `characters ${span.start}–${span.end}`;
    chip.append(text);
    if (state.editable) {
      const remove = document.createElement("button");
      remove.type = "button";
      remove.className = "chip-remove";
      remove.dataset.itemId = itemId;
      remove.dataset.index = index;
      remove.setAttribute("aria-label", `Remove evidence “${span.text}”`);
      remove.textContent = "×";
      chip.append(remove);
    }
    return chip;
  });
  if (!chips.length) {
    const empty = document.createElement("li");
    empty.className = "chip empty";
    empty.textContent = "none yet";
    chips.push(empty);
  }
  list.replaceChildren(...chips);
}

// The lead: highlights and the keyboard caret

function allSpans() {
  const spans = [];
  cards().forEach((card, position) => {
    const number = position + 1;
    card.dataset.number = number;
    card.dataset.colour = colourFor(number);
    readSpans(card.dataset.itemId).forEach((span, index) => {
      const start = Math.max(0, Math.min(span.start, state.length));
      const end = Math.max(start, Math.min(span.end, state.length));
      if (end > start) spans.push({ start, end, number, ref: `${card.dataset.itemId}:${index}` });
    });
  });
  return spans;
}

function caretElement() {
  const caret = document.createElement("span");
  caret.className = "lead-caret";
  caret.setAttribute("aria-hidden", "true");
  return caret;
}

/** Rebuild the lead from the stored text: plain text nodes, a <mark> per highlighted stretch. */
export function renderLead({ fromDom = true } = {}) {
  const { lead, text } = state;
  if (!lead) return;
  // Rebuilding the nodes drops the DOM selection: remember it and put it back.
  const keepSelection = selectionInLead();
  if (keepSelection && fromDom) syncFromDom();
  const spans = allSpans();
  const caret = state.anchor === state.focus ? state.focus : null;
  const cuts = new Set([0, state.length]);
  for (const span of spans) cuts.add(span.start).add(span.end);
  for (const heading of state.headings) cuts.add(heading.start).add(heading.end);
  if (caret !== null) cuts.add(caret);
  const points = Array.from(cuts).sort((a, b) => a - b);
  const fragment = document.createDocumentFragment();
  points.forEach((from, i) => {
    if (from === caret) fragment.append(caretElement());
    const to = points[i + 1];
    if (to === undefined || to === from) return;
    const piece = text.slice(codePointToUtf16(text, from), codePointToUtf16(text, to));
    const covering = spans.filter((span) => span.start <= from && span.end >= to);
    const heading = state.headings.find((h) => h.start <= from && h.end >= to);
    // A heading's pieces sit in a span styled as a heading: the text (and so every offset) stays as stored.
    const into = heading ? document.createElement("span") : fragment;
    if (heading) {
      into.className = `wiki-heading level-${heading.level}`;
      fragment.append(into);
    }
    if (!covering.length) {
      into.append(document.createTextNode(piece));
      return;
    }
    const numbers = [...new Set(covering.map((span) => span.number))];
    const mark = document.createElement("mark");
    mark.className = `hl c${colourFor(numbers[0])}`;
    if (numbers.length > 1) mark.classList.add("overlap", `u${colourFor(numbers[1])}`);
    mark.dataset.refs = covering.map((span) => span.ref).join(" ");
    mark.title = `Evidence for item ${numbers.join(", ")}`;
    const starting = [...new Set(covering.filter((span) => span.start === from).map((span) => span.number))];
    if (starting.length) {
      mark.classList.add("span-start");
      mark.dataset.label = starting.join(",");
    }
    mark.textContent = piece;
    into.append(mark);
  });
  lead.replaceChildren(fragment);
  if (keepSelection || !fromDom) applySelection();
}

// DOM positions <-> offsets

function textNodes() {
  const walker = document.createTreeWalker(state.lead, NodeFilter.SHOW_TEXT);
  const nodes = [];
  for (let node = walker.nextNode(); node; node = walker.nextNode()) nodes.push(node);
  return nodes;
}

/** The UTF-16 offset, relative to the lead's text, of a DOM boundary point (clamped to the lead). */
function utf16OffsetOf(node, offset) {
  const { lead } = state;
  if (node !== lead && !lead.contains(node)) {
    return lead.compareDocumentPosition(node) & Node.DOCUMENT_POSITION_PRECEDING ? 0 : state.text.length;
  }
  let total = 0;
  if (node.nodeType === Node.TEXT_NODE) {
    for (const text of textNodes()) {
      if (text === node) return total + offset;
      total += text.data.length;
    }
    return total;
  }
  // A point between child nodes: count the text nodes that start before it.
  const point = document.createRange();
  point.setStart(node, offset);
  for (const text of textNodes()) {
    if (point.comparePoint(text, 0) >= 0) break;
    total += text.data.length;
  }
  return total;
}

/** The DOM boundary point for a UTF-16 offset into the lead's text. */
function domPointAt(utf16) {
  let total = 0;
  const nodes = textNodes();
  for (const text of nodes) {
    if (utf16 <= total + text.data.length) return [text, utf16 - total];
    total += text.data.length;
  }
  return [state.lead, state.lead.childNodes.length];
}

function selectionInLead() {
  const selection = window.getSelection();
  return Boolean(
    selection && selection.rangeCount && state.lead.contains(selection.anchorNode) && state.lead.contains(selection.focusNode),
  );
}

/** Put the keyboard selection (state.anchor/focus) into the real DOM selection, so it shows. */
function applySelection() {
  const selection = window.getSelection();
  if (!selection) return;
  const [anchorNode, anchorOffset] = domPointAt(codePointToUtf16(state.text, state.anchor));
  const [focusNode, focusOffset] = domPointAt(codePointToUtf16(state.text, state.focus));
  selection.setBaseAndExtent(anchorNode, anchorOffset, focusNode, focusOffset);
}

/** Adopt a selection made with the mouse as the keyboard selection. */
function syncFromDom() {
  const selection = window.getSelection();
  if (!selectionInLead()) return;
  const anchor16 = utf16OffsetOf(selection.anchorNode, selection.anchorOffset);
  const focus16 = utf16OffsetOf(selection.focusNode, selection.focusOffset);
  const forward = anchor16 <= focus16;
  state.anchor = utf16ToCodePoint(state.text, anchor16, forward ? "start" : "end");
  state.focus = utf16ToCodePoint(state.text, focus16, forward ? "end" : "start");
}

const isSpace = (char) => /^[\s\u200b\u200e\u200f]$/u.test(char);

/** The span the user has selected in the lead, whitespace trimmed, or null. */
export function currentSelection() {
  const selection = window.getSelection();
  if (!selection || !selection.rangeCount || selection.isCollapsed) return null;
  const range = selection.getRangeAt(0);
  if (!range.intersectsNode(state.lead)) return null;
  const start16 = utf16OffsetOf(range.startContainer, range.startOffset);
  const end16 = utf16OffsetOf(range.endContainer, range.endOffset);
  let start = utf16ToCodePoint(state.text, start16, "start");
  let end = utf16ToCodePoint(state.text, end16, "end");
  while (start < end && isSpace(sliceCodePoints(state.text, start, start + 1))) start++;
  while (end > start && isSpace(sliceCodePoints(state.text, end - 1, end))) end--;
  if (end <= start) return null;
  return { start, end, text: sliceCodePoints(state.text, start, end) };
}

// Keyboard

function wordBounds() {
  if (state.wordBounds) return state.wordBounds;
  const bounds = new Set([0, state.length]);
  if (typeof Intl !== "undefined" && Intl.Segmenter) {
    const segmenter = new Intl.Segmenter(state.lead.lang || undefined, { granularity: "word" });
    for (const { segment, index, isWordLike } of segmenter.segment(state.text)) {
      if (!isWordLike) continue;
      bounds.add(utf16ToCodePoint(state.text, index));
      bounds.add(utf16ToCodePoint(state.text, index + segment.length));
    }
  } else {
    const chars = Array.from(state.text);
    chars.forEach((char, i) => {
      if (isSpace(char) !== isSpace(chars[i - 1] ?? " ")) bounds.add(i);
    });
  }
  state.wordBounds = Array.from(bounds).sort((a, b) => a - b);
  return state.wordBounds;
}

/** Stops before each mark (a clause or sentence ends there) and after it with the spaces that follow. */
function markBounds(marks) {
  const bounds = new Set([0, state.length]);
  const chars = Array.from(state.text);
  chars.forEach((char, i) => {
    if (!marks.test(char)) return;
    bounds.add(i);
    let after = i + 1;
    while (after < chars.length && (isSpace(chars[after]) || marks.test(chars[after]))) after++;
    bounds.add(after);
  });
  return Array.from(bounds).sort((a, b) => a - b);
}

function boundsFor(step) {
  if (step === "word") return wordBounds();
  if (step === "clause") return (state.clauseBounds ??= markBounds(CLAUSE_MARKS));
  return (state.sentenceBounds ??= markBounds(SENTENCE_MARKS));
}

/** The position one step (a character, or the next word, clause or sentence bound) forward or back. */
function moved(position, forward, step) {
  if (!step) return Math.max(0, Math.min(state.length, position + (forward ? 1 : -1)));
  const bounds = boundsFor(step);
  if (forward) return bounds.find((bound) => bound > position) ?? state.length;
  return bounds.findLast((bound) => bound < position) ?? 0;
}

function select(anchor, focus) {
  state.anchor = anchor;
  state.focus = focus;
  state.placed = true;
  renderLead({ fromDom: false });
}

function onLeadKeydown(event) {
  const key = keyOf(event);
  const vertical = key === "ArrowDown" || key === "ArrowUp";
  if (key === "ArrowLeft" || key === "ArrowRight" || vertical) {
    // Left and right move visually (in right-to-left text the right arrow goes back); down and up go on and
    // back in reading order, by clause (by sentence with Ctrl).
    const rtl = getComputedStyle(state.lead).direction === "rtl";
    const forward = vertical ? key === "ArrowDown" : (key === "ArrowRight") !== rtl;
    const modified = event.ctrlKey || event.altKey || event.metaKey;
    const step = vertical ? (modified ? "sentence" : "clause") : modified ? "word" : null;
    syncFromDom();
    const collapsed = state.anchor === state.focus;
    if (event.shiftKey) {
      select(state.anchor, moved(state.focus, forward, step));
    } else if (!collapsed && !step) {
      const edge = forward ? Math.max(state.anchor, state.focus) : Math.min(state.anchor, state.focus);
      select(edge, edge);
    } else {
      const to = moved(state.focus, forward, step);
      select(to, to);
    }
    event.preventDefault();
  } else if (key === "Home" || key === "End") {
    syncFromDom();
    const to = key === "Home" ? 0 : state.length;
    select(event.shiftKey ? state.anchor : to, to);
    event.preventDefault();
  } else if (key === "Enter" && state.editable && !(event.ctrlKey || event.metaKey)) {
    // (Ctrl+Enter is the page's: submit, or resubmit)
    const span = currentSelection();
    const itemId = activeItemId();
    if (span && itemId) {
      addSpan(itemId, span);
      select(span.end, span.end);
    }
    event.preventDefault();
  } else if (key === "Escape") {
    syncFromDom();
    select(state.focus, state.focus);
  }
}

// The active item: the card last focused or clicked, else the last one

function activeItemId() {
  if (state.activeItemId && cardFor(state.activeItemId)) return state.activeItemId;
  const all = cards();
  return all.length ? all[all.length - 1].dataset.itemId : null;
}

function setActive(itemId) {
  state.activeItemId = itemId;
  const active = activeItemId();
  for (const card of cards()) card.classList.toggle("is-active", card.dataset.itemId === active);
}

export function currentItemId() {
  return activeItemId();
}

export function activateItem(itemId) {
  setActive(itemId);
}

/** Add the lead's current selection to an item's evidence; false (with a hint on the item) when nothing is selected. */
export function addSelectionTo(itemId) {
  const span = currentSelection();
  setActive(itemId);
  if (!span) {
    notify(itemId, "Select text in the local lead first (press l to put the caret there).");
    return false;
  }
  addSpan(itemId, span);
  select(span.end, span.end);
  return true;
}

/** The first character of the lead that is in view: where the reader is. */
function visibleStart() {
  const box = state.lead.getBoundingClientRect();
  const x = Math.max(box.left, 0) + 4;
  const y = Math.max(box.top, 0) + 4;
  const hit = document.caretRangeFromPoint ? document.caretRangeFromPoint(x, y) : null;
  if (!hit || !state.lead.contains(hit.startContainer)) return 0;
  return utf16ToCodePoint(state.text, utf16OffsetOf(hit.startContainer, hit.startOffset));
}

/** Focus the lead with the keyboard caret where the reader is: where they last clicked or added, else the first line in view. */
export function focusLead() {
  if (!state.lead) return;
  if (!state.placed) {
    const at = visibleStart();
    state.anchor = state.focus = at;
  }
  state.placed = true;
  state.lead.focus({ preventScroll: true });
  select(state.focus, state.focus);
}

// Find in the lead: type to jump, Enter takes the match as the selection

function findMatches(needle) {
  if (!needle) return [];
  // Case folded only where lower case keeps every length (then UTF-16 offsets stay the same).
  const folded = state.text.toLowerCase();
  const same = folded.length === state.text.length;
  const haystack = same ? folded : state.text;
  const target = same ? needle.toLowerCase() : needle;
  const matches = [];
  for (let at = haystack.indexOf(target); at >= 0; at = haystack.indexOf(target, at + 1)) {
    const start = utf16ToCodePoint(state.text, at, "start");
    matches.push({ start, end: utf16ToCodePoint(state.text, at + target.length, "end") });
  }
  return matches;
}

/** The match shown while the find box keeps the typing: a highlight (no selection, so the focus stays there). */
function showFound(start, end) {
  state.anchor = start;
  state.focus = end;
  state.placed = true;
  if (!(typeof CSS !== "undefined" && CSS.highlights && typeof Highlight !== "undefined")) return null;
  const range = document.createRange();
  range.setStart(...domPointAt(codePointToUtf16(state.text, start)));
  range.setEnd(...domPointAt(codePointToUtf16(state.text, end)));
  CSS.highlights.set("lead-find", new Highlight(range));
  return range;
}

function clearFound() {
  if (typeof CSS !== "undefined" && CSS.highlights) CSS.highlights.delete("lead-find");
}

function showMatch(step = 0) {
  const { find } = state;
  const matches = findMatches(find.input.value);
  if (!matches.length) {
    find.status.textContent = find.input.value ? "not in the text" : "";
    find.input.setAttribute("aria-invalid", String(Boolean(find.input.value)));
    clearFound();
    state.anchor = state.focus = find.from;
    return;
  }
  find.input.removeAttribute("aria-invalid");
  // The first match at or after where the search started; Up and Down step through the others.
  let index = matches.findIndex((m) => m.start >= find.from);
  if (index < 0) index = 0;
  if (step) {
    const current = matches.findIndex((m) => m.start === Math.min(state.anchor, state.focus));
    index = ((current < 0 ? index : current) + step + matches.length) % matches.length;
  }
  const match = matches[index];
  const range = showFound(match.start, match.end);
  find.status.textContent = `${index + 1} of ${matches.length}`;
  const box = range?.getBoundingClientRect();
  if (box && box.height) {
    const lead = state.lead.getBoundingClientRect();
    if (box.top < lead.top || box.bottom > lead.bottom) state.lead.scrollTop += box.top - lead.top - lead.height / 3;
  }
}

function closeFind(accept) {
  const { find } = state;
  if (!find || find.box.hidden) return;
  find.box.hidden = true;
  clearFound();
  if (!accept) state.anchor = state.focus = find.from;
  // The match becomes the selection (Shift and the arrows extend it); set before the lead takes the focus, so
  // the lead's focus handler finds a selection in it and leaves it as it is.
  select(state.anchor, state.focus);
  state.lead.focus({ preventScroll: true });
}

/** Open the lead's find box: typing jumps to the text (the match is selected), Enter keeps it selected and goes
 * back to the lead (Shift with the arrows extends it, Enter adds it), Esc goes back to where the caret was. */
export function openFind() {
  if (!state.lead) return false;
  if (!state.find) {
    const box = document.createElement("div");
    box.className = "lead-find";
    box.innerHTML =
      '<label>Find in the text <input type="search" class="lead-find-input" autocomplete="off"></label> ' +
      '<span class="lead-find-status muted" role="status"></span> ' +
      '<small class="muted"><kbd>Enter</kbd> select · <kbd>↓</kbd><kbd>↑</kbd> other matches · <kbd>Esc</kbd> back</small>';
    const input = box.querySelector("input");
    input.lang = state.lead.lang;
    input.dir = state.lead.dir || "auto";
    state.lead.before(box);
    state.find = { box, input, status: box.querySelector(".lead-find-status"), from: 0 };
    input.addEventListener("input", () => showMatch());
    input.addEventListener("keydown", (event) => {
      if (event.isComposing) return;
      const key = keyOf(event);
      if (key === "Enter") closeFind(Boolean(findMatches(input.value).length));
      else if (key === "Escape") closeFind(false);
      else if (key === "ArrowDown" || key === "ArrowUp") showMatch(key === "ArrowDown" ? 1 : -1);
      else return;
      event.preventDefault();
      event.stopPropagation();
    });
  }
  const { find } = state;
  if (!state.placed) state.anchor = state.focus = visibleStart();
  find.from = Math.min(state.anchor, state.focus);
  find.box.hidden = false;
  find.input.focus();
  find.input.select();
  if (find.input.value) showMatch();
  return true;
}

function headingLines() {
  const headings = [];
  for (const found of state.text.matchAll(HEADING_LINE)) {
    headings.push({
      start: utf16ToCodePoint(state.text, found.index),
      end: utf16ToCodePoint(state.text, found.index + found[0].length),
      level: found[1].length,
    });
  }
  return headings;
}

function refreshItems() {
  document.getElementById("no-items")?.toggleAttribute("hidden", cards().length > 0);
  allSpans(); // numbers and colours first, the chips use them
  for (const card of cards()) renderChips(card.dataset.itemId);
  setActive(state.activeItemId);
  renderLead();
}

export function initSpans() {
  const lead = document.getElementById("local-lead");
  const source = document.getElementById("local-lead-text");
  if (!lead || !source) return;
  state.lead = lead;
  state.text = JSON.parse(source.textContent);
  state.length = codePointLength(state.text);
  state.headings = headingLines();
  state.editable = document.getElementById("workspace")?.dataset.editable === "true";
  state.anchor = state.focus = 0;
  lead.classList.toggle("is-selectable", state.editable);
  refreshItems();

  lead.addEventListener("keydown", onLeadKeydown);
  lead.addEventListener("focus", () => {
    // Keyboard focus shows the caret where the reader is; a mouse press is left alone (it is starting a selection).
    if (lead.matches(":focus-visible") && !selectionInLead()) {
      if (!state.placed) state.anchor = state.focus = visibleStart();
      select(state.focus, state.focus);
    }
  });
  lead.addEventListener("mouseup", () => {
    // A click (no drag) places the caret there; a drag leaves the selection alone.
    syncFromDom();
    if (state.anchor === state.focus) select(state.focus, state.focus);
  });

  document.addEventListener("mousedown", (event) => {
    // Keep the lead's selection (and focus) when an "add evidence" button is pressed.
    if (event.target.closest(".add-evidence")) event.preventDefault();
  });
  document.addEventListener("click", (event) => {
    const add = event.target.closest(".add-evidence");
    if (add) {
      const span = currentSelection();
      setActive(add.dataset.itemId);
      if (span) {
        addSpan(add.dataset.itemId, span);
        select(span.end, span.end);
      } else {
        notify(add.dataset.itemId, "Select text in the local lead first, then press this button.");
      }
      return;
    }
    const remove = event.target.closest(".chip-remove");
    if (remove) {
      removeSpan(remove.dataset.itemId, Number(remove.dataset.index));
      return;
    }
    const card = event.target.closest(".item-card");
    if (card) setActive(card.dataset.itemId);
  });
  document.addEventListener("focusin", (event) => {
    const card = event.target.closest && event.target.closest(".item-card");
    if (card) setActive(card.dataset.itemId);
  });
  // Hovering a chip lights up its highlight in the lead.
  let hotRef = null;
  document.addEventListener("mouseover", (event) => {
    const chip = event.target.closest && event.target.closest(".chip[data-ref]");
    if ((chip ? chip.dataset.ref : null) === hotRef) return;
    hotRef = chip ? chip.dataset.ref : null;
    for (const mark of lead.querySelectorAll("mark.is-hot")) mark.classList.remove("is-hot");
    if (chip) {
      for (const mark of lead.querySelectorAll(`mark[data-refs~="${CSS.escape(chip.dataset.ref)}"]`)) {
        mark.classList.add("is-hot");
      }
    }
  });

  const list = document.getElementById("items-list");
  if (list) {
    // Cards added (htmx) or deleted: renumber, draw their chips, redraw the highlights.
    new MutationObserver((records) => {
      const added = records
        .flatMap((record) => Array.from(record.addedNodes))
        .find((node) => node.nodeType === Node.ELEMENT_NODE && node.matches(".item-card"));
      if (added) state.activeItemId = added.dataset.itemId;
      refreshItems();
    }).observe(list, { childList: true });
  }
}
