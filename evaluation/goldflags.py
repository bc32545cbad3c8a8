"""One release item as a run saw it (question, gold, evidence, every scenario's answer side by side), and *gold
looks wrong*: a person reading the results flags the item's gold for the next release.

The flag goes through the review app (`review.decisions.qa_item_gold_flag`: an accepted item goes back to review
with a new round; the note is the item's `gold_flagged` event); the run keeps a `GoldFlag` row saying which run and
release the person was reading. The gold shown is the release's (its file, not the live item, which moves on);
the status and history are the live item's.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

import orjson
from django.contrib.auth.models import User
from django.db import transaction

from annotation.models import ItemEvent, Project, QAItem
from common.errors import InvalidInput, InvalidState
from evaluation.models import EvaluationRun, GoldFlag, Prediction
from exports import services as releases
from exports.models import Release
from multichoice.models import TriviaItem
from review.decisions import qa_item_gold_flag

# The release files that hold items, per project kind (the prompt files repeat them).
ITEM_FILES = {
    "wikipedia_qa": ("lead_qa.jsonl", "document_qa.jsonl"),
    "trivia": ("trivia.jsonl",),
    "entity_qa": ("entity_questions.jsonl",),
    "validation": ("validation_qa.jsonl",),
}
MAX_ITEM_ID = 200


def release_item_record(release: Release, item_id: str) -> dict[str, Any] | None:
    """The release's own line for one item (read line by line until found), or None when no file holds it."""
    needle = orjson.dumps(item_id)
    for name in ITEM_FILES.get(release.project.kind, ()):
        if release.file_entry(name) is None:
            continue
        with releases.release_file_path(release, name).open("rb") as handle:
            for raw in handle:
                if needle in raw:  # cheap test first: only lines mentioning the id are parsed
                    record = orjson.loads(raw)
                    if str(record.get("id")) == item_id:
                        return dict(record)
    return None


def release_item_qa_item(project: Project, item_id: str) -> QAItem | None:
    """The project's live item a release id names: `<slug>-q<pk>` (Wikipedia QA, validation), `<project>-e<pk>`
    (entity questions), a trivia item's external id or its item's pk."""
    items = QAItem.objects.filter(project=project).select_related("project")
    if match := re.fullmatch(re.escape(project.slug) + r"-q(\d{1,18})", item_id):
        return items.filter(pk=int(match[1])).first()
    if match := re.fullmatch(rf"{project.pk}-e(\d{{1,18}})", item_id):
        return items.filter(pk=int(match[1])).first()
    if project.kind == Project.Kind.TRIVIA:
        trivia = TriviaItem.objects.filter(project=project, external_id=item_id).values_list("item_id", flat=True)
        pk = trivia.first()
        if pk is None and item_id.isdigit() and len(item_id) <= 18:
            pk = (
                TriviaItem.objects.filter(project=project, item_id=int(item_id), external_id="")
                .values_list("item_id", flat=True)
                .first()
            )
        return items.filter(pk=pk).first() if pk is not None else None
    return None


@dataclass
class RunItem:
    item_id: str
    record: dict[str, Any] | None  # the release's line; None when the release holds no such item
    predictions: list[Prediction]  # every model's answer under every scenario, in the run's order
    qa_item: QAItem | None  # the live item, for its status and history; None when it is gone
    flags: list[GoldFlag]  # every gold flag of the item, from any run, newest first
    events: list[ItemEvent] = field(default_factory=list)  # the live item's history

    @property
    def gold(self) -> str:
        record = self.record or {}
        for key in ("answer_standard", "answer"):
            value = record.get(key)
            if isinstance(value, int) and not isinstance(value, bool):
                options = record.get("options") or []
                return f"{'ABCDEFGHIJ'[value]}: {options[value]}" if 0 <= value < len(options) else str(value)
            if value not in (None, ""):
                return str(value)
        return ""

    @property
    def can_flag(self) -> bool:
        if self.qa_item is None or self.qa_item.project.kind == Project.Kind.VALIDATION:
            return False  # a validation project's answers are judged on its validation screens
        return self.qa_item.status in (
            QAItem.Status.ACCEPTED,
            QAItem.Status.SUBMITTED,
            QAItem.Status.NEEDS_REWRITE,
        )


def run_item(run: EvaluationRun, item_id: str) -> RunItem:
    """One item of a run's release with the run's answers to it. An id the run holds no prediction for and the
    release does not hold either is no item of this run (Http404 is the caller's)."""
    item_id = item_id[:MAX_ITEM_ID]
    predictions = list(Prediction.objects.filter(run=run, item_id=item_id).order_by("model", "scenario", "id"))
    record = release_item_record(run.release, item_id)
    if record is None and not predictions:
        raise InvalidInput(f"Release v{run.release_version} has no item {item_id!r}.", field="item")
    qa_item = release_item_qa_item(run.project, item_id)
    flags: list[GoldFlag] = []
    events: list[ItemEvent] = []
    if qa_item is not None:
        flags = list(GoldFlag.objects.filter(qa_item=qa_item).select_related("flagged_by", "run"))
        events = list(qa_item.events.select_related("actor").order_by("created_at", "id"))
    return RunItem(item_id, record, predictions, qa_item, flags, events)


def gold_flag_create(*, run: EvaluationRun, item_id: str, user: User, note: str) -> GoldFlag:
    """Flag the gold of one item of the run's release as looking wrong: the review app records it on the item
    (and sends an accepted item back to review); the flag keeps the run, the release and the note."""
    item_id = item_id[:MAX_ITEM_ID]
    qa_item = release_item_qa_item(run.project, item_id)
    if qa_item is None:
        raise InvalidState(
            f"Item {item_id!r} is no longer in the project (deleted, or not one of its items): nothing to flag.",
            field="item",
        )
    note = (note or "").strip()
    with transaction.atomic():
        event = qa_item_gold_flag(
            item=qa_item,
            user=user,
            note=f"{note} (evaluation run {run.pk}, release v{run.release_version})" if note else "",
        )
        return GoldFlag.objects.create(
            run=run, item_id=item_id, qa_item=qa_item, event=event, note=note, flagged_by=user
        )
