"""Taking the answer out of a model's reply, per kind, with the outcome recorded for every item.

* Wikipedia QA: the release's prompts ask for the answer inside `<answer></answer>`; the first such tag (any case,
  across lines) is the answer. Outcomes: `found`, `empty` (the tag holds nothing, or only "..."), `not_found`.
* Multiple choice (trivia): a letter, two ways, both reported. *Strict* is BertaQA's rule for chat models: the
  reply, without surrounding whitespace, is exactly one of the option letters ("A." is wrong). *Tolerant* is what
  the harnesses' regex filters do: the first option letter standing alone ("(B)", "Answer: B.", "B) Paris"), Arabic
  letters أ/ب/ج/د read as A–D.
* Entity questions (geo-bias): the prompt asks for `{"response": "A"}`; as the study's code did, the text between
  the first `{` and the last `}` is parsed as JSON and its `response` is the letter. What does not parse, or names
  no option letter, is `not_found` (the study left such answers out; localqa scores them wrong and shows their
  rate beside the accuracy).
"""

from __future__ import annotations

import json
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


def answer_or_reply(reply: str) -> Extracted:
    """A validation question is asked alone, without the release's answer-tag prompt: the `<answer>` tag when the
    reply has one, else the whole reply, trimmed."""
    if _ANSWER_TAG.search(reply):
        return answer_tag(reply)
    text = reply.strip()
    return Extracted(FOUND, text) if text and text != "..." else Extracted(EMPTY, "")


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


def json_letter(reply: str, options: int) -> Extracted:
    text = reply.strip()
    if not text:
        return Extracted(EMPTY, "")
    start, end = text.find("{"), text.rfind("}")
    if start < 0 or end < start:
        return Extracted(NOT_FOUND, "")
    try:
        parsed = json.loads(text[start : end + 1])
    except ValueError:
        return Extracted(NOT_FOUND, "")
    response = parsed.get("response") if isinstance(parsed, dict) else None
    letter = response.strip().upper() if isinstance(response, str) else ""
    return Extracted(FOUND, letter) if len(letter) == 1 and letter in LETTERS[:options] else Extracted(NOT_FOUND, "")
