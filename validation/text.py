"""Normalised text and near-duplicate detection, shared by seed queries and imported QA pairs."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from urllib.parse import urlsplit

from rapidfuzz import fuzz, process

_PUNCTUATION = re.compile(r"[\W_]+", re.UNICODE)
# Arabic short vowels and tatweel: the same question is typed with and without them.
_ARABIC_MARKS = re.compile(r"[\u064b-\u065f\u0670\u0640]")


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


def find_duplicates(
    texts: Sequence[str],
    *,
    groups: Sequence[Hashable] | None = None,
    threshold: int,
    stored: Mapping[Hashable, Iterable[str]] | None = None,
    earlier: Sequence[str] = (),
    progress: Callable[[int], None] | None = None,
) -> list[Duplicate]:
    """Texts that repeat an earlier one: equal after `normalise`, or with a rapidfuzz ratio >= `threshold`.

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
    for group, values in (stored or {}).items():
        for value in values:
            kept.setdefault(group, []).append(value)
            owner.setdefault(group, []).append(-1)
            exact.setdefault(group, {})[value] = -1
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
        match = process.extractOne(key, candidates, scorer=fuzz.ratio, score_cutoff=threshold) if candidates else None
        if match is not None:
            duplicates.append(Duplicate(index, owners[match[2]], False, float(match[1])))
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
    host = (urlsplit(url).hostname or "").lower().rstrip(".")
    return host[4:] if host.startswith("www.") else host
