"""Models and search engines as collaborators, in Chromium: an author saves an item and sees the local-knowledge
flag arrive at it without reloading (htmx poll), then revises it; a validator sees an image-search result beside
the QA at 390 px without sideways scroll."""

from __future__ import annotations

import os
import re

import pytest
from playwright.sync_api import Page, expect

from annotation.models import LocalCheck
from annotation.services.items import qa_item_create
from annotation.services.members import membership_set
from common import jobs
from evaluation import local_checks
from tests.browser.conftest import log_in
from tests.endpoints.conftest import make_endpoint
from tests.validation.test_image_search import KEY, QUERY
from validation import search, services
from validation.models import ValidationItem

pytestmark = pytest.mark.browser

SHOTS = os.environ.get("SHOTS_DIR", "/tmp")
ANSWER = "菠萝包"


@pytest.fixture
def held_checks(monkeypatch):
    """Checks are sent to no worker: the test plays the worker, so the page is seen waiting first."""
    sent: list[int] = []
    job_type = jobs.JOB_TYPES["local_check"]
    monkeypatch.setitem(
        jobs.JOB_TYPES,
        "local_check",
        jobs.JobType(job_type.name, job_type.model, "tests.browser.test_local_check.no_task", job_type.stale_setting),
    )
    monkeypatch.setattr(jobs.JobType, "send", lambda self, pk, **options: sent.append(pk) or True)
    return sent


def test_an_author_saves_an_item_and_sees_the_local_knowledge_flag_arrive_without_reloading(
    page: Page, project, coordinator, annotator, annotating_pair, model_stub, settings, held_checks
):
    settings.LOCAL_CHECK_DELAY_SECONDS = 0
    endpoint = make_endpoint(project, coordinator, model_stub)
    local_checks.local_check_setting_save(
        project=project, user=coordinator, enabled=True, endpoint=endpoint, threshold=0.5
    )
    # The model answers only after reading the standard lead (which says the café is known for 菠萝包).
    model_stub.answer(lambda request: ANSWER if "Question:" in request.prompt_text else "不知道")
    item = qa_item_create(pair=annotating_pair, user=annotator)
    log_in(page, "annotator")
    page.goto(f"/projects/{project.slug}/pairs/{annotating_pair.pk}/")
    card = page.locator(f"#item-{item.pk}")
    card.locator("textarea[name=question]").fill("这家茶餐厅以什么闻名？")
    card.locator("textarea[name=answer_standard]").fill(ANSWER)
    expect(page.locator(f"#item-{item.pk}-status")).to_contain_text("Saved")
    panel = page.locator(f"#item-{item.pk}-local-check")
    expect(panel).to_contain_text("asking a model")  # the save is done; the model has not been asked
    assert model_stub.requests == []
    check = LocalCheck.objects.get(item=item)

    local_checks.local_check_run(check_id=check.pk)  # the worker

    expect(panel).to_contain_text("A model answers this from the standard article", timeout=8_000)
    expect(panel).to_contain_text(f"Its answer: “{ANSWER}”")
    assert page.evaluate("performance.getEntriesByType('navigation').length") == 1  # no reload
    page.screenshot(path=os.path.join(SHOTS, "local-check-1400.png"), full_page=True)

    # Revising the answer asks again; the model's answer no longer matches: local knowledge after all.
    card.locator("textarea[name=answer_standard]").fill("鸳鸯奶茶")
    expect(panel).to_contain_text("asking a model", timeout=8_000)
    local_checks.local_check_run(check_id=check.pk)
    expect(panel).to_contain_text("Local knowledge: the model did not give this answer", timeout=8_000)

    page.set_viewport_size({"width": 390, "height": 844})
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    page.screenshot(path=os.path.join(SHOTS, "local-check-390.png"), full_page=True)


@pytest.fixture
def vproject(coordinator, reviewer):
    project = services.validation_project_create(
        name="Qatar images", slug="qa-img", language="eng", location="Qatar", created_by=coordinator
    )
    membership_set(project=project, user=reviewer, roles={"reviewer"})
    return project


@pytest.mark.one_engine  # layout only: image collection runs on both engines in tests/validation/test_image_search.py
def test_a_validator_sees_an_image_result_at_390_px_without_sideways_scroll(
    page: Page, live_server, serpapi_stub, vproject, coordinator, reviewer, settings
):
    # The images are served by the live server itself (its origin is the page's own, so CSP allows it), at an
    # address the operator named with http://; any other host stays a link.
    settings.SEARCH_IMAGE_HOSTS = [f"http://{re.sub(r'^https?://', '', live_server.url)}"]
    services.seed_queries_add(project=vproject, rows=[("culture", QUERY, "Doha", "")], user=coordinator)
    search.search_key_set(project=vproject, key=KEY, user=coordinator)
    collection = search.search_collection_start(
        project=vproject, user=coordinator, search_type="images", budget=5, enqueue=False
    )
    search.search_collection_run(collection_id=collection.pk)
    vitem = ValidationItem.objects.get(project=vproject)
    images = vitem.metadata["search"]["images"]
    images[0]["thumbnail"] = f"{live_server.url}/static/favicon.svg"
    ValidationItem.objects.filter(pk=vitem.pk).update(metadata=vitem.metadata)

    page.set_viewport_size({"width": 390, "height": 844})
    log_in(page, "reviewer")
    slot = services.validation_claim_next(project=vproject, user=reviewer)
    assert slot is not None
    page.goto(f"/projects/{vproject.slug}/validation/tasks/{slot.pk}/")
    shown = page.locator("#search-images img").first
    expect(shown).to_be_visible()
    assert shown.evaluate("image => image.complete && image.naturalWidth > 0")  # loaded: CSP allowed it
    expect(page.locator("#search-images")).to_contain_text("Open the image on upload.wikimedia.org")
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    page.screenshot(path=os.path.join(SHOTS, "validation-images-390.png"), full_page=True)
