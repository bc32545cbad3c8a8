"""Every people route (members page actions, invitations, passwords, accounts) × every kind of visitor.

Coordinators add, deactivate and reactivate members and issue new links; only superusers switch a whole
account off; the password pages are everyone's own. The security matrix picks these tables up.
"""

from __future__ import annotations

from typing import Any

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from accounts import people
from tests.security.harness import LOGIN, Cell, api_cells, check_api, check_pages, page_cells

# Access rules and pure logic: the same on both engines, so they run on the embedded default only.
pytestmark = pytest.mark.one_engine

OWN = (LOGIN, 200, 200, 200, 200, 200)  # a page about one's own password
ANYONE = (200,) * 6
COORDINATOR_POST = (LOGIN, 404, 403, 403, 302, 302)

# name: (method, statuses in the order of ROLES: anonymous, outsider, annotator, reviewer, coordinator, superuser)
PAGE_EXPECTED: dict[str, tuple[str, tuple[int, ...]]] = {
    "project_people_import": ("post", (LOGIN, 404, 403, 403, 200, 200)),
    "project_member_deactivate": ("post", COORDINATOR_POST),
    "project_member_reactivate": ("post", COORDINATOR_POST),
    "project_member_access": ("post", (LOGIN, 404, 403, 403, 200, 200)),
    "account_deactivate": ("post", (LOGIN, 404, 403, 403, 403, 302)),
    "account_reactivate": ("post", (LOGIN, 404, 403, 403, 403, 302)),
    "password_change": ("get", OWN),
    "password_change_done": ("get", OWN),
    "password_reset": ("get", ANYONE),
    "password_reset_done": ("get", ANYONE),
    "password_reset_confirm": ("get", ANYONE),  # a link that does not work says so
    "password_reset_complete": ("get", ANYONE),
    "invitation_accept": ("get", ANYONE),
}

CSV = b"username,email,name,roles,languages\nnewperson,new@example.org,New Person,annotator,yue\n"
API_EXPECTED: list[tuple[str, str, Any, tuple[int, ...]]] = [
    # method, path under /api/, body, statuses in the order of ROLES
    ("post", "projects/{slug}/people/", {"username": "newperson", "roles": ["annotator"]},
     (403, 404, 403, 403, 201, 201)),
    ("post", "projects/{slug}/people/import/", "csv", (403, 404, 403, 403, 201, 201)),
    ("post", "projects/{slug}/members/{username}/deactivate/", None, (403, 404, 403, 403, 200, 200)),
    ("post", "projects/{slug}/members/{username}/reactivate/", None, (403, 404, 403, 403, 200, 200)),
    ("post", "projects/{slug}/members/{username}/access/", {"access": "password"}, (403, 404, 403, 403, 200, 200)),
    ("post", "accounts/{username}/deactivate/", None, (403, 403, 403, 403, 403, 200)),
    ("post", "accounts/{username}/reactivate/", None, (403, 403, 403, 403, 403, 200)),
    ("post", "auth/password/", {"old_password": "wrong", "new_password": "x"}, (403, 400, 400, 400, 400, 400)),
    ("post", "auth/password-reset/", {"email": "nobody@example.org"}, (202,) * 6),
]  # fmt: skip


@pytest.fixture
def world(project, annotator, reviewer, coordinator, outsider, superuser):
    """A member who has never signed in (whose link can be renewed), beside the cast."""
    newbie = people.person_add(
        project=project, actor=coordinator, values={"username": "newbie", "roles": ["annotator"]}
    ).user
    users = {
        "annotator": annotator,
        "reviewer": reviewer,
        "coordinator": coordinator,
        "outsider": outsider,
        "superuser": superuser,
    }
    return {"project": project, "newbie": newbie, "users": users}


def page_url(name: str, world: dict[str, Any]) -> str:
    if name in ("password_reset_confirm", "invitation_accept"):
        return reverse(name, kwargs={"uidb64": "MQ", "token": "no-such-token"})
    if name.startswith("password_"):
        return reverse(name)
    kwargs = {"slug": world["project"].slug}
    if name != "project_people_import":
        kwargs["username"] = "newbie"
    return reverse(name, kwargs=kwargs)


def test_each_people_page_answers_each_visitor_as_the_table_says(world):
    import_data = lambda visitor: {"file": SimpleUploadedFile("people.csv", CSV), "access": "invitation"}  # noqa: E731
    cells = page_cells(
        PAGE_EXPECTED,
        lambda name: page_url(name, world),
        project_people_import=import_data,
        project_member_access={"access": "invitation"},
    )
    check_pages(world["users"], cells)


def test_each_people_api_route_answers_each_visitor_as_the_table_says(world):
    cells = []
    for cell in api_cells(API_EXPECTED, {"slug": world["project"].slug, "username": "newbie"}):
        if cell.data == "csv":
            upload = lambda visitor: {"file": SimpleUploadedFile("people.csv", CSV)}  # noqa: E731
            cell = Cell(cell.method, cell.url, cell.expected, upload, fmt="multipart")
        cells.append(cell)
    check_api(world["users"], cells)
