"""Normalised text and near-duplicate detection, shared by seed queries and imported QA pairs."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TypeVar
from urllib.parse import urlsplit

from rapidfuzz import fuzz, process

_PUNCTUATION = re.compile(r"[\W_]+", re.UNICODE)
# Arabic short vowels and tatweel: the same question is typed with and without them.
_ARABIC_MARKS = re.compile(r"[\u064b-\u065f\u0670\u0640]")


# Arabic letters typed interchangeably (hamza seats, alif maqsura, ta marbuta): folded when two words are compared.
_ARABIC_FOLD = str.maketrans({"أ": "ا", "إ": "ا", "آ": "ا", "ى": "ي", "ة": "ه", "ؤ": "و", "ئ": "ي"})
# A word this short ("s" of "what's", "a", "of", "في") never decides whether two questions differ.
_SHORT_WORD = 2
# Two words this close (rapidfuzz ratio) are one word spelled or inflected twice ("art"/"arts", "قطر"/"لقطر").
_SAME_WORD = 80


def normalise(text: str) -> str:
    """NFKC, case-folded, Arabic diacritics and tatweel dropped, punctuation as spaces, whitespace collapsed."""
    text = unicodedata.normalize("NFKC", text).casefold()
    text = _ARABIC_MARKS.sub("", text)
    return " ".join(_PUNCTUATION.sub(" ", text).split())


@dataclass(frozen=True)
class Duplicate:
    index: int  # position of the duplicate in the input
    of: int  # position of the first text it repeats
    exact: bool
    score: float


def _content_words(words: set[str]) -> list[str]:
    return [word.translate(_ARABIC_FOLD) for word in words if len(word) > _SHORT_WORD]


def rewords(first: str, second: str) -> bool:
    """Whether two close normalised texts can be the same question: no content word of one was swapped for a
    different word of the other.

    A character ratio over a whole question is high when one word of a long
    question changes ("Hindu temple" / "Buddhist temple", "Italian" / "Iranian"
    restaurant), yet that word is the question. So a word only one text has must
    be matched by a close spelling in the other (a typo, a plural, a clitic) —
    unless the other text has nothing in its place, as when an article or a
    filler word is added. A number is never a spelling variant.
    """
    a, b = set(first.split()), set(second.split())
    if any(char.isdigit() for word in a ^ b for char in word):
        return False  # a number only one of them has: event 1 / event 2, the 2022 / the 2018 final
    only_a, only_b = _content_words(a - b), _content_words(b - a)
    if not only_a or not only_b:
        return True
    return all(any(fuzz.ratio(x, y) >= _SAME_WORD for y in only_b) for x in only_a) and all(
        any(fuzz.ratio(y, x) >= _SAME_WORD for x in only_a) for y in only_b
    )


def _near_match(key: str, candidates: list[str], threshold: int) -> tuple[int, float] | None:
    """The best-scoring kept text that `key` rewords: (position, score) or None.

    The score is the higher of the character ratio and the ratio of sorted words (a moved phrase: "hosted the
    2022 final" / "hosted the final in 2022").
    """
    scored: dict[int, float] = {}
    for scorer in (fuzz.ratio, fuzz.token_sort_ratio):
        for _, score, position in process.extract(key, candidates, scorer=scorer, score_cutoff=threshold, limit=8):
            scored[position] = max(scored.get(position, 0.0), float(score))
    for position, score in sorted(scored.items(), key=lambda kv: (-kv[1], kv[0])):
        if rewords(key, candidates[position]):
            return position, score
    return None


# What texts are grouped by (seed queries: their location); `stored` is keyed the same way.
Group = TypeVar("Group", bound=Hashable)


def find_duplicates(
    texts: Sequence[str],
    *,
    groups: Sequence[Group] | None = None,
    threshold: int,
    stored: Mapping[Group, Iterable[str]] | None = None,
    earlier: Sequence[str] = (),
    progress: Callable[[int], None] | None = None,
) -> list[Duplicate]:
    """Texts that repeat an earlier one: equal after `normalise`, or scoring >= `threshold` against one they
    reword (`_near_match`, `rewords`).

    Only texts of the same group are compared (seed queries: the same location,
    so "… in Doha" and "… in Qatar" are not duplicates of each other). The first
    text of a set is the one kept. `stored` holds, per group, normalised texts
    already saved; a text repeating one of those gets `of = -1`. `earlier` are texts
    kept before (ungrouped), which `texts` are compared with but which are not searched
    themselves: positions (`index`, `of`) then count `earlier` first, then `texts`.
    `progress(n)` is called every thousand texts (the search compares each text with
    every one kept before it).
    """
    kept: dict[Hashable, list[str]] = {}
    owner: dict[Hashable, list[int]] = {}
    exact: dict[Hashable, dict[str, int]] = {}
    for stored_group, values in (stored or {}).items():
        for value in values:
            kept.setdefault(stored_group, []).append(value)
            owner.setdefault(stored_group, []).append(-1)
            exact.setdefault(stored_group, {})[value] = -1
    for position, value in enumerate(earlier):
        key = normalise(value)
        kept.setdefault(None, []).append(key)
        owner.setdefault(None, []).append(position)
        exact.setdefault(None, {}).setdefault(key, position)
    duplicates: list[Duplicate] = []
    for number, text in enumerate(texts):
        if progress is not None and number % 1000 == 999:
            progress(number + 1)
        index = len(earlier) + number
        group = groups[number] if groups is not None else None
        key = normalise(text)
        seen = exact.setdefault(group, {})
        if key in seen:
            duplicates.append(Duplicate(index, seen[key], True, 100.0))
            continue
        candidates = kept.setdefault(group, [])
        owners = owner.setdefault(group, [])
        match = _near_match(key, candidates, threshold) if candidates else None
        if match is not None:
            duplicates.append(Duplicate(index, owners[match[0]], False, match[1]))
            continue
        seen[key] = index
        candidates.append(key)
        owners.append(index)
    return duplicates


def domain_of(url: str) -> str:
    """The host of a URL (or of a bare host name), lower case, without `www.` and port: how domains are matched."""
    url = url.strip()
    if not url:
        return ""
    if "://" not in url:
        url = "http://" + url
    try:
        host = (urlsplit(url).hostname or "").lower().rstrip(".")
    except ValueError:  # not an address at all, e.g. an unclosed [IPv6 bracket
        return ""
    return host[4:] if host.startswith("www.") else host
