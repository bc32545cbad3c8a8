// Nothing typed is lost: a localStorage backup of every item form while it is
// unsaved, visible save states, retries while offline, saving again once signed
// in after a sign-out (401) or a changed security token (403), a warning before
// leaving with unsaved work, and the ways out of a stale edit (409): load the
// newer version, compare both, or keep mine as a new version. Resolving clears
// the browser copy, and every other tab showing that copy reloads the item.

import { problemOf, refreshSession, showSignedOut, whenSignedIn } from "./session.js";

const FIELDS = ["question", "answer_standard", "answer_local", "spans"];
const RETRY_FIRST_MS = 1000;
const RETRY_MAX_MS = 15000;

const retries = new WeakMap(); // form -> {attempt, timer}
let waitingSubmit = null; // {form, submitter}: a page form (e.g. "Submit pair") held back until the drafts are saved
const sent = new WeakMap(); // form -> content of the request in flight

const storageKey = (itemId) => `localqa:item:${itemId}`;
const itemIdOf = (form) => form.closest(".item-card")?.dataset.itemId;
const isItemForm = (element) => element instanceof HTMLFormElement && element.matches("form.item-form");
const statusBox = (form) => document.getElementById(`item-${itemIdOf(form)}-status`);

function content(form) {
  const values = {};
  for (const name of FIELDS) values[name] = form.elements[name] ? form.elements[name].value : "";
  return values;
}

const sameContent = (a, b) => FIELDS.every((name) => (a[name] ?? "") === (b[name] ?? ""));

function readBackup(itemId) {
  try {
    return JSON.parse(localStorage.getItem(storageKey(itemId)) || "null");
  } catch {
    return null;
  }
}

function writeBackup(form) {
  const itemId = itemIdOf(form);
  if (!itemId) return;
  const previous = readBackup(itemId);
  const backup = {
    ...content(form),
    // The version this edit started from: kept across saves that fail, so a restore can detect conflicts.
    version: previous?.version ?? form.elements.version.value,
    savedAt: Date.now(),
  };
  try {
    localStorage.setItem(storageKey(itemId), JSON.stringify(backup));
  } catch {
    // Storage full or disabled: the server save still runs; nothing more we can do here.
  }
}

function clearBackup(form) {
  try {
    localStorage.removeItem(storageKey(itemIdOf(form)));
  } catch {
    /* storage disabled */
  }
}

/** Replace an item's card with the server's current one (the newer version after a conflict). */
function reloadItem(itemId) {
  const card = document.getElementById(`item-${itemId}`);
  if (!card) return Promise.resolve();
  const form = card.querySelector("form.item-form");
  if (form) {
    cancelRetry(form);
    markDirty(form, false);
  }
  return window.htmx.ajax("GET", window.location.pathname, {
    target: `#item-${CSS.escape(String(itemId))}`,
    select: `#item-${CSS.escape(String(itemId))}`,
    swap: "outerHTML",
  });
}

const csrfRetried = new WeakSet(); // a form sent again once with a fresh token (no loop)

function setStatus(form, state, message) {
  const box = statusBox(form);
  if (!box) return;
  box.classList.remove("is-saving", "is-dirty", "is-offline", "is-error");
  box.classList.add(`is-${state}`);
  box.textContent = message;
}

function markDirty(form, dirty) {
  form.classList.toggle("is-dirty", dirty);
  form.closest(".item-card")?.classList.toggle("is-dirty", dirty);
}

const anyUnsaved = () => document.querySelector("form.item-form.is-dirty, form.item-form.htmx-request") !== null;

function save(form) {
  if (form.isConnected) form.requestSubmit();
}

function scheduleRetry(form) {
  const retry = retries.get(form) || { attempt: 0, timer: null };
  clearTimeout(retry.timer);
  const delay = Math.min(RETRY_MAX_MS, RETRY_FIRST_MS * 2 ** retry.attempt);
  retry.attempt += 1;
  retry.timer = setTimeout(() => save(form), delay);
  retries.set(form, retry);
}

function cancelRetry(form) {
  const retry = retries.get(form);
  if (retry) clearTimeout(retry.timer);
  retries.delete(form);
}

function edited(form) {
  markDirty(form, true);
  writeBackup(form);
  const box = statusBox(form);
  // Keep a conflict or offline message in view until the next answer replaces it.
  if (box && !box.classList.contains("is-error") && !box.classList.contains("is-offline")) {
    setStatus(form, "dirty", "Unsaved changes…");
  }
}

/** Put a newer local backup back into the form (before htmx starts) and return the forms to save. */
function restoreBackups() {
  const restored = [];
  // Only forms that autosave (an editable pair); a submitted pair's forms are plain and read-only.
  for (const form of document.querySelectorAll("form.item-form[hx-post]")) {
    const backup = readBackup(itemIdOf(form));
    if (!backup) continue;
    if (sameContent(backup, content(form))) {
      clearBackup(form);
      continue;
    }
    for (const name of FIELDS) if (form.elements[name] && typeof backup[name] === "string") form.elements[name].value = backup[name];
    // Save against the version the edit started from: if the item moved on since, the server answers 409.
    if (backup.version) form.elements.version.value = backup.version;
    markDirty(form, true);
    const notice = document.createElement("p");
    notice.className = "notice restored";
    notice.setAttribute("role", "status");
    const when = new Date(backup.savedAt || Date.now()).toLocaleString();
    notice.textContent = `Restored changes that were not saved (kept in this browser, ${when}). Saving them now.`;
    form.before(notice);
    restored.push(form);
  }
  return restored;
}

function afterHtmxStarts(callback) {
  // htmx processes the page on DOMContentLoaded, which comes after this module runs.
  if (document.readyState === "complete") setTimeout(callback, 0);
  else document.addEventListener("DOMContentLoaded", () => setTimeout(callback, 0), { once: true });
}

export function initAutosave() {
  const restored = restoreBackups();
  afterHtmxStarts(() => restored.forEach(save));

  document.addEventListener("input", (event) => {
    const form = event.target.closest && event.target.closest("form.item-form");
    if (form) edited(form);
  });
  document.addEventListener("lq:spans-changed", (event) => {
    if (isItemForm(event.target)) edited(event.target);
  });

  document.addEventListener("htmx:beforeRequest", (event) => {
    const form = event.detail.elt;
    if (!isItemForm(form)) return;
    sent.set(form, content(form));
    const box = statusBox(form);
    if (box && !box.classList.contains("is-offline")) setStatus(form, "saving", "Saving…");
  });

  document.addEventListener("htmx:afterRequest", (event) => {
    const form = event.detail.elt;
    if (!isItemForm(form)) return;
    const status = event.detail.xhr ? event.detail.xhr.status : 0;
    if (status >= 200 && status < 300) {
      cancelRetry(form);
      csrfRetried.delete(form);
      // Typing during the request leaves newer text: that stays unsaved (its own save is queued).
      if (sameContent(sent.get(form) || {}, content(form))) {
        clearBackup(form);
        markDirty(form, false);
        form.closest(".item-card")?.querySelector(".notice.restored")?.remove();
      } else {
        writeBackupVersion(form, form.elements.version.value); // the newer text now builds on the saved version
      }
      if (waitingSubmit && !anyUnsaved()) {
        const held = waitingSubmit;
        waitingSubmit = null;
        held.form.requestSubmit(held.submitter); // with the button pressed (e.g. "then=next")
      }
    } else if (status === 400 || status === 409) {
      cancelRetry(form); // the answer (swapped in) says what to do; the text stays in the form and the backup
      waitingSubmit = null;
    }
  });

  const offline = (event) => {
    const form = event.detail.elt;
    if (!isItemForm(form)) return;
    markDirty(form, true);
    writeBackup(form);
    setStatus(form, "offline", "Not saved — offline, retrying…");
    scheduleRetry(form);
  };
  document.addEventListener("htmx:sendError", offline);
  document.addEventListener("htmx:timeout", offline);

  document.addEventListener("htmx:responseError", (event) => {
    const elt = event.detail.elt;
    const status = event.detail.xhr.status;
    const problem = problemOf(event.detail.xhr);
    const form = isItemForm(elt) ? elt : null;
    if (form) {
      markDirty(form, true);
      writeBackup(form);
    }
    const again = () => {
      const target = elt instanceof HTMLFormElement ? elt : elt.closest && elt.closest("form");
      if (target && target.isConnected) target.requestSubmit();
    };
    if (status === 401) {
      showSignedOut();
      if (form) setStatus(form, "error", "Not saved — you are signed out. Your text is kept in this browser and saved when you sign in.");
      waitingSubmit = null;
      whenSignedIn(again);
      return;
    }
    if (status === 403 && problem.code === "csrf" && !csrfRetried.has(elt)) {
      csrfRetried.add(elt); // signed in again elsewhere: the token changed; fetch it and send once more
      refreshSession().then(again, () => {});
      return;
    }
    if (!form) return;
    if (status >= 500) {
      setStatus(form, "error", "Not saved — the server had a problem, retrying…");
      scheduleRetry(form);
    } else {
      waitingSubmit = null;
      setStatus(form, "error", `Not saved — the server refused the change (HTTP ${status}). Reload the page; your text is kept in this browser.`);
    }
  });

  // Back online: retry now rather than at the next backoff step.
  window.addEventListener("online", () => {
    for (const form of document.querySelectorAll("form.item-form.is-dirty")) {
      if (retries.has(form)) {
        cancelRetry(form);
        save(form);
      }
    }
  });

  document.addEventListener("click", (event) => {
    const keep = event.target.closest && event.target.closest(".keep-mine");
    if (keep) {
      // A submit button: the form is sent with it (keep_mine_version) right after this.
      const form = keep.closest("form.item-form");
      if (form) {
        form.elements.version.value = keep.dataset.version;
        writeBackupVersion(form, keep.dataset.version);
      }
      return;
    }
    const newer = event.target.closest && event.target.closest(".load-newer");
    if (newer) {
      const form = newer.closest("form.item-form");
      if (form) clearBackup(form); // every other tab hears it (storage event) and drops its copy too
      reloadItem(newer.dataset.itemId);
    }
  });

  // Another tab resolved or saved an item: its browser copy is gone. A tab holding that same
  // copy (or nothing of its own) reloads the item, so a rejected text does not come back.
  window.addEventListener("storage", (event) => {
    const match = event.key && /^localqa:item:(\d+)$/.exec(event.key);
    if (!match || event.newValue !== null) return;
    const form = document.querySelector(`#item-${match[1]} form.item-form[hx-post]`);
    if (!form || form.classList.contains("htmx-request")) return;
    let copy = null;
    try {
      copy = JSON.parse(event.oldValue || "null");
    } catch {
      /* not ours */
    }
    const ownEdit = form.classList.contains("is-dirty") && !(copy && sameContent(copy, content(form)));
    if (!ownEdit && !form.contains(document.activeElement)) {
      form.closest(".item-card")?.querySelector(".notice.restored")?.remove();
      reloadItem(match[1]);
    }
  });

  // Submitting the pair right after typing: save the drafts first, then submit.
  document.addEventListener("submit", (event) => {
    const form = event.target;
    if (isItemForm(form) || form.hasAttribute("hx-post") || form.hasAttribute("hx-get") || !anyUnsaved()) return;
    event.preventDefault();
    waitingSubmit = { form, submitter: event.submitter && event.submitter.form === form ? event.submitter : null };
    for (const dirty of document.querySelectorAll("form.item-form.is-dirty:not(.htmx-request)")) save(dirty);
  });

  window.addEventListener("beforeunload", (event) => {
    if (!anyUnsaved()) return;
    event.preventDefault();
    event.returnValue = ""; // older browsers need it to show the dialog
  });
}

function writeBackupVersion(form, version) {
  const backup = readBackup(itemIdOf(form));
  if (!backup) return;
  backup.version = version;
  try {
    localStorage.setItem(storageKey(itemIdOf(form)), JSON.stringify(backup));
  } catch {
    /* storage disabled */
  }
}
