// Signed out in the middle of an edit (another tab, an expired session): say so, keep the
// text (autosave keeps its browser copy), offer to sign in here (a dialog) or in a new tab,
// then give the page the new security token and let the waiting saves run.

const waiting = new Set(); // callbacks to run once signed in again
let signedOut = false;

const workspace = () => document.getElementById("workspace");

export const isSignedOut = () => signedOut;

/** Run `callback` once the user is signed in again (now, if they are). */
export function whenSignedIn(callback) {
  if (!signedOut) callback();
  else waiting.add(callback);
}

function setToken(token) {
  for (const input of document.querySelectorAll("input[name=csrfmiddlewaretoken]")) input.value = token;
  // htmx reads hx-headers at every request.
  document.body.setAttribute("hx-headers", JSON.stringify({ "X-CSRFToken": token }));
}

/** Ask who is signed in; the answer carries the CSRF token the page must send from now on. */
export async function refreshSession() {
  const url = workspace()?.dataset.sessionUrl;
  const response = await fetch(url, { credentials: "same-origin", cache: "no-store", headers: { Accept: "application/json" } });
  const state = await response.json();
  setToken(state.csrf_token);
  return state;
}

/** The answer to a script request, as JSON if it is (our 401 and CSRF answers are). */
export function problemOf(xhr) {
  try {
    return JSON.parse(xhr.responseText || "null") || {};
  } catch {
    return {};
  }
}

export function showSignedOut() {
  const banner = document.getElementById("signed-out");
  if (!signedOut && banner) {
    banner.hidden = false;
  }
  signedOut = true;
}

async function signedInAgain() {
  let state;
  try {
    state = await refreshSession();
  } catch {
    return false; // offline: the next focus or storage event tries again
  }
  if (!state.authenticated) return false;
  signedOut = false;
  document.getElementById("signed-out").hidden = true;
  const dialog = document.getElementById("signin-dialog");
  if (dialog.open) dialog.close();
  const who = document.querySelector(".topbar .who");
  if (who) who.textContent = state.username;
  const callbacks = [...waiting];
  waiting.clear();
  callbacks.forEach((callback) => callback());
  return true;
}

async function signIn(form) {
  const error = document.getElementById("signin-error");
  error.hidden = true;
  const sessionUrl = workspace().dataset.sessionUrl;
  try {
    const before = await refreshSession(); // a current token for the sign-in itself
    if (before.authenticated) {
      await signedInAgain();
      return;
    }
    const data = new FormData(form);
    data.set("csrfmiddlewaretoken", before.csrf_token);
    data.set("next", sessionUrl); // success ends on the JSON session state, not on a page
    const response = await fetch(form.action, { method: "POST", body: data, credentials: "same-origin" });
    if (response.status === 429) throw new Error("Too many failed attempts for this user name; try again later.");
    const landed = new URL(response.url).pathname === sessionUrl;
    if (!landed || !(await response.json()).authenticated) throw new Error("The user name or password is not right.");
    form.elements.password.value = "";
    await signedInAgain();
  } catch (problem) {
    error.textContent = problem instanceof TypeError ? "The server cannot be reached; try again." : problem.message;
    error.hidden = false;
  }
}

export function initSession() {
  const dialog = document.getElementById("signin-dialog");
  if (!dialog || !workspace()) return;
  const form = document.getElementById("signin-form");
  // The banner does not take the focus (the annotator may be typing); the dialog opens when asked.
  document.getElementById("signin-open").addEventListener("click", () => {
    dialog.showModal();
    form.elements.username.value ||= document.querySelector(".topbar .who")?.textContent || "";
    (form.elements.username.value ? form.elements.password : form.elements.username).focus();
  });
  document.getElementById("signin-cancel").addEventListener("click", () => dialog.close());
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    signIn(form);
  });
  // Signed in from another tab (signed_in.js writes this key), or back to this tab after doing so.
  window.addEventListener("storage", (event) => {
    if (event.key === "localqa:signed-in" && signedOut) signedInAgain();
  });
  window.addEventListener("focus", () => {
    if (signedOut) signedInAgain();
  });
  // A plain form (submit the pair, skip) while signed out would end on the sign-in page: sign in first.
  document.addEventListener(
    "submit",
    (event) => {
      const target = event.target;
      if (!signedOut || target === form || target.method === "get" || target.hasAttribute("hx-post")) return;
      event.preventDefault();
      event.stopImmediatePropagation();
      dialog.showModal();
    },
    true,
  );
}
