"""Advice shown while authoring. Never blocking: the annotator decides."""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

from django.db.models import QuerySet
from rapidfuzz import fuzz, process, utils

from annotation.models import Project, QAItem

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


# The near-duplicate advice compares a question with the project's latest questions, at most this many (a page
# reads them in one query; a project of more items compares with its newest ones).
NEAR_DUPLICATE_LIMIT = 5000


@dataclass(frozen=True)
class ProjectQuestions:
    """The questions of a project's live items (the latest NEAR_DUPLICATE_LIMIT), oldest first, read once for a
    page of items."""

    original: dict[int, str]  # item id -> its question
    processed: dict[int, str]  # item id -> the question as rapidfuzz compares it

    def near_duplicate(self, question: str, *, leave_out: int | None) -> str | None:
        """What `near_duplicate(question, others)` says of the other questions: the best match at
        NEAR_DUPLICATE_SCORE or above, the oldest among equals."""
        if not question.strip():
            return None
        # Two at most: the best one may be the item itself (ties keep the questions' order).
        matches = process.extract(
            utils.default_process(question),
            self.processed,
            scorer=fuzz.ratio,
            processor=None,
            score_cutoff=NEAR_DUPLICATE_SCORE,
            limit=2,
        )
        found = [pk for _text, _score, pk in matches if pk != leave_out]
        return self.original[found[0]] if found else None


def latest_questions(project: Project) -> QuerySet[QAItem, tuple[int, str]]:
    """The ids and questions of the project's latest live items with a question (read through the index of items by
    project: tests/annotation/test_question_plan.py)."""
    items = QAItem.objects.alive().filter(project=project).exclude(question="")
    return items.order_by("-id").values_list("id", "question")[:NEAR_DUPLICATE_LIMIT]


def project_questions(project: Project) -> ProjectQuestions:
    """The questions of the project's live items, for `qa_item_warnings` (of one item or of a page of them)."""
    rows = sorted(latest_questions(project))  # oldest first
    return ProjectQuestions(
        original=dict(rows), processed={pk: utils.default_process(question) for pk, question in rows}
    )


def qa_item_warnings(item: QAItem, *, questions: ProjectQuestions | None = None) -> list[AuthoringWarning]:
    """Advice on an item. `questions`: `project_questions` of its project, read once for a page of items."""
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
        duplicate = (questions or project_questions(project)).near_duplicate(item.question, leave_out=item.pk)
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
