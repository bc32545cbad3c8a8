"""Pieces the review pages share."""

from __future__ import annotations

from collections.abc import Iterable
from itertools import pairwise
from typing import Any

from annotation.models import EvidenceSpan, QAItem


def highlighted(text: str, spans: Iterable[Any]) -> list[tuple[bool, str]]:
    """The text cut into (highlighted, piece) runs; offsets are code points, as stored. Templates escape the pieces."""
    ranges = [
        (max(0, s.start), min(len(text), s.end))
        for s in spans
        if s.start is not None and s.end is not None and s.end > s.start
    ]
    cuts = sorted({0, len(text), *(p for r in ranges for p in r)})
    pieces: list[tuple[bool, str]] = []
    for start, end in pairwise(cuts):
        marked = any(a <= start and end <= b for a, b in ranges)
        if pieces and pieces[-1][0] == marked:
            pieces[-1] = (marked, pieces[-1][1] + text[start:end])
        else:
            pieces.append((marked, text[start:end]))
    return pieces


def evidence_context(item: QAItem) -> dict[str, Any]:
    """The local text the item's evidence points into, with the evidence highlighted."""
    spans = list(item.spans.all())
    pair = item.pair
    if item.kind == QAItem.Kind.DOCUMENT:
        text, label = pair.local_text, "Local full text"
    else:
        text, label = pair.local_lead, "Local lead section"
    documents = {span.document for span in spans} or {EvidenceSpan.Document.LOCAL_LEAD}
    return {"evidence_pieces": highlighted(text, spans), "evidence_label": label, "evidence_documents": documents}
