"""The one place codes become the names people read: statuses, topics, reasons, domain labels, tags.

Pages and CSV files for people go through `display_name` (in templates, the `display` filter of
`localqa` tags: `{{ item.status|display:"item_status" }}`); the API and release files keep the codes.
A code of a known set reads as its choice label; any other code (a project's own topic) is spelled
out from its parts: `science-math-technology` → "Science, math & technology".
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache
from typing import Any

# Codes whose name is not its parts spelled out.
_NAMED = {
    "entertainment-art": "Entertainment & art",
    "animals-plants": "Animals & plants",
    "politics-government": "Politics & government",
    "science-math-technology": "Science, math & technology",
    "culture-customs": "Culture & customs",
    "local": "Local",
    "standard": "Standard",
    # Release readiness checks (exports.readiness)
    "pairs_not_labelled": "labels",
    "items_not_verified": "verification",
    "items_in_review": "review",
    "items_needing_rewrite": "rewrites",
    "items_rejected": "rejections",
    "splits_small": "split sizes",
    "agreement_not_computed": "agreement",
}


# The apps above annotation add their sets (review's verdicts, validation's domains, …) from AppConfig.ready():
# annotation imports none of them.
_providers: list[Callable[[], dict[str, dict[str, str]]]] = []


def display_sets_register(provider: Callable[[], dict[str, dict[str, str]]]) -> None:
    """Add the named sets of codes `provider()` returns (called once, on first use) to what `display_name` knows."""
    _providers.append(provider)
    _choices.cache_clear()


@cache
def _choices() -> dict[str, dict[str, str]]:
    """Every known set of codes, by name: annotation's own and the registered apps' (built once)."""
    from annotation.models import EvidenceSpan, PagePair, Project, QAItem, Role, Screening

    sets: dict[str, dict[str, str]] = {
        "item_status": dict(QAItem.Status.choices),
        "item_kind": dict(QAItem.Kind.choices),
        "pair_status": dict(PagePair.Status.choices),
        "decision": dict(Screening.Decision.choices),
        "exclusion": {
            **dict(Screening.Decision.choices),
            "translated": "Translation",
            "structural": "Structural mismatch",
        },
        "match": dict(EvidenceSpan.Match.choices),
        "role": dict(Role.choices),
        "project_kind": dict(Project.Kind.choices),
    }
    for provider in _providers:
        sets |= provider()
    return sets


def spelled_out(code: str) -> str:
    """A code nobody named, in words: `science-math-technology` → "Science, math & technology"."""
    if code in _NAMED:
        return _NAMED[code]
    if "-" in code:
        parts = [part.replace("_", " ") for part in code.split("-") if part]
        text = parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " & " + parts[-1]
    else:
        text = code.replace("_", " ")
    return text[:1].upper() + text[1:]


def display_name(value: Any, kind: str = "") -> str:
    """What a person reads for `value`: a choice label of set `kind`, yes/no for a boolean, else spelled out."""
    if value is None or value == "":
        return ""
    if isinstance(value, bool):
        return "Yes" if value else "No"
    code = str(value)
    names = _choices().get(kind) if kind else None
    if names and code in names:
        return str(names[code])
    if not kind:
        for names in _choices().values():
            if code in names:
                return str(names[code])
    return spelled_out(code)
