"""An item's history (revisions, word diffs, events), the author's list, and what an item page shows."""

from __future__ import annotations

import difflib
import re
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

from django.contrib.auth.models import User
from django.db.models import F, OuterRef, Subquery
from django.utils import timezone

from annotation.models import (
    EvidenceSpan,
    ItemEvent,
    Membership,
    Project,
    QAItem,
    QAItemRevision,
)
from common import kinds as project_kinds
from review.models import Judgment
from review.routing import Status


@dataclass
class FieldDiff:
    field: str
    label: str
    ops: list[tuple[str, str]]  # (equal | insert | delete, text)

    @property
    def changed(self) -> bool:
        return any(op != "equal" for op, _ in self.ops)


@dataclass
class RevisionEntry:
    revision: QAItemRevision
    diffs: list[FieldDiff]
    reviews: list[dict[str, Any]] = field(default_factory=list)  # [{slot, reviewer, judgments}]


_TOKEN = re.compile(r"\w+|\s+|.", re.UNICODE)


_HAN = re.compile(r"[\u3400-\u9fff\U00020000-\U0003ffff]")


def _tokens(text: str) -> list[str]:
    """Words for alphabetic scripts, single characters for Han (which has no spaces between words)."""
    tokens: list[str] = []
    for token in _TOKEN.findall(text):
        tokens.extend(list(token) if _HAN.search(token) else [token])
    return tokens


def text_diff(old: str, new: str) -> list[tuple[str, str]]:
    """A readable word/character diff as (equal | insert | delete, text) pieces; templates escape the text."""
    a, b = _tokens(old), _tokens(new)
    ops: list[tuple[str, str]] = []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if tag == "equal":
            ops.append(("equal", "".join(a[i1:i2])))
            continue
        if i2 > i1:
            ops.append(("delete", "".join(a[i1:i2])))
        if j2 > j1:
            ops.append(("insert", "".join(b[j1:j2])))
    return ops


def _revision_text(revision: QAItemRevision | None, name: str) -> str:
    if revision is None:
        return ""
    if name == "evidence":
        return " | ".join(span["text"] for span in revision.spans)
    if name == "options":
        options = revision.content.get("candidates") or revision.content.get("options") or []
        correct = revision.content.get("answer")
        return " | ".join(f"✓ {text}" if index == correct else str(text) for index, text in enumerate(options))
    return getattr(revision, name)


def item_history(item: QAItem) -> tuple[list[RevisionEntry], list[ItemEvent]]:
    """Every revision (diffed against the one before) with the reviews it got, and every event. Four queries."""
    revisions = list(item.revisions.select_related("author").order_by("number"))
    judgments = Judgment.objects.filter(item=item).select_related("reviewer").order_by("slot_id", "id")
    by_slot: dict[int, dict[str, Any]] = {}
    for judgment in judgments:
        entry = by_slot.setdefault(
            judgment.slot_id,
            {"revision_id": judgment.revision_id, "reviewer": judgment.reviewer, "judgments": [], "at": None},
        )
        entry["judgments"].append(judgment)
        entry["at"] = judgment.created_at
        entry["flagged"] = entry.get("flagged", False) or judgment.verdict == Judgment.Verdict.FLAG
    entries: list[RevisionEntry] = []
    previous = None
    fields = project_kinds.of(item.project).history_fields  # each kind diffs its own fields
    for revision in revisions:
        diffs = [
            FieldDiff(name, label, text_diff(_revision_text(previous, name), _revision_text(revision, name)))
            for name, label in fields
        ]
        reviews = [review for review in by_slot.values() if review["revision_id"] == revision.pk]
        entries.append(RevisionEntry(revision, diffs, reviews))
        previous = revision
    events = list(item.events.select_related("actor").order_by("created_at", "id"))
    return entries, events


def latest_flags(item: QAItem) -> list[Judgment]:
    """The flags (with comments) of the item's latest reviewed revision: what the author is asked to fix."""
    revision_id = (
        Judgment.objects.filter(item=item).order_by("-revision__number").values_list("revision_id", flat=True).first()
    )
    if revision_id is None:
        return []
    return list(
        Judgment.objects.filter(revision_id=revision_id, verdict=Judgment.Verdict.FLAG).select_related("reviewer")
    )


def items_flags(item_ids: Iterable[int]) -> dict[int, list[Judgment]]:
    """The flags (criterion and reason) of each item's latest revision, for many items in one query."""
    latest = QAItemRevision.objects.filter(item=OuterRef("item_id")).order_by("-number").values("id")[:1]
    flags: dict[int, list[Judgment]] = defaultdict(list)
    for judgment in (
        Judgment.objects.filter(item_id__in=list(item_ids), verdict=Judgment.Verdict.FLAG)
        .annotate(latest=Subquery(latest))
        .filter(revision_id=F("latest"))
        .order_by("item_id", "id")
    ):
        flags[judgment.item_id].append(judgment)
    return flags


def author_items(*, project: Project, user: User, limit: int = 200) -> list[QAItem]:
    """An author's submitted items, sent back first, each with `flags`: what the review flagged and why."""
    order: dict[str, int] = {Status.NEEDS_REWRITE: 0, Status.SUBMITTED: 1}
    items = sorted(
        QAItem.objects.alive()
        .filter(project=project, author=user)
        .exclude(status=Status.DRAFT)
        .select_related("pair")
        .only(
            "id", "kind", "status", "question", "updated_at", "version", "project_id", "pair__id", "pair__local_title"
        )
        .order_by("-updated_at")[:limit],
        key=lambda item: order.get(item.status, 2),
    )
    flags = items_flags(item.pk for item in items if item.status == Status.NEEDS_REWRITE)
    for item in items:
        item.flags = flags.get(item.pk, [])  # type: ignore[attr-defined]
    return items


def show_reviewer_names(project: Project, membership: Membership | None, item: QAItem, user: User) -> bool:
    """Blind review hides reviewers from authors; coordinators and reviewers always see names."""
    if not project.blind_review:
        return True
    if membership is not None and (membership.is_coordinator or membership.is_reviewer):
        return item.author_id != user.pk or membership.is_coordinator
    return False


def time_box(item: QAItem) -> dict[str, Any]:
    minutes = item.project.document_qa_minutes
    deadline = item.created_at + timedelta(minutes=minutes)
    return {"minutes": minutes, "deadline": deadline, "overdue": timezone.now() > deadline}


def spans_document(item: QAItem) -> str:
    return EvidenceSpan.Document.LOCAL_LEAD if item.kind == QAItem.Kind.LEAD else EvidenceSpan.Document.LOCAL_TEXT
