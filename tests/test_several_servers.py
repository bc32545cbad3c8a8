"""Several servers, one truth: two gunicorn servers and two Celery workers on one PostgreSQL database and one Redis
give the answers one server gives.

Annotators and reviewers work through the API on both servers at once (threads, real HTTP): no pair is handed to
two annotators, no review slot to two reviewers, no slot is judged twice and every item gets exactly the reviews
its project asks for; the agreement report the burst of reviews asks for is queued and computed once per debounce
(the judgments are counted in the shared cache, the report claimed by one worker); a release built through one
server of the pair has the same data files, byte for byte, as one built afterwards with a single server and a single
worker from the same data.
"""

from __future__ import annotations

import hashlib
import itertools
import threading
import time
from collections import Counter
from collections.abc import Callable
from functools import partial
from typing import Any

import httpx
import pytest
from django.db.models import Count

from accounts.tokens import api_token_create
from annotation.models import PagePair, QAItem
from annotation.services.members import membership_set
from annotation.services.projects import project_update
from exports import services as exports
from exports.models import Release
from review.models import AgreementReport, Judgment, ReviewSlot
from tests import factories
from tests.factories import CANTONESE_LEAD

PAIRS = 12
EVIDENCE = ("深水埗", "姓陳")  # two lead QAs a pair, the project's minimum
THRESHOLD = 30  # judgments between automatic agreement reports: 24 items × 2 reviews × 3 criteria = 144 in all

pytestmark = [
    pytest.mark.worker,
    pytest.mark.timeout(120),
    pytest.mark.postgresql(
        reason="several processes write the same rows at once: SQLite takes one writer at a time, and its claims "
        "(SELECT … FOR UPDATE SKIP LOCKED) and one-build constraints are PostgreSQL's"
    ),
]


@pytest.fixture
def live_worker_env(tmp_path) -> dict[str, str]:
    """What every server and worker of the test shares beyond the database and the broker: one cache key space
    (the debounce's counts live there), a short debounce; the media folder comes from the environment."""
    return {
        "CACHE_KEY_PREFIX": f"localqa-servers-{tmp_path.name}",
        "AGREEMENT_AUTO_JUDGMENTS": str(THRESHOLD),
        "AGREEMENT_AUTO_COUNTDOWN": "1",
    }


class Session:
    """One person's API client on one server; records what it was handed."""

    def __init__(self, base: str, token: str, slug: str) -> None:
        self.client = httpx.Client(base_url=f"{base}/api/projects/{slug}", timeout=30,
                                   headers={"Authorization": f"Token {token}"})  # fmt: skip

    def call(self, method: str, url: str, ok: tuple[int, ...] = (200, 201), **kwargs: Any) -> httpx.Response:
        response = self.client.request(method, url, **kwargs)
        assert response.status_code in ok, f"{method} {url}: {response.status_code} {response.text[:500]}"
        return response


def annotate(session: Session, handed: list[int]) -> None:
    """Take pairs until the queue is empty: screen, write two lead QAs with their evidence, submit."""
    while (response := session.call("POST", "/queue/next/", ok=(200, 204))).status_code == 200:
        pair = response.json()
        handed.append(pair["id"])
        session.call("POST", f"/pairs/{pair['id']}/screening/", json={"decision": "annotate"})
        for evidence in EVIDENCE:
            item = session.call("POST", f"/pairs/{pair['id']}/items/", json={"question": f"关于{evidence}？"}).json()
            start = CANTONESE_LEAD.index(evidence)
            session.call("PATCH", f"/items/{item['id']}/", json={
                "version": item["version"], "question": f"关于{evidence}的问题？", "answer_standard": evidence,
                "answer_local": evidence, "spans": [{"start": start, "end": start + len(evidence), "text": evidence}],
            })  # fmt: skip
        session.call("POST", f"/pairs/{pair['id']}/submit/")


def review(session: Session, handed: list[int], annotating: Callable[[], bool]) -> None:
    """Take review slots while the annotators work and until nothing is left; pass every criterion."""
    while True:
        response = session.call("POST", "/review/next/", ok=(200, 204))
        if response.status_code == 204:
            if not annotating():
                return
            time.sleep(0.1)
            continue
        slot = response.json()
        handed.append(slot["id"])
        judgments = {c["key"]: {"verdict": "pass", "comment": ""} for c in slot["criteria"]}
        session.call("POST", f"/review/slots/{slot['id']}/", json={"version": slot["version"], "judgments": judgments})


def run_all(targets: list[Callable[[], None]]) -> list[BaseException]:
    errors: list[BaseException] = []

    def guarded(target: Callable[[], None]) -> None:
        try:
            target()
        except BaseException as error:  # reported by the test, not lost in a thread
            errors.append(error)

    threads = [threading.Thread(target=guarded, args=(target,)) for target in targets]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=90)
    return errors


def data_files(release: Release) -> dict[str, str]:
    """sha256 of each file's bytes on disk, but the manifest and the card: they name the release's version and
    time, which differ between two releases whatever built them."""
    root = exports.release_dir(release)
    return {
        entry["name"]: hashlib.sha256((root / entry["name"]).read_bytes()).hexdigest()
        for entry in release.files
        if entry["name"] not in {"manifest.json", "README.md"}
    }


def wait_for_release(worker, pk: int) -> Release:
    worker.wait_for(lambda: Release.objects.get(pk=pk).status not in ("pending", "running"), timeout=60)
    release = Release.objects.get(pk=pk)
    assert release.status == Release.Status.DONE, release.error
    return release


def test_two_servers_and_two_workers_give_the_answers_one_server_gives(
    start_worker, start_server, project, coordinator, annotator, second_annotator, reviewer
):
    project_update(project=project, reviewers_per_item=2)
    annotators = [annotator, second_annotator, factories.user("annotator3"), factories.user("annotator4")]
    reviewers = [reviewer, factories.user("reviewer2"), factories.user("reviewer3"), factories.user("reviewer4")]
    for person in annotators[2:]:
        membership_set(project=project, user=person, roles={"annotator"})
    for person in reviewers[1:]:
        membership_set(project=project, user=person, roles={"reviewer"})
    for _ in range(PAIRS):
        factories.pair(project)
    token = {person.pk: api_token_create(user=person)[1] for person in [coordinator, *annotators, *reviewers]}

    # Four processes started side by side: the test waits for the slowest, not for the sum.
    servers = [start_server(wait_ready=False), start_server(wait_ready=False)]
    workers = [start_worker(wait_ready=False), start_worker(wait_ready=False)]
    for server in servers:
        server.wait_ready()
    for worker in workers:
        worker.wait_for(lambda worker=worker: " ready." in worker.log(), timeout=60)

    pairs_handed: list[int] = []
    slots_handed: list[int] = []
    annotating = threading.Event()
    annotating.set()
    sessions = {person.pk: Session(servers[n % 2].url, token[person.pk], project.slug)
                for n, person in enumerate([*annotators, *reviewers])}  # fmt: skip

    def annotators_then_done() -> None:
        try:
            assert not run_all([partial(annotate, sessions[a.pk], pairs_handed) for a in annotators])
        finally:
            annotating.clear()

    errors = run_all([
        annotators_then_done,
        *[partial(review, sessions[r.pk], slots_handed, annotating.is_set) for r in reviewers],
    ])  # fmt: skip
    assert not errors, errors

    # Every pair handed once, and written by the one it was handed to.
    assert len(pairs_handed) == PAIRS and len(set(pairs_handed)) == PAIRS
    assert PagePair.objects.filter(project=project, status=PagePair.Status.SUBMITTED).count() == PAIRS
    items = QAItem.objects.filter(project=project)
    assert items.count() == PAIRS * len(EVIDENCE)
    assert set(items.values_list("status", flat=True)) == {QAItem.Status.ACCEPTED}
    # Every slot handed once, done once by one reviewer; each item reviewed by two different reviewers.
    assert Counter(slots_handed).most_common(1)[0][1] == 1
    slots = ReviewSlot.objects.filter(project=project)
    assert sorted(slots_handed) == sorted(slots.values_list("pk", flat=True))
    assert set(slots.values_list("status", flat=True)) == {ReviewSlot.Status.DONE}
    per_item = slots.values("item").annotate(n=Count("id"), people=Count("reviewer", distinct=True))
    assert {(row["n"], row["people"]) for row in per_item} == {(2, 2)}
    criteria = len(project.review_criteria)
    judged = Judgment.objects.filter(slot__project=project).values("slot").annotate(n=Count("id"))
    assert len(judged) == len(slots_handed) and {row["n"] for row in judged} == {criteria}

    # The agreement debounce: each report queued once the shared count passed the threshold, never two waiting at
    # once, each claimed and computed by one worker once (a second message for a report, sent when two servers
    # asked for it at the same moment, finds it taken).
    workers[0].wait_for(lambda: not AgreementReport.objects.active().exists(), timeout=30)
    reports = list(AgreementReport.objects.filter(project=project).order_by("pk"))
    judgments = Judgment.objects.filter(slot__project=project).count()
    assert 1 <= len(reports) <= judgments // THRESHOLD
    assert all(r.trigger == "auto" and r.status == "done" and r.attempts == 1 for r in reports), reports
    for earlier, later in itertools.pairwise(reports):
        assert later.created_at >= earlier.finished_at and later.judgment_watermark > earlier.judgment_watermark
    # A release through the second server, built by either worker...
    coordinator_on = [Session(server.url, token[coordinator.pk], project.slug) for server in servers]
    requested = coordinator_on[1].call("POST", "/releases/", ok=(202,), json={}).json()
    beside = wait_for_release(workers[0], Release.objects.get(project=project, version=requested["version"]).pk)
    # ... and one with a single server and a single worker: the same data files, byte for byte.
    servers[1].terminate()
    workers[1].terminate()
    servers[1].stop()
    workers[1].stop()
    requested = coordinator_on[0].call("POST", "/releases/", ok=(202,), json={}).json()
    alone = wait_for_release(workers[0], Release.objects.get(project=project, version=requested["version"]).pk)
    assert (beside.counts["lead_qa"], alone.counts["lead_qa"]) == (PAIRS * len(EVIDENCE),) * 2
    assert data_files(beside) == data_files(alone)
    assert len(data_files(alone)) >= 3
