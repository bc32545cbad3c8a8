// The guidelines open in a side panel beside the leads (never over them); the link still goes
// to the guidelines page without JavaScript.

export function initPanels() {
  const toggle = document.getElementById("guidelines-toggle");
  const panel = document.getElementById("guidelines-panel");
  const workspace = document.getElementById("workspace");
  if (!toggle || !panel || !workspace) return;
  const show = (open) => {
    panel.hidden = !open;
    workspace.classList.toggle("with-guidelines", open);
    toggle.setAttribute("aria-expanded", String(open));
    try {
      localStorage.setItem("localqa:guidelines-open", open ? "1" : "");
    } catch {
      /* storage disabled */
    }
  };
  toggle.addEventListener("click", (event) => {
    event.preventDefault();
    show(panel.hidden);
  });
  document.getElementById("guidelines-close")?.addEventListener("click", () => {
    show(false);
    toggle.focus();
  });
  let remembered = "";
  try {
    remembered = localStorage.getItem("localqa:guidelines-open") || "";
  } catch {
    /* storage disabled */
  }
  if (remembered && window.matchMedia("(min-width: 72rem)").matches) show(true);
}
