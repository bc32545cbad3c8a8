// The project bar's task menus (<details class="navgroup">) work without this file; it makes them behave
// like menus: one open at a time, Escape closes the open one (focus back on its summary), a click elsewhere too.
const menus = () => document.querySelectorAll("details.navgroup");
document.addEventListener("toggle", (event) => {
  const opened = event.target;
  if (!(opened instanceof HTMLDetailsElement) || !opened.matches(".navgroup") || !opened.open) return;
  for (const menu of menus()) if (menu !== opened) menu.open = false;
}, true);
document.addEventListener("keydown", (event) => {
  if (event.key !== "Escape") return;
  for (const menu of menus()) {
    if (!menu.open) continue;
    menu.open = false;
    menu.querySelector("summary").focus();
  }
});
document.addEventListener("click", (event) => {
  for (const menu of menus()) if (menu.open && !menu.contains(event.target)) menu.open = false;
});
