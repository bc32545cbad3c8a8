// Verification inside each lead item: the search of the standard article follows the answer being written
// (until the annotator types a search of their own); a recorded verification belongs to the answer it checked,
// so changing the answer shows it as needing a new check at once; after a button records, the focus stays on
// that button in the panel that comes back.

function showCurrency(panel, answer) {
  const checked = panel.dataset.checkedAnswer;
  if (!panel.dataset.result || !checked) return; // nothing recorded, or "not possible" (any answer will do)
  const outdated = answer !== checked;
  panel.classList.toggle("is-outdated", outdated);
  panel.classList.toggle("is-recorded", !outdated);
  const result = panel.querySelector(".verify-result");
  if (result) {
    const label = document.createElement(outdated ? "strong" : "span");
    if (outdated) label.className = "needs-check";
    label.textContent = outdated ? "needs a new check" : panel.dataset.result;
    result.replaceChildren(label);
  }
  const line = panel.querySelector(".verify-outdated");
  if (line) {
    line.hidden = !outdated;
    if (outdated) {
      const quoted = document.createElement("span");
      quoted.className = "checked-answer";
      quoted.textContent = checked;
      line.replaceChildren(
        `${panel.dataset.result} for the earlier answer “`,
        quoted,
        "”: the answer changed since, so search and record again.",
      );
    }
  }
  panel.dispatchEvent(new CustomEvent("lq:verification-changed", { bubbles: true }));
}

function followAnswer(field) {
  const card = field.closest(".item-card");
  if (!card) return;
  // What the verifier checks is the answer as typed: the server refuses a record for an answer not saved yet.
  for (const input of card.querySelectorAll(".verify-answer")) input.value = field.value;
  const panel = card.querySelector(".verify-panel");
  if (panel) showCurrency(panel, field.value);
  const search = card.querySelector(".verify-q");
  if (!search || search.dataset.own) return;
  search.value = field.value;
  search.dispatchEvent(new Event("input", { bubbles: true })); // htmx searches after a pause
}

let refocus = null; // {panelId, selector} of the control that was focused in a panel being replaced

function controlSelector(element) {
  for (const name of ["record-found", "record-not-found", "record-not-possible", "verify-q"]) {
    if (element.classList.contains(name)) return `.${name}`;
  }
  return element.tagName === "TEXTAREA" ? "textarea[name=note]" : "h4";
}

export function initVerify() {
  document.addEventListener("input", (event) => {
    const field = event.target;
    if (field.matches?.(".verify-q") && event.isTrusted) {
      field.dataset.own = "true";
      return;
    }
    if (field.matches?.('form.item-form textarea[name="answer_standard"]')) followAnswer(field);
  });
  // A verify button pressed (by click, Enter or its key): the panel is replaced; the focus comes back to it.
  document.addEventListener(
    "submit",
    (event) => {
      const panel = event.target.closest?.(".verify-panel");
      if (!panel) return;
      const submitter = event.submitter || document.activeElement;
      refocus = { panelId: panel.id, selector: controlSelector(submitter) };
    },
    true,
  );
  document.body.addEventListener("htmx:afterSettle", (event) => {
    if (!refocus) return;
    const panel = document.getElementById(refocus.panelId);
    if (!panel || !(event.detail.elt === panel || panel.contains(event.detail.elt))) return;
    const target = panel.querySelector(refocus.selector) || panel.querySelector("h4");
    refocus = null;
    if (target) {
      if (target.tagName === "H4") target.tabIndex = -1;
      target.focus({ preventScroll: true });
    }
  });
}
