// Signing in from another tab: tell the tab that is waiting (it listens for this storage key).
try {
  localStorage.setItem("localqa:signed-in", String(Date.now()));
} catch {
  /* storage disabled: the waiting tab also checks when it gets the focus back */
}
