"""The one place codes become the names people read: statuses, topics, reasons, domain labels, tags.

Pages and CSV files for people go through `display_name` (in templates, the `display` filter of
`localqa` tags: `{{ item.status|display:"item_status" }}`); the API and release files keep the codes.
A code of a known set reads as its choice label; any other code (a project's own topic) is spelled
out from its parts: `science-math-technology` → "Science, math & technology".
"""

from __future__ import annotations

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


@cache
def _choices() -> dict[str, dict[str, str]]:
    """Every known set of codes, by name (imported here, once: the apps import this module)."""
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
    try:
        from annotation.models import ItemEvent
        from review.models import FinalLabel, Judgment, LabelKind, ReviewSlot, Verification
    except ImportError:
        pass
    else:
        sets |= {
            "verdict": dict(Judgment.Verdict.choices),
            "verification": {**dict(Verification.Result.choices), "not_checked": "Not checked"},
            "label_kind": dict(LabelKind.choices),
            "label_method": dict(FinalLabel.Method.choices),
            "event": dict(ItemEvent.Action.choices),
            "slot_status": dict(ReviewSlot.Status.choices),
        }
    try:
        from validation.models import QUESTION_BAD_REASONS, DomainLabel, Task
    except ImportError:
        pass
    else:
        sets |= {
            "domain": dict(DomainLabel.choices),
            "task": dict(Task.choices),
            "question_reason": dict(QUESTION_BAD_REASONS),
        }
    try:
        from multichoice.models import Difficulty, ProblemTag, Subset
    except ImportError:
        pass
    else:
        sets |= {
            "problem_tag": dict(ProblemTag.choices),
            "subset": dict(Subset.choices),
            "difficulty": dict(Difficulty.choices),
        }
    try:
        from exports.models import Release
    except ImportError:
        pass
    else:
        sets["release_status"] = dict(Release.Status.choices)
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
