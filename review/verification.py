"""Full-document verification: sentences of the standard text, the search, the recorded result."""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import opencc
from django.contrib.auth.models import User
from django.db import IntegrityError, transaction
from django.utils import timezone
from rapidfuzz import fuzz

from annotation.articles import HEADING
from annotation.lifecycle import MAX_TEXT_FIELD, item_event_record, spans_check
from annotation.models import ItemEvent, QAItem
from common.errors import InvalidInput, InvalidState, StaleEdit
from review.history import _HAN
from review.models import Verification
from review.routing import Status


@dataclass(frozen=True)
class Sentence:
    start: int
    end: int
    text: str

    @property
    def key(self) -> str:
        return f"{self.start}:{self.end}"


_SENTENCE = re.compile(r"[^\n]+?(?:[。！？!?；;]+[」』”’）)]*|\.(?=\s)|$)", re.MULTILINE)


def sentences_of(text: str) -> list[Sentence]:
    """Split a text into sentences with code-point offsets (Python str indices), whitespace trimmed.

    Wiki section headings (`== 制作 ==`) are not sentences: nothing can be verified by them.
    """
    sentences: list[Sentence] = []
    for found in _SENTENCE.finditer(text):
        piece = found.group()
        if HEADING.fullmatch(piece):
            continue
        start = found.start() + (len(piece) - len(piece.lstrip()))
        end = found.end() - (len(piece) - len(piece.rstrip()))
        if end > start:
            sentences.append(Sentence(start, end, text[start:end]))
    return sentences


@dataclass
class SentenceMatch:
    sentence: Sentence
    match: str  # exact | close | ""
    pieces: list[tuple[bool, str]]  # (highlighted, text)


CLOSE_SCORE = 75


def verification_search(text: str, query: str) -> list[SentenceMatch]:
    """Every sentence of the standard text, with exact occurrences of `query` (or its close match) marked."""
    query = (query or "").strip()
    results: list[SentenceMatch] = []
    for sentence in sentences_of(text):
        match, pieces = "", [(False, sentence.text)]
        if query:
            folded, target = _fold(sentence.text), _fold(query)
            if target in folded:
                match, pieces = "exact", _mark_all(sentence.text, folded, target)
            else:
                alignment = fuzz.partial_ratio_alignment(target, folded, score_cutoff=CLOSE_SCORE)
                if alignment is not None and alignment.dest_end > alignment.dest_start:
                    s, e = alignment.dest_start, alignment.dest_end
                    match = "close"
                    pieces = [
                        p
                        for p in [(False, sentence.text[:s]), (True, sentence.text[s:e]), (False, sentence.text[e:])]
                        if p[1]
                    ]
        results.append(SentenceMatch(sentence, match, pieces))
    return results


@functools.cache
def _simplified(char: str) -> str:
    """A Han character in simplified script (陳 → 陈), kept as it is when that is not one code point."""
    converted = _T2S.convert(char)
    return converted if len(converted) == 1 else char


_T2S = opencc.OpenCC("t2s")


def _fold(text: str) -> str:
    """Lower case and simplified Han, character by character so that every offset stays the same.

    A Mandarin answer in simplified script then finds a standard page written in traditional
    script (zh-hk, zh-tw) as an exact match.
    """
    lowered = text.lower()
    if len(lowered) != len(text):  # a few letters, such as İ, grow when lowered
        lowered = text
    return "".join(_simplified(char) if _HAN.match(char) else char for char in lowered)


def _mark_all(text: str, folded: str, target: str) -> list[tuple[bool, str]]:
    pieces: list[tuple[bool, str]] = []
    position = 0
    while (found := folded.find(target, position)) >= 0:
        if found > position:
            pieces.append((False, text[position:found]))
        pieces.append((True, text[found : found + len(target)]))
        position = found + len(target)
    if position < len(text):
        pieces.append((False, text[position:]))
    return pieces


def verification_current(item: QAItem) -> Verification | None:
    return Verification.objects.filter(item=item).order_by("-number").first()


def verification_record(
    *,
    item: QAItem,
    user: User,
    result: str,
    sentences: Iterable[Mapping[str, Any]] = (),
    query: str = "",
    note: str = "",
    version: int,
    answer: str | None = None,
) -> Verification:
    """Record whether a lead item's answer is on the standard full text. `version` is the latest number seen (0: none).

    The verification keeps the answer text it checked (the item's saved answer) and the search: when the answer
    changes it is no longer current (`Verification.is_current_for`). `answer`, when given, is the answer the
    verifier saw; another saved answer (typed elsewhere, or not saved yet) is refused rather than recorded.

    Found needs the supporting sentence(s), as code-point offsets into the
    standard full text that must match it exactly, like evidence spans. Without a
    standard full text the only possible result is `not_possible`.
    """
    if item.kind != QAItem.Kind.LEAD:
        raise InvalidState("Full-document verification is for lead-section items.", field="item")
    if item.status == Status.REJECTED:
        raise InvalidState("The item is rejected; it is no longer verified.", field="item")
    if result not in Verification.Result.values:
        raise InvalidInput(f"Unknown result {result!r}: use {', '.join(Verification.Result.values)}.", field="result")
    standard_text = item.pair.standard_text
    sentences = list(sentences or [])
    checked: list[dict[str, Any]] = []
    if not standard_text and result != Verification.Result.NOT_POSSIBLE:
        raise InvalidInput(
            "This pair was imported without the standard page's full text: verification is not possible.",
            field="result",
        )
    if standard_text and result == Verification.Result.NOT_POSSIBLE:
        raise InvalidInput("This pair has the standard full text: record found or not found.", field="result")
    if result == Verification.Result.FOUND:
        if not sentences:
            raise InvalidInput("Found needs the supporting sentence(s) from the standard text.", field="sentences")
        try:
            spans = spans_check(standard_text, sentences, document="standard full text")
        except InvalidInput as error:
            raise InvalidInput(
                error.message.replace("spans[", "sentences["),
                field=(error.field or "").replace("spans[", "sentences["),
                details={k.replace("spans[", "sentences["): v for k, v in (error.details or {}).items()},
            ) from None
        checked = [{"start": s.start, "end": s.end, "text": s.text} for s in spans]
    elif sentences:
        raise InvalidInput("Only a found result carries supporting sentences.", field="sentences")
    if answer is not None and answer != item.answer_standard:
        raise InvalidState(
            "The answer you checked is not the saved one: save the answer first (Ctrl+S), then record again.",
            field="answer",
        )
    if len(query) > MAX_TEXT_FIELD or len(note) > MAX_TEXT_FIELD:
        raise InvalidInput(f"The search text and the note are at most {MAX_TEXT_FIELD} characters.", field="note")
    latest = item.verifications.order_by("-number").values_list("number", flat=True).first() or 0
    if latest != version:
        raise StaleEdit(
            f"Someone recorded a verification in the meantime (now version {latest}, you had {version}).",
            current=verification_current(item),
        )
    try:
        with transaction.atomic():
            verification = Verification.objects.create(
                item=item,
                number=latest + 1,
                result=result,
                sentences=checked,
                query=query,
                answer=item.answer_standard,
                note=note,
                verifier=user,
                created_at=timezone.now(),
            )
            item_event_record(
                item=item,
                actor=user,
                action=ItemEvent.Action.VERIFIED,
                before=item.status,
                after=item.status,
                note=result,
            )
    except IntegrityError:
        raise StaleEdit(
            "Someone recorded a verification at the same moment; reload it.", current=verification_current(item)
        ) from None
    return verification
