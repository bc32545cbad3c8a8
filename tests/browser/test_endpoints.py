"""A coordinator sets a model endpoint up in the browser: a host the operator did not allow is refused, the
endpoint pointing at the stub server answers its test, an edit keeps the key nobody typed again; by keyboard,
on a phone, signed out in another tab."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from playwright.sync_api import Page, ViewportSize, expect

from endpoints import services
from endpoints.models import EndpointSecret, ModelCall
from tests.browser.conftest import log_in, nav_to
from tests.model_stub import StubReply

pytestmark = pytest.mark.browser

SIZES: dict[str, ViewportSize] = {"desktop": {"width": 1440, "height": 900}, "phone": {"width": 390, "height": 844}}
KEY = "sk-browser-0123456789"
ARABIC = "الدوحة هي عاصمة قطر."


def _shots(tmp_path: Path) -> Path:
    folder = Path(os.environ.get("SHOTS_DIR") or tmp_path)
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def _look(page: Page, shots: Path, name: str) -> None:
    """At both sizes: a screenshot, and no sideways scrolling."""
    for size_name, size in SIZES.items():
        page.set_viewport_size(size)
        page.screenshot(path=str(shots / f"endpoints-{name}-{size_name}.png"), full_page=True)
        overflow = page.evaluate("document.documentElement.scrollWidth - document.documentElement.clientWidth")
        assert overflow <= 1, f"{name} at {size_name}: the page scrolls sideways by {overflow}px"
    page.set_viewport_size(SIZES["desktop"])


def test_a_coordinator_adds_tests_and_edits_an_endpoint(page: Page, project, coordinator, model_stub, tmp_path):
    shots = _shots(tmp_path)
    model_stub.answer(lambda request: StubReply(text=f"{ARABIC} 𨋢 𠵱家", tokens_in=21, tokens_out=9))
    page.set_viewport_size(SIZES["desktop"])
    log_in(page, "coordinator")
    page.goto(f"/projects/{project.slug}/")
    nav_to(page, "Model endpoints", "Settings")
    expect(page.get_by_role("heading", name="Model endpoints", level=1)).to_be_visible()
    expect(page.locator("main")).to_contain_text("No endpoint yet.")

    page.get_by_role("link", name="Add an endpoint").click()
    page.get_by_label("Name").fill("粵語 Qwen 𨋢")
    page.get_by_label("Base URL").fill("http://169.254.169.254/v1")
    page.get_by_label("Model", exact=True).fill("Qwen/Qwen2.5-7B-Instruct")
    page.get_by_label("Raw completion (a prompt, no chat template)").check()
    page.get_by_label("Chat (messages)").check()
    page.get_by_label("API key").fill(KEY)
    page.get_by_label("Temperature").fill("0.3")
    page.get_by_label("Stop sequences").fill("</antwort>\nServus")
    page.get_by_role("button", name="Add the endpoint").click()

    base_url = page.locator(".field.has-error", has=page.get_by_label("Base URL"))
    expect(base_url).to_contain_text("The host 169.254.169.254 (port 80) is not allowed: the operator allows 127.0.0.1")
    expect(page.get_by_label("Name")).to_have_value("粵語 Qwen 𨋢")  # what was typed stays
    expect(page.get_by_label("Stop sequences")).to_have_value("</antwort>\nServus")
    expect(page.get_by_label("API key")).to_have_value("")  # the key is never sent back ...
    expect(page.locator("#id_api_key-help")).to_have_text("Type the key again: it is never sent back to the browser.")
    assert KEY not in page.content()
    _look(page, shots, "form-refused")

    page.get_by_label("Base URL").fill(model_stub.base_url)
    page.get_by_label("API key").fill(KEY)
    page.get_by_label("Model", exact=True).press("Enter")  # Enter submits, as in any form

    expect(page.locator(".message.success")).to_contain_text("Endpoint 粵語 Qwen 𨋢 added")
    card = page.locator("section.endpoint", has_text="粵語 Qwen 𨋢")
    expect(card.locator("dd").nth(2)).to_have_text("set")
    expect(card).to_contain_text("temperature 0.3 · stop “</antwort>”, “Servus”")

    card.get_by_role("button", name="Test this endpoint").click()
    reply = card.locator(".test-result blockquote.reply")
    expect(reply).to_have_text(f"{ARABIC} 𨋢 𠵱家")
    expect(card.locator(".test-result")).to_contain_text("21 tokens in, 9 out")
    assert reply.evaluate("element => getComputedStyle(element).direction") == "rtl"
    assert model_stub.requests[-1].headers["authorization"] == f"Bearer {KEY}"
    _look(page, shots, "tested")

    card.get_by_role("link", name="Edit").click()
    expect(page.locator("#id_api_key-help")).to_contain_text("A key is set.")
    expect(page.get_by_label("API key")).to_have_value("")
    expect(page.get_by_label("Stop sequences")).to_have_value("</antwort>\nServus")
    _look(page, shots, "edit")
    page.get_by_label("Temperature").fill("0.1")
    page.get_by_role("button", name="Save the endpoint").click()

    expect(page.locator(".message.success")).to_contain_text("saved")
    expect(card).to_contain_text("temperature 0.1")
    expect(card.locator("dd").nth(2)).to_have_text("set")
    card.get_by_role("button", name="Test this endpoint").click()
    expect(card.locator(".test-result blockquote.reply")).to_be_visible()
    assert model_stub.requests[-1].headers["authorization"] == f"Bearer {KEY}"  # the key nobody typed again
    assert model_stub.requests[-1].json["temperature"] == 0.1
    page.reload()
    expect(page.locator("#model-calls tbody tr")).to_have_count(2)
    expect(page.locator("#model-calls tbody tr").first).to_contain_text("test")
    _look(page, shots, "calls")


def test_the_test_button_by_keyboard_signed_out_elsewhere_and_for_a_host_no_longer_allowed(
    page: Page, project, coordinator, model_stub, settings, tmp_path
):
    shots = _shots(tmp_path)
    endpoint = services.endpoint_create(
        project=project, user=coordinator, api_key=KEY, name="Boarisch", base_url=model_stub.base_url, model="m"
    )
    model_stub.script(StubReply(text="Servus, i bin a Modell."))
    log_in(page, "coordinator")
    page.goto(f"/projects/{project.slug}/model-endpoints/")
    card = page.locator(f"#endpoint-{endpoint.pk}")

    page.locator("main h1").click()
    for _ in range(20):  # by keyboard alone: Tab to the button, Enter
        page.keyboard.press("Tab")
        if page.evaluate("document.activeElement.textContent.trim()") == "Test this endpoint":
            break
    page.keyboard.press("Enter")
    expect(card.locator(".test-result blockquote.reply")).to_have_text("Servus, i bin a Modell.")

    other = page.context.new_page()  # the same person signs out in another tab
    other.goto(f"/projects/{project.slug}/model-endpoints/")
    other.locator(".topbar .account-menu summary").click()
    other.get_by_role("button", name="Log out").click()
    # The tab stays open: closing it while the sign-out's redirect commits can hang Chromium (playwright#42366).
    expect(other.locator(".topbar")).to_contain_text("Log in")
    sent = len(model_stub.requests)
    card.get_by_role("button", name="Test this endpoint").click()
    expect(card.locator(".test-result [role=alert]")).to_contain_text("You are signed out")
    expect(card.get_by_role("link", name="Sign in again")).to_be_visible()
    assert len(model_stub.requests) == sent
    _look(page, shots, "signed-out")

    log_in(page, "coordinator")
    page.goto(f"/projects/{project.slug}/model-endpoints/")
    page.get_by_role("link", name="Edit").click()
    page.go_back()  # the Back button returns to the list as it was
    expect(page.get_by_role("heading", name="Model endpoints", level=1)).to_be_visible()
    settings.MODEL_ALLOWED_HOSTS = ["localhost"]  # the operator takes 127.0.0.1 off the list
    card.get_by_role("button", name="Test this endpoint").click()
    expect(card.locator(".test-result .message.error")).to_contain_text("Host not allowed")
    expect(card.locator(".test-result .message.error")).to_contain_text("the operator allows localhost")
    assert len(model_stub.requests) == sent
    assert ModelCall.objects.filter(error_kind="host_refused").count() == 1
    assert EndpointSecret.objects.filter(endpoint=endpoint).exists()
    _look(page, shots, "host-refused")
