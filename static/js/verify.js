// Verification inside each lead item: the search of the standard article follows the
// answer being written (until the annotator types a search of their own).

export function initVerify() {
  document.addEventListener("input", (event) => {
    const field = event.target;
    if (field.matches?.(".verify-q") && event.isTrusted) {
      field.dataset.own = "true";
      return;
    }
    if (!field.matches?.('form.item-form textarea[name="answer_standard"]')) return;
    const search = field.closest(".item-card")?.querySelector(".verify-q");
    if (!search || search.dataset.own) return;
    search.value = field.value;
    search.dispatchEvent(new Event("input", { bubbles: true })); // htmx searches after a pause
  });
}
