// "Test this endpoint" (templates/endpoints/endpoints.html). htmx swaps the reply or the error in; what it
// cannot swap (signed out in another tab, a stale page, no connection) is said here, where the reply would be.

const FORM = "form[data-endpoint-test]";

function formOf(event) {
  const elt = event.detail.elt;
  return elt instanceof Element ? elt.closest(FORM) : null;
}

function say(form, text, link) {
  const box = document.getElementById(`test-result-${form.dataset.endpointTest}`);
  if (!box) return;
  const message = document.createElement("p");
  message.className = "message error";
  message.setAttribute("role", "alert");
  message.textContent = text;
  if (link) {
    const anchor = document.createElement("a");
    anchor.href = link.href;
    anchor.textContent = link.text;
    message.append(" ", anchor);
  }
  box.replaceChildren(message);
}

document.addEventListener("htmx:responseError", (event) => {
  const form = formOf(event);
  if (!form) return;
  const xhr = event.detail.xhr;
  let problem = {};
  try {
    problem = JSON.parse(xhr.responseText || "{}") || {};
  } catch {
    problem = {};
  }
  if (xhr.status === 401) {
    const next = encodeURIComponent(window.location.pathname);
    const login = `${problem.login_url || "/accounts/login/"}?next=${next}`;
    say(form, "You are signed out (in another tab?): nothing was sent to the model.", { href: login, text: "Sign in again" });
  } else if (xhr.status === 403 && problem.code === "csrf") {
    say(form, "This page is out of date (you signed in again elsewhere): nothing was sent.", { href: window.location.pathname, text: "Reload it" });
  } else {
    say(form, problem.detail || `The server answered ${xhr.status}: the test did not run.`);
  }
});

document.addEventListener("htmx:sendError", (event) => {
  const form = formOf(event);
  if (form) say(form, "The server could not be reached: check the connection and test again.");
});
