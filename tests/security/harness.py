"""The one permission harness: a table of routes × every visitor, checked against a world built once.

Each app keeps its table of what each visitor gets on its own project (`PAGE_EXPECTED` / `API_EXPECTED` in
tests/<app>/test_*permissions*.py, statuses in the order of `ROLES`) and a world with one of everything its URLs
name; tests/security/test_permission_matrix.py reads every table for completeness and adds the cross-project
dimension and the researcher. `check_pages` and `check_api` run a whole table at once:

- the world is built once per table, not once per cell;
- every visitor signs in once (one test client each);
- each cell (one route × one visitor) runs in a savepoint that is rolled back, with cache counts of its own (API
  throttles, sign-in lockouts), so a POST by one visitor never changes what the next one meets;
- every wrong cell is reported, not only the first.
"""

from __future__ import annotations

import copy
import itertools
import uuid
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import transaction
from django.test import Client, override_settings
from django.urls import reverse
from rest_framework.test import APIClient

ROLES = ["anonymous", "outsider", "annotator", "reviewer", "coordinator", "superuser"]
LOGIN = 302  # anonymous visitors of a page are sent to the sign-in page


@dataclass(frozen=True)
class Cell:
    """One route for every visitor: `expected` holds a status per visitor, in the order of `ROLES`.

    `data` is the body (a callable gets the visitor and returns a fresh one: an upload can be read only once);
    `before` runs in the cell's savepoint before the request (e.g. another visitor acting first), `after` after it
    (an assertion that nothing changed that must not, e.g. someone else's token).
    """

    method: str
    url: str
    expected: tuple[int, ...]
    data: Any = None
    fmt: str = "json"
    before: Callable[[str], None] | None = None
    after: Callable[[], None] | None = None

    def body(self, visitor: str) -> Any:
        return self.data(visitor) if callable(self.data) else self.data


_addresses = itertools.count(1)


def _address() -> str:
    """A client address of its own for each cell: the sign-in lockout keys on it, in a cache handle it keeps."""
    number = next(_addresses)
    return f"10.{number >> 16 & 255}.{number >> 8 & 255}.{number & 255}"


@contextmanager
def undone() -> Iterator[None]:
    """Whatever happens inside is rolled back, and it counts throttles and lockouts in a key space of its own."""
    caches = {**settings.CACHES, "default": {**settings.CACHES["default"], "KEY_PREFIX": uuid.uuid4().hex}}
    with override_settings(CACHES=caches), transaction.atomic():
        yield
        transaction.set_rollback(True)


def _after(cell: Cell) -> str:
    try:
        if cell.after is not None:
            cell.after()
    except AssertionError as error:
        return f"after the request: {error}"
    return ""


def _visitors(users: Mapping[str, Any], roles: Iterable[str]) -> list[str]:
    roles = list(roles)
    missing = [role for role in roles if role != "anonymous" and role not in users]
    assert not missing, f"the world has no {missing}"
    return roles


def check_pages(users: Mapping[str, Any], cells: Iterable[Cell], *, roles: Iterable[str] = ROLES) -> None:
    """Each page cell for each visitor (a signed-in test client each); an anonymous 302 must lead to sign-in."""
    visitors = _visitors(users, roles)
    clients: dict[str, Client] = {}
    for role in visitors:
        clients[role] = Client()
        if role != "anonymous":
            clients[role].force_login(users[role])
    sign_in = reverse("login")
    wrong: list[str] = []
    for cell in cells:
        for role, expected in zip(visitors, cell.expected, strict=True):
            client = clients[role]
            cookies = copy.deepcopy(client.cookies)  # a cell that signs out must not sign out the next one
            with undone():
                if cell.before is not None:
                    cell.before(role)
                response = getattr(client, cell.method)(cell.url, cell.body(role) or {}, REMOTE_ADDR=_address())
                problem = _after(cell)
            client.cookies = cookies
            if problem:
                wrong.append(f"{cell.method.upper()} {cell.url} as {role}: {problem}")
            status = response.status_code
            if status != expected:
                wrong.append(f"{cell.method.upper()} {cell.url} as {role}: {status}, not {expected}")
            elif role == "anonymous" and expected == LOGIN and not response["Location"].startswith(sign_in):
                wrong.append(f"{cell.method.upper()} {cell.url} as {role}: sent to {response['Location']}")
    assert not wrong, "\n".join(wrong)


def check_api(users: Mapping[str, Any], cells: Iterable[Cell], *, roles: Iterable[str] = ROLES) -> None:
    """Each API cell for each visitor, authenticated as the visitor read afresh (a cell may change the person)."""
    visitors = _visitors(users, roles)
    people = get_user_model().objects
    wrong: list[str] = []
    for cell in cells:
        for role, expected in zip(visitors, cell.expected, strict=True):
            client = APIClient()
            with undone():
                if role != "anonymous":
                    client.force_authenticate(people.get(pk=users[role].pk))
                if cell.before is not None:
                    cell.before(role)
                response = getattr(client, cell.method)(
                    cell.url, cell.body(role), format=cell.fmt, REMOTE_ADDR=_address()
                )
                problem = _after(cell)
            if problem:
                wrong.append(f"{cell.method.upper()} {cell.url} as {role}: {problem}")
            if response.status_code != expected:
                content = getattr(response, "content", b"")[:200]
                wrong.append(
                    f"{cell.method.upper()} {cell.url} as {role}: {response.status_code}, not {expected} {content!r}"
                )
    assert not wrong, "\n".join(wrong)


def page_cells(table: Mapping[str, tuple[str, tuple[int, ...]]], url: Callable[[str], str], **data: Any) -> list[Cell]:
    """Cells of a page table {url name: (method, statuses)}; `data` gives a name's POST body."""
    return [Cell(method, url(name), statuses, data.get(name)) for name, (method, statuses) in sorted(table.items())]


def api_cells(rows: Iterable[tuple[str, str, Any, tuple[int, ...]]], values: Mapping[str, Any]) -> list[Cell]:
    """Cells of an API table [(method, path under /api/ with {placeholders}, body, statuses)]."""
    return [Cell(method, "/api/" + path.format(**values), statuses, body) for method, path, body, statuses in rows]
