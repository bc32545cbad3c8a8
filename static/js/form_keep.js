// What a judging form held when it was sent, kept in this tab until the page it opens has loaded: a person
// signed out in another tab (or whose session ran out) is sent to sign in, comes back to the same form, and
// finds their choices and text as they left them. A copy is restored only on the same page, for the same
// version of the item (the hidden `version` field), coming from the sign-in page (config/urls.py's login), within
// an hour; any other judging page drops it.

const KEY = "localqa:form-keep";
const MAX_AGE_MS = 60 * 60 * 1000;
const SIGN_IN_PATH = "/accounts/login/";

function fields(form) {
  return [...form.elements].filter(
    (element) => element.name && element.name !== "csrfmiddlewaretoken" && element.type !== "submit",
  );
}

export function keepOnSubmit(form) {
  form.addEventListener("submit", () => {
    const values = fields(form).map((element) =>
      element.type === "radio" || element.type === "checkbox"
        ? [element.name, element.value, element.checked]
        : [element.name, element.value, null],
    );
    const version = form.elements.namedItem("version");
    try {
      sessionStorage.setItem(
        KEY,
        JSON.stringify({ url: location.pathname, id: form.id, version: version ? version.value : "", at: Date.now(), values }),
      );
    } catch {
      /* storage disabled: nothing kept */
    }
  });
}

/** Put back what `form` held when it was last sent from this page, if that send did not get through. */
export function restore(form) {
  let kept = null;
  try {
    kept = JSON.parse(sessionStorage.getItem(KEY) || "null");
    sessionStorage.removeItem(KEY);
  } catch {
    return false;
  }
  const version = form.elements.namedItem("version");
  const from = document.referrer ? new URL(document.referrer).pathname : "";
  if (
    !kept ||
    from !== SIGN_IN_PATH ||
    kept.url !== location.pathname ||
    kept.id !== form.id ||
    kept.version !== (version ? version.value : "") ||
    Date.now() - kept.at > MAX_AGE_MS
  ) {
    return false;
  }
  const elements = fields(form);
  for (const [name, value, checked] of kept.values) {
    for (const element of elements.filter((e) => e.name === name)) {
      if (element.type === "radio" || element.type === "checkbox") {
        if (element.value === value) element.checked = checked;
      } else if (element.type !== "hidden") {
        element.value = value;
      }
    }
  }
  const note = document.createElement("p");
  note.className = "message info";
  note.id = "form-restored";
  note.setAttribute("role", "status");
  note.textContent = "What you entered before signing in again is back: check it and save.";
  form.prepend(note);
  return true;
}
