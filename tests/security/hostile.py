"""Hostile text: a corpus of payloads and a project whose every user-writable field carries one.

Used by tests/security/test_hostile_text.py (the HTML the server sends) and
tests/browser/test_hostile_text.py (what Chromium does with it).
"""

from __future__ import annotations

import html
import json
from dataclasses import dataclass, field
from html.parser import HTMLParser
from typing import Any

from django.contrib.auth import get_user_model
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from annotation import ingest
from exports import services as exports
from tests import factories
from tests.conftest import api_as
from wikiqa import collect

# Each payload names itself (xss-N) so a dialog or console line says which one ran.
PAYLOADS: dict[str, str] = {
    "script-tag": '<script>alert("xss-1")</script>',
    "img-onerror": '<img src=x onerror=alert("xss-2")>',
    "svg-onload": '<svg onload=alert("xss-3")><circle r=1></circle></svg>',
    "javascript-url": '<a href="javascript:alert(\'xss-4\')">click me</a> javascript:alert("xss-4")',
    "attribute-breakout": '"><script>alert("xss-5")</script><input value="',
    "single-quote-breakout": "' autofocus onfocus=alert('xss-6') x='",
    "textarea-breakout": '</textarea><script>alert("xss-7")</script><textarea>',
    "script-breakout": '</script><script>alert("xss-8")</script>',
    "broken-markup": '<b>unclosed <i>broken <div class="x" <p <!-- xss-9',
    "iframe": "<iframe src=\"javascript:alert('xss-10')\"></iframe>",
    "htmx-attributes": '<div hx-get="/accounts/logout/" hx-trigger="load">xss-11</div>',
    "style": "<style>body{display:none}</style>xss-12",
    "rtl-override": "invoice\u202etxt.exe xss-13",
    "zero-width": "in\u200bvis\u200ci\u200dble\ufeff xss-14",
    "template-syntax": "{{ request.user.password }} {% debug %} {{7*7}} ${alert('xss-15')}",
    "markdown-link": "[click](javascript:alert('xss-16')) ![x](x\" onerror=\"alert('xss-16'))",
}

HOSTILE_USERNAME = (
    'ann<img src=x onerror=alert("xss-user")>'  # Django's validator would refuse it; a directory might not
)
HOSTILE_REVIEWER = "rev\u202e<b>xss-reviewer<b>"  # no "/": a user name is a URL segment (members page)


@dataclass
class HostileWorld:
    payload: str
    project: Any
    users: dict[str, Any]
    pair: Any
    excluded_pair: Any
    items: list[Any]
    slot: Any
    collection: Any
    job: Any
    pages: list[tuple[str, str, bool]] = field(default_factory=list)  # (role, url, shows the payload as text)


def build_hostile_world(payload: str, coordinator) -> HostileWorld:
    """Put `payload` into every user-writable text field, through the API where there is one, else the service."""
    users = {
        "coordinator": coordinator,
        "annotator": get_user_model().objects.create_user(HOSTILE_USERNAME, password=factories.PASSWORD),
        "reviewer": get_user_model().objects.create_user(HOSTILE_REVIEWER, password=factories.PASSWORD),
    }
    project = factories.project(coordinator, slug="hostile")
    as_coordinator = api_as(coordinator)
    url = f"/api/projects/{project.slug}/"
    guidelines = f"# Guidelines\n\n{payload}\n\n<script>alert('xss-md')</script>\n\n[link](javascript:alert('xss-md'))"
    response = as_coordinator.patch(url, {"name": f"P {payload}"[:200], "guidelines": guidelines}, format="json")
    assert response.status_code == 200, response.content
    for role in ("annotator", "reviewer"):
        response = as_coordinator.post(
            url + "members/", {"username": users[role].username, "roles": [role]}, format="json"
        )
        assert response.status_code == 200, response.content
    criteria = [*project.review_criteria, {"key": "hostile", "label": f"L {payload}", "help": f"H {payload}"}]
    topics = ["food", f"t {payload}"[:64]]
    response = as_coordinator.patch(
        url + "review/settings/",
        {"review_criteria": criteria, "topics": topics, "blind_review": False, "labellers_per_pair": 1},
        format="json",
    )
    assert response.status_code == 200, response.content
    project.refresh_from_db()

    lead = factories.CANTONESE_LEAD + payload
    factories.pair(
        project,
        local_title=f"T {payload}"[:500],
        standard_title=f"S {payload}"[:500],
        local_lead=lead,
        standard_lead=factories.MANDARIN_LEAD + payload,
        local_text=lead + "\n" + payload,
        standard_text=factories.MANDARIN_LEAD + payload,
    )
    factories.pair(project, local_title=f"X {payload}"[:500])
    deleted = factories.pair(project, local_title=f"D {payload}"[:500], standard_title=f"DS {payload}"[:500])
    as_annotator = api_as(users["annotator"])
    pair_id = as_annotator.post(url + "queue/next/").data["id"]
    response = as_annotator.post(url + f"pairs/{pair_id}/screening/", {"decision": "annotate"}, format="json")
    assert response.status_code == 200, response.content
    start = len(factories.CANTONESE_LEAD)
    span = {"start": start, "end": start + len(payload), "text": payload}
    items = []
    for n in (1, 2):
        body = {"question": f"Q{n} {payload}", "answer_standard": f"A{n} {payload}", "answer_local": payload}
        response = as_annotator.post(url + f"pairs/{pair_id}/items/", body | {"spans": [span]}, format="json")
        assert response.status_code == 201, response.content
        items.append(response.data["id"])
    response = as_annotator.post(url + f"pairs/{pair_id}/submit/")
    assert response.status_code == 200, response.content
    excluded_id = as_annotator.post(url + "queue/next/").data["id"]
    response = as_annotator.post(
        url + f"pairs/{excluded_id}/screening/", {"decision": "other", "note": f"N {payload}"}, format="json"
    )
    assert response.status_code == 200, response.content

    as_reviewer = api_as(users["reviewer"])
    judgments = {c["key"]: {"verdict": "pass", "comment": f"C {payload}"} for c in project.review_criteria}
    slots = []
    for n, item_id in enumerate(items):
        slot = as_reviewer.post(url + f"review/items/{item_id}/claim/").data
        verdicts = judgments | ({"hostile": {"verdict": "flag", "comment": f"F {payload}"}} if n == 0 else {})
        response = as_reviewer.post(
            url + f"review/slots/{slot['id']}/", {"version": slot["version"], "judgments": verdicts}, format="json"
        )
        assert response.status_code == 200, response.content
        slots.append(slot["id"])
    response = as_reviewer.post(
        url + f"items/{items[1]}/verification/",
        {"result": "not_found", "version": 0, "query": payload, "note": f"V {payload}"},
        format="json",
    )
    assert response.status_code == 201, response.content
    for kind, value, detail in (("topic", topics[1], ""), ("region", "other", f"D {payload}")):
        response = as_coordinator.post(
            url + f"pairs/{pair_id}/labels/", {"kind": kind, "value": value, "detail": detail}, format="json"
        )
        assert response.status_code == 200, response.content

    response = as_coordinator.delete(url + f"pairs/{deleted.pk}/")  # for the Deleted list and the audit log
    assert response.status_code == 204, response.content

    from annotation.models import PagePair, QAItem
    from review.models import ReviewSlot

    release = exports.release_build_now(
        project=project, user=coordinator, item_statuses=["accepted"], changelog=f"CL {payload}", seed=1
    )
    assert release.status == "done", release.error
    collection = collect.collection_create(
        project=project, user=coordinator, titles=[f"W {payload}"[:500]], enqueue=False
    )
    job = ingest.import_job_create(
        project=project,
        user=coordinator,
        files=[SimpleUploadedFile(f"{payload}.jsonl".replace("/", "_")[:200], b"")],
        dry_run=True,
    )
    world = HostileWorld(
        payload=payload,
        project=project,
        users=users,
        pair=PagePair.objects.get(pk=pair_id),
        excluded_pair=PagePair.objects.get(pk=excluded_id),
        items=list(QAItem.objects.filter(pk__in=items).order_by("pk")),
        slot=ReviewSlot.objects.get(pk=slots[0]),
        collection=collection,
        job=job,
    )
    world.pages = hostile_pages(world)
    return world


def hostile_pages(world: HostileWorld) -> list[tuple[str, str, bool]]:
    """Every page that shows the world's text: (who opens it, URL, whether the payload must show literally)."""
    slug = world.project.slug
    pair, first, second = world.pair.pk, world.items[0].pk, world.items[1].pk
    return [
        ("coordinator", reverse("home"), True),
        ("coordinator", reverse("project_detail", args=[slug]), True),
        ("coordinator", reverse("project_settings", args=[slug]), True),
        ("coordinator", reverse("project_members", args=[slug]), False),  # usernames only
        ("coordinator", reverse("project_guidelines", args=[slug]), True),  # the name; the Markdown is sanitised
        ("coordinator", reverse("pair_list", args=[slug]), True),
        ("coordinator", reverse("item_list", args=[slug]), True),
        ("coordinator", reverse("pair_detail", args=[slug, pair]), True),
        ("coordinator", reverse("pair_detail", args=[slug, world.excluded_pair.pk]), True),
        ("coordinator", reverse("item_history", args=[slug, first]), True),
        ("coordinator", reverse("item_verify", args=[slug, second]), True),
        ("coordinator", reverse("label_list", args=[slug]), True),
        ("coordinator", reverse("pair_labels", args=[slug, pair]), True),
        ("coordinator", reverse("adjudication", args=[slug]), True),
        ("coordinator", reverse("dashboard", args=[slug]), True),
        ("coordinator", reverse("reviewers", args=[slug]), False),  # usernames only
        ("coordinator", reverse("review_settings", args=[slug]), True),
        ("coordinator", reverse("review_queue", args=[slug]), True),
        ("coordinator", reverse("release_list", args=[slug]), True),
        ("coordinator", reverse("release_detail", args=[slug, 1]), True),
        ("coordinator", reverse("export_settings", args=[slug]), True),
        ("coordinator", reverse("collection_detail", args=[slug, world.collection.pk]), True),
        ("coordinator", reverse("import_detail", args=[slug, world.job.pk]), True),
        ("coordinator", reverse("deleted_list", args=[slug]), True),
        ("coordinator", reverse("project_delete", args=[slug]), True),
        ("coordinator", reverse("audit_project", args=[slug]), False),  # texts cut to a length in the details
        ("annotator", reverse("my_items", args=[slug]), True),
        ("annotator", reverse("item_rewrite", args=[slug, first]), True),
        ("annotator", reverse("pair_detail", args=[slug, pair]), True),
        ("reviewer", reverse("review_queue", args=[slug]), True),
        ("reviewer", reverse("review_slot", args=[slug, world.slot.pk]), True),
        ("reviewer", reverse("item_history", args=[slug, second]), True),
    ]


class _Inspector(HTMLParser):
    """Collects what would execute or load: script elements, event handlers, script URLs, embedded documents."""

    URL_ATTRIBUTES = {"href", "src", "action", "formaction", "xlink:href", "data", "poster", "background"}
    FOREIGN_TAGS = {"iframe", "frame", "img", "object", "embed", "style", "math", "base", "link", "meta"}

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.problems: list[str] = []
        self._script: dict[str, str | None] | None = None
        self._script_text: list[str] = []
        self._in_head = True

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        named = dict(attrs)
        if tag == "body":
            self._in_head = False
        for name, value in attrs:
            lowered = (value or "").strip().lower()
            if name.startswith("on"):
                self.problems.append(f"<{tag} {name}=…>: an event handler")
            if name in self.URL_ATTRIBUTES and lowered.replace("\x00", "").startswith(("javascript:", "vbscript:")):
                self.problems.append(f"<{tag} {name}={value!r}>: a script URL")
            # The body's CSRF header is a random token: it may spell "load" by chance, and holds no user text.
            csrf_header = tag == "body" and name == "hx-headers" and lowered.startswith('{"x-csrftoken":')
            if (
                name.startswith(("hx-", "data-hx-"))
                and not csrf_header
                and ("xss-" in lowered or "load" in lowered or "logout" in lowered)
            ):
                self.problems.append(f"<{tag} {name}={value!r}>: an htmx attribute from user text")
        if tag in self.FOREIGN_TAGS and not (self._in_head and tag in {"link", "meta"}):
            self.problems.append(f"<{tag}> in the body: an element our templates never write")
        if tag == "svg" and named.get("class") != "bar":
            self.problems.append("<svg> that is not a dashboard bar")
        if tag == "script":
            self._script, self._script_text = named, []

    def handle_data(self, data: str) -> None:
        if self._script is not None:
            self._script_text.append(data)

    def handle_endtag(self, tag: str) -> None:
        if tag == "script" and self._script is not None:
            text = "".join(self._script_text)
            if self._script.get("type") == "application/json":
                try:
                    json.loads(text)
                except ValueError:
                    self.problems.append(f"<script type=application/json> that is not JSON: {text[:80]!r}")
            elif not self._script.get("src") or text.strip():
                self.problems.append(f"an inline <script>: {text[:80]!r}")
            self._script = None


def execution_risks(page: str) -> list[str]:
    """What in this HTML could run script or load a foreign document; empty when the page is inert."""
    inspector = _Inspector()
    inspector.feed(page)
    inspector.close()
    return inspector.problems


def shows_literally(page: str, text: str) -> bool:
    """The text appears as characters (element text or a form value), whatever escaping carried it."""
    return text in html.unescape(page)
