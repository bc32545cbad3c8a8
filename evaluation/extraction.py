"""Taking the answer out of a model's reply, per kind, with the outcome recorded for every item.

* Wikipedia QA: the release's prompts ask for the answer inside `<answer></answer>`; the first such tag (any case,
  across lines) is the answer. Outcomes: `found`, `empty` (the tag holds nothing, or only "..."), `not_found`.
* Multiple choice (trivia): a letter, two ways, both reported. *Strict* is BertaQA's rule for chat models: the
  reply, without surrounding whitespace, is exactly one of the option letters ("A." is wrong). *Tolerant* is what
  the harnesses' regex filters do: the first option letter standing alone ("(B)", "Answer: B.", "B) Paris"), Arabic
  letters أ/ب/ج/د read as A–D.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

FOUND, EMPTY, NOT_FOUND, MISSING = "found", "empty", "not_found", "missing"
LETTERS = "ABCDEFGHIJ"
_ANSWER_TAG = re.compile(r"<answer>(.*?)</answer>", re.IGNORECASE | re.DOTALL)
_ARABIC_LETTERS = str.maketrans({"أ": "A", "ا": "A", "ب": "B", "ج": "C", "د": "D"})


@dataclass(frozen=True, slots=True)
class Extracted:
    outcome: str  # found / empty / not_found
    text: str  # the answer scored ("" unless found)


def answer_tag(reply: str) -> Extracted:
    match = _ANSWER_TAG.search(reply)
    if match is None:
        return Extracted(NOT_FOUND, "")
    text = match.group(1).strip()
    if not text or text == "...":
        return Extracted(EMPTY, "")
    return Extracted(FOUND, text)


def letter_strict(reply: str, options: int) -> Extracted:
    text = reply.strip()
    if not text:
        return Extracted(EMPTY, "")
    return Extracted(FOUND, text) if text in LETTERS[:options] else Extracted(NOT_FOUND, "")


def letter_tolerant(reply: str, options: int) -> Extracted:
    text = reply.strip().translate(_ARABIC_LETTERS)
    if not text:
        return Extracted(EMPTY, "")
    allowed = LETTERS[:options]
    match = re.search(rf"(?<![A-Za-z])([{allowed}])(?![A-Za-z])", text)
    return Extracted(FOUND, match.group(1)) if match else Extracted(NOT_FOUND, "")
