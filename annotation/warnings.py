"""Advice shown while authoring. Never blocking: the annotator decides."""

from __future__ import annotations

import re
import threading
import unicodedata
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from django.db.models import Case, DateTimeField, F, When
from django.utils import timezone
from rapidfuzz import fuzz, process, utils

from annotation.models import Project, QAItem
from common.prepared import Prepared

NEAR_DUPLICATE_SCORE = 90  # rapidfuzz ratio, 0-100, on normalised questions

# Phrases that ask for a year or a date, per standard language (ISO 639-3).
# The study asks annotators not to write mostly "which year" questions.
DATE_QUESTION_PATTERNS: dict[str, list[str]] = {
    "cmn": [
        r"哪一年",
        r"哪年",
        r"几年",
        r"幾年",
        r"什么时候",
        r"什麼時候",
        r"何时",
        r"何時",
        r"哪一天",
        r"几月",
        r"幾月",
        r"年份",
        r"日期",
    ],
    "zho": [r"哪一年", r"哪年", r"什么时候", r"什麼時候", r"何时", r"何時", r"年份", r"日期"],
    "deu": [
        r"\bin welchem jahr\b",
        r"\bwelchem jahr\b",
        r"\bwelches jahr\b",
        r"\bwann\b",
        r"\bseit wann\b",
        r"\bdatum\b",
        r"\bjahreszahl\b",
    ],
    "arb": [r"متى", r"في أي عام", r"في أي سنة", r"أي عام", r"أي سنة", r"تاريخ"],
    "ara": [r"متى", r"في أي عام", r"في أي سنة", r"أي عام", r"أي سنة", r"تاريخ"],
    "eng": [r"\bwhat year\b", r"\bwhich year\b", r"\bwhen\b", r"\bwhat date\b", r"\bin what year\b"],
    "fra": [r"\bquand\b", r"\ben quelle année\b", r"\bquelle année\b", r"\bquelle date\b"],
    "ita": [r"\bquando\b", r"\bin che anno\b", r"\bin quale anno\b", r"\bche data\b"],
    "spa": [r"\bcuándo\b", r"\ben qué año\b", r"\bqué año\b", r"\bqué fecha\b"],
    "nld": [r"\bwanneer\b", r"\bin welk jaar\b", r"\bwelk jaar\b"],
}


@dataclass(frozen=True)
class AuthoringWarning:
    code: str
    message: str


def normalise(text: str) -> str:
    return " ".join(unicodedata.normalize("NFKC", text).casefold().split())


def asks_for_date(question: str, standard_language: str) -> bool:
    patterns = DATE_QUESTION_PATTERNS.get(standard_language, [])
    lowered = normalise(question)
    return any(re.search(pattern, lowered) for pattern in patterns)


def evidence_in_standard_lead(span_texts: list[str], standard_lead: str) -> list[str]:
    """Evidence snippets that also appear (normalised) in the standard lead."""
    haystack = normalise(standard_lead)
    return [text for text in span_texts if len(normalise(text)) >= 2 and normalise(text) in haystack]


def near_duplicate(question: str, others: list[str]) -> str | None:
    if not question.strip() or not others:
        return None
    match = process.extractOne(
        question, others, scorer=fuzz.ratio, processor=utils.default_process, score_cutoff=NEAR_DUPLICATE_SCORE
    )
    return match[0] if match else None


QUESTIONS_MARGIN = timedelta(minutes=2)  # a change committed up to this long after its `updated_at` is still seen
QUESTIONS_REBUILD = timedelta(minutes=10)  # the whole list is read again this often, whatever happened


@dataclass
class ProjectQuestions:
    """The questions of a project's live items, processed once for the near-duplicate advice: kept in this process
    and brought up to date on each use with the items changed since (a query of the few rows whose `updated_at` is
    recent, instead of every question of the project on every page view)."""

    project: tuple[int, datetime]  # id and creation time: a project made again with the same id starts afresh
    built_at: datetime
    read_at: datetime
    processed: dict[int, str] = field(default_factory=dict)  # item id -> question as rapidfuzz compares it
    original: dict[int, str] = field(default_factory=dict)
    order: dict[int, tuple[int, datetime, int]] = field(default_factory=dict)  # the items' order, for ties
    # Every item read so far (any question, deleted or not) -> its creation time, and the highest id read: the
    # items changed since the last use come without the creation time of those read before (parsing it was most
    # of the refresh's CPU, the same rows coming back while they are recent).
    created: dict[int, datetime] = field(default_factory=dict)
    highest: int = 0

    def put(self, pk: int, question: str, pair_id: int, created_at: datetime, alive: bool = True) -> None:
        if alive and question:
            self.processed[pk] = utils.default_process(question)
            self.original[pk], self.order[pk] = question, (pair_id, created_at, pk)
        else:
            self.processed.pop(pk, None)
            self.original.pop(pk, None)
            self.order.pop(pk, None)

    def near_duplicate(self, question: str, *, leave_out: int | None) -> str | None:
        """What `near_duplicate(question, others)` says of the project's other questions (in the items' order):
        the best match at NEAR_DUPLICATE_SCORE or above, the first in order among equals."""
        if not question.strip():
            return None
        matches = process.extract(
            utils.default_process(question),
            self.processed,
            scorer=fuzz.ratio,
            processor=None,
            score_cutoff=NEAR_DUPLICATE_SCORE,
            limit=None,
        )
        # Best first: only the matches of the best score are ordered (a much-repeated question matches many).
        best: float | None = None
        found = []
        for _text, score, pk in matches:
            if pk == leave_out:
                continue
            if best is not None and score < best:
                break
            best = score
            found.append((self.order[pk], pk))
        return self.original[min(found)[1]] if found else None


_QUESTIONS: dict[int, ProjectQuestions] = {}
_QUESTIONS_LOCK = threading.Lock()


def project_questions(project: Project) -> ProjectQuestions:
    """The questions of the project's live items, for `qa_item_warnings` (of one item or of a page of them).

    Kept per process: each use reads the items changed since the last one (`updated_at`, which every write of an
    item sets, a few rows), the whole list when it is older than QUESTIONS_REBUILD. Call it inside
    `with questions_lock():` while using the result (a threaded server shares it)."""
    now = timezone.now()
    key = (project.pk, project.created_at)
    known = _QUESTIONS.get(project.pk)
    items = QAItem.objects.filter(project_id=project.pk)
    if known is None or known.project != key or now - known.built_at > QUESTIONS_REBUILD:
        known = ProjectQuestions(project=key, built_at=now, read_at=now)
        rows = items.alive().exclude(question="").order_by().values_list("pk", "question", "pair_id", "created_at")
        for pk, question, pair_id, created_at in rows:
            known.put(pk, question, pair_id, created_at)
            known.created[pk] = created_at
            known.highest = max(known.highest, pk)
        _QUESTIONS[project.pk] = known
        return known
    changed = _changed_items().dicts(int(project.pk), known.read_at - QUESTIONS_MARGIN, known.highest)
    for row in changed:
        if row["created"] is not None:  # an id above the highest read
            known.created[row["pk"]] = row["created"]
    unseen = [row["pk"] for row in changed if row["pk"] not in known.created]
    if unseen:  # seldom: an older item not read before (no question then, or committed late)
        known.created.update(QAItem.objects.filter(pk__in=unseen).values_list("pk", "created_at"))
    for row in changed:
        pk = row["pk"]
        made = known.created.get(pk)  # None: removed meanwhile
        known.put(
            pk, row["question"], row["pair_id"], made or now, alive=row["deleted_at"] is None and made is not None
        )
        known.highest = max(known.highest, pk)
    known.read_at = now
    return known


def _changed_items() -> Prepared[Any]:
    """The project's items written since a time, with their creation time where the id is above a given one (None
    below it), compiled once (common/prepared.py): asked on every authoring page."""
    global _CHANGED
    if _CHANGED is None:
        _CHANGED = Prepared(
            lambda project_id, since, highest: (
                QAItem.objects.filter(project_id=project_id, updated_at__gte=since)
                .order_by()
                .values("pk", "question", "pair_id", "deleted_at")
                .annotate(created=Case(When(pk__gt=highest, then=F("created_at")), output_field=DateTimeField()))
            ),
            int,
            datetime,
            int,
        )
    return _CHANGED


_CHANGED: Prepared[Any] | None = None


def questions_lock() -> threading.Lock:
    return _QUESTIONS_LOCK


def qa_item_warnings(item: QAItem, *, questions: ProjectQuestions | None = None) -> list[AuthoringWarning]:
    """Advice on an item. `questions`: `project_questions` of its project, brought up to date once for a page of
    items (under `questions_lock()`)."""
    pair = item.pair
    project = pair.project
    warnings: list[AuthoringWarning] = []
    found = evidence_in_standard_lead([span.text for span in item.spans.all()], pair.standard_lead)
    if found:
        warnings.append(
            AuthoringWarning(
                "evidence_in_standard",
                f"The evidence “{found[0]}” also appears in the standard lead: the fact may not be local-only.",
            )
        )
    if item.answer_standard.strip() and normalise(item.answer_standard) in normalise(pair.standard_lead):
        warnings.append(
            AuthoringWarning("answer_in_standard", "The standard-language answer appears in the standard lead.")
        )
    if item.question.strip():
        if questions is None:
            with questions_lock():
                duplicate = project_questions(project).near_duplicate(item.question, leave_out=item.pk)
        else:
            duplicate = questions.near_duplicate(item.question, leave_out=item.pk)
        if duplicate:
            warnings.append(
                AuthoringWarning("near_duplicate", f"Nearly the same question exists in this project: “{duplicate}”.")
            )
        if asks_for_date(item.question, project.standard_language):
            warnings.append(
                AuthoringWarning(
                    "asks_for_date", "The question asks for a year or a date; the guidelines ask for other kinds too."
                )
            )
    return warnings
