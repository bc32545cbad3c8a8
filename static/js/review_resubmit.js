// "Resubmit for review" sends the item version the autosave last saw: every save bumps it
// (the saved version arrives as an out-of-band swap of #item-<id>-version).
const sync = () => {
  for (const input of document.querySelectorAll("input.resubmit-version")) {
    const current = document.getElementById(`item-${input.dataset.itemId}-version`);
    if (current) input.value = current.value;
  }
};
document.addEventListener("htmx:oobAfterSwap", sync);
document.addEventListener("htmx:afterSwap", sync);
document.addEventListener("submit", sync, true);
