"""The annotator stratum of a Wikipedia QA run, from the platform's own records of who wrote each released item.

A release does not carry its items' authors; the run belongs to the project whose items the release holds, and a
release id names its item (`<slug>-q<pk>`, `exports.records.item_id`). So the author of every item is read in one
query over the project's items at scoring time. A person is named as the platform names them: their full name
when they gave one, else their username; never an e-mail address (a label that looks like one keeps its part
before the `@`). Two people with the same label are told apart by their usernames' order (`Mei (2)`).
An item whose author is gone (the account was deleted, the item no longer exists, the id names no item of this
project) is counted in the named `UNKNOWN` cell, never dropped.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from django.contrib.auth.models import User

from annotation.models import Project, QAItem
from evaluation.gold import ReleaseGold

STRATUM = "annotator"
UNKNOWN = "(unknown: author gone)"
PROVENANCE = (
    "from the platform's records of who wrote each released item, read when the run was scored (releases do "
    "not carry authors); full name, else username; items whose author is gone counted as " + UNKNOWN
)
_ITEM_ID = re.compile(r".+-q(\d{1,18})")


def person_label(user: User) -> str:
    """How a page names a person: their full name, else their username; the part before `@` if it is an address."""
    label = " ".join(user.get_full_name().split()) or user.get_username()
    if "@" in label:
        label = label.split("@", 1)[0] or f"person {user.pk}"
    return label


def release_item_authors(project: Project, item_ids: Iterable[str]) -> dict[str, str]:
    """Every release item id → its author's label (`UNKNOWN` when the author is gone), in one query over the
    project's items (no list of ids in the query: a release of 100,000 items is one scan, on either engine)."""
    ids = list(item_ids)
    wanted = {int(match[1]) for item_id in ids if (match := _ITEM_ID.fullmatch(item_id))}
    author_of: dict[int, int] = {}
    people: dict[int, User] = {}
    rows = (
        QAItem.objects.filter(project=project, author__isnull=False)
        .values_list("id", "author_id", "author__username", "author__first_name", "author__last_name")
        .order_by()
    )
    for pk, user_pk, username, first_name, last_name in rows.iterator(chunk_size=5000):
        if pk in wanted:
            author_of[pk] = user_pk
            if user_pk not in people:
                people[user_pk] = User(pk=user_pk, username=username, first_name=first_name, last_name=last_name)
    labels = _distinct_labels(people)
    found: dict[str, str] = {}
    for item_id in ids:
        match = _ITEM_ID.fullmatch(item_id)
        author = author_of.get(int(match[1])) if match else None
        found[item_id] = labels[author] if author is not None else UNKNOWN
    return found


def _distinct_labels(users: dict[int, User]) -> dict[int, str]:
    """Each person's label; people sharing one are numbered in the order of their usernames."""
    by_label: dict[str, list[User]] = {}
    for user in sorted(users.values(), key=lambda user: user.get_username()):
        by_label.setdefault(person_label(user), []).append(user)
    found: dict[int, str] = {}
    for label, same in by_label.items():
        for number, user in enumerate(same, start=1):
            found[user.pk] = label if number == 1 else f"{label} ({number})"
    return found


def annotator_stratum_add(gold: ReleaseGold, project: Project) -> int:
    """Add the annotator stratum to a Wikipedia QA release's gold (its items' authors as the platform records
    them now); the number of items in the unknown cell. Other kinds are left as they are (0)."""
    if gold.project_kind != "wikipedia_qa":
        return 0
    authors = release_item_authors(project, gold.items)
    for item_id, item in gold.items.items():
        item.strata[STRATUM] = authors[item_id]
    if STRATUM not in gold.strata:
        gold.strata = (*gold.strata, STRATUM)
    return sum(label == UNKNOWN for label in authors.values())
