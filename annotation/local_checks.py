"""The local-knowledge check as annotation sees it: asking for one on save, and reading its outcome.

Running a check needs a model endpoint and the evaluation metrics, both above annotation; the evaluation app
registers the `request` callable in `ready()` (as review registers annotation/review_hooks.py). Without it (the
app not installed) nothing is ever asked and items simply carry no check. `request` only writes the pending row
and enqueues its job after the commit: a save never waits on a model.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from django.contrib.auth.models import User

from annotation.models import QAItem
from annotation.models_checks import LocalCheck, LocalCheckResult
from common.errors import InvalidState

# (item=, force=) -> the item's LocalCheck row (pending) or None when the project does not check its items.
_REQUEST: list[Callable[..., LocalCheck | None]] = []


def local_check_hook_register(request: Callable[..., LocalCheck | None]) -> None:
    _REQUEST[:] = [request]


def local_check_request(*, item: QAItem, force: bool = False) -> LocalCheck | None:
    """Ask for a check of the item as it now reads, when its project checks items and the text to check changed
    (`force`: even when it did not, the author's "check again")."""
    if not _REQUEST:
        return None
    return _REQUEST[0](item=item, force=force)


def local_check_again(*, item: QAItem, user: User) -> LocalCheck:
    """The author's "check again": the item's check asked for now, whatever it said before."""
    if item.author_id != user.pk:
        raise InvalidState("Only the item's author asks for its check again.", field="item")
    check = local_check_request(item=item, force=True)
    if check is None:
        raise InvalidState(
            "Nothing to check: the project's local-knowledge check is off, or the item has no question or "
            "standard answer yet.",
            field="item",
        )
    return check


def local_checks_of(items: Iterable[QAItem]) -> dict[int, LocalCheck]:
    """The checks of these items, by item id (one query)."""
    ids = [item.pk for item in items]
    return {check.item_id: check for check in LocalCheck.objects.filter(item_id__in=ids)} if ids else {}


def release_value(check: LocalCheck | None, *, question: str, answer: str) -> str | None:
    """What the release's `local_knowledge_check` field says: the outcome of a finished check of this very text,
    else null (never checked, still running, failed, or the text changed after the check)."""
    if check is None or check.status != LocalCheck.Status.DONE or not check.result:
        return None
    if not check.is_current_for(question, answer):
        return None
    return check.result


def panel(check: LocalCheck | None, item: QAItem) -> dict[str, Any] | None:
    """What the item's local-knowledge panel shows (None: nothing to show)."""
    if check is None:
        return None
    current = check.is_current_for(item.question, item.answer_standard)
    return {
        "check": check,
        "item": item,
        "current": current,
        "active": check.is_active,
        "flagged": check.status == LocalCheck.Status.DONE and check.model_answers and current,
        "result_words": LocalCheckResult(check.result).label if check.result else "",
    }
