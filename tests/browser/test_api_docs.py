"""The API docs work offline and under the Content-Security-Policy."""

import pytest
from playwright.sync_api import ConsoleMessage, Page, Request, expect

pytestmark = [pytest.mark.browser, pytest.mark.one_engine]  # static files under the CSP: no query


def test_api_docs_render_from_our_own_static_files_without_csp_violations(page: Page, live_server):
    problems: list[str] = []
    outside: list[str] = []

    def on_console(message: ConsoleMessage) -> None:
        if message.type == "error":
            problems.append(message.text)

    def on_request(request: Request) -> None:
        if not request.url.startswith(live_server.url):
            outside.append(request.url)

    page.on("console", on_console)
    page.on("requestfailed", lambda request: problems.append(f"failed: {request.url}"))
    page.on("request", on_request)

    response = page.goto(live_server.url + "/api/docs/")

    assert response is not None
    assert "script-src 'self'" in response.headers["content-security-policy"]
    expect(page.locator(".swagger-ui .info .title")).to_contain_text("localqa API")
    # The operations rendered, grouped by tag (a heading per tag; the tag's name links to its section).
    expect(page.get_by_role("heading", level=3).first).to_be_visible(timeout=20_000)
    expect(page.get_by_role("link", name="accounts", exact=True)).to_be_visible()
    assert not problems, problems
    assert not [url for url in outside if not url.startswith("data:")], outside
