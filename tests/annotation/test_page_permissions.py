"""Every page URL × every kind of visitor, with the status each must get.

The URL list comes from the resolver, so a new page without an entry here fails
`test_every_page_url_has_an_entry`. API routes have their own table in test_api.py.
"""

from __future__ import annotations

import importlib
from pathlib import Path

import pytest
from django.urls import URLPattern, URLResolver, get_resolver, reverse

from annotation.services.items import qa_item_create
from annotation.services.pairs import pair_claim_next, pair_screen
from tests import factories
from tests.security.harness import LOGIN, check_pages, page_cells

# Access rules and pure logic: the same on both engines, so they run on the embedded default only.
pytestmark = pytest.mark.one_engine


# name: (method, statuses in the order of ROLES)
EXPECTED: dict[str, tuple[str, tuple[int, ...]]] = {
    "home": ("get", (LOGIN, 200, 200, 200, 200, 200)),
    "project_create": ("get", (LOGIN, 403, 403, 403, 403, 200)),
    "project_detail": ("get", (LOGIN, 404, 200, 200, 200, 200)),
    "project_settings": ("get", (LOGIN, 404, 403, 403, 200, 200)),
    "project_members": ("get", (LOGIN, 404, 403, 403, 200, 200)),
    "project_member_remove": ("post", (LOGIN, 404, 403, 403, 302, 302)),
    "project_guidelines": ("get", (LOGIN, 404, 200, 200, 200, 200)),
    "pair_list": ("get", (LOGIN, 404, 403, 403, 200, 200)),
    "item_list": ("get", (LOGIN, 404, 403, 403, 200, 200)),
    "queue_next": ("post", (LOGIN, 404, 302, 403, 403, 302)),
    "pair_detail": ("get", (LOGIN, 404, 200, 403, 200, 200)),
    "pair_screen": ("post", (LOGIN, 404, 302, 403, 403, 403)),
    "pair_submit": ("post", (LOGIN, 404, 400, 403, 403, 403)),  # 400: the draft is empty, shown at the item
    "pair_give_back": ("post", (LOGIN, 404, 302, 403, 403, 403)),
    "pair_skip_undo": ("post", (LOGIN, 404, 404, 403, 403, 404)),  # 404: no skip of theirs to take back
    "pair_activity": ("post", (LOGIN, 404, 204, 403, 403, 403)),
    "item_create": ("post", (LOGIN, 404, 302, 403, 403, 403)),
    "item_save": ("post", (LOGIN, 404, 302, 403, 403, 403)),
    # The item's local-knowledge check (htmx polls it); without htmx back to the item on its pair's page.
    "item_local_check": ("get", (LOGIN, 404, 302, 403, 302, 302)),
    "item_delete": ("post", (LOGIN, 404, 302, 403, 302, 302)),  # its author (a draft) or a coordinator
    "login": ("get", (200,) * 6),
    "session_state": ("get", (200,) * 6),
    "signed_in": ("get", (LOGIN, 200, 200, 200, 200, 200)),
    "logout": ("post", (302,) * 6),
    "api_schema": ("get", (200,) * 6),
    "api_docs": ("get", (200,) * 6),
}

# Pages that are not ours to police (Django's admin checks staff status itself).
SKIPPED_NAMESPACES = {"admin"}


def _page_url_names() -> set[str]:
    names: set[str] = set()

    def walk(patterns, namespace=None, prefix=""):
        for pattern in patterns:
            if isinstance(pattern, URLResolver):
                if pattern.namespace in SKIPPED_NAMESPACES:
                    continue
                walk(pattern.url_patterns, pattern.namespace, prefix + str(pattern.pattern))
            elif isinstance(pattern, URLPattern) and pattern.name:
                if (prefix + str(pattern.pattern)).startswith("api/") and pattern.name not in {
                    "api_schema",
                    "api_docs",
                }:
                    continue
                names.add(pattern.name)

    walk(get_resolver().url_patterns)
    return names


def _all_page_tables() -> set[str]:
    """URL names covered by this table and by each app's own (`PAGE_EXPECTED` in tests/<app>/test_*permissions*.py)."""
    covered = set(EXPECTED)
    tests_dir = Path(__file__).resolve().parent.parent
    for path in tests_dir.glob("*/test_*permissions*.py"):
        module = importlib.import_module(".".join(path.relative_to(tests_dir.parent).with_suffix("").parts))
        covered |= set(getattr(module, "PAGE_EXPECTED", {}))
    return covered


@pytest.fixture
def world(project, annotator, reviewer, coordinator, outsider, superuser):
    """A pair the annotator is authoring, with one draft item."""
    factories.pair(project)
    pair = pair_claim_next(project=project, user=annotator)
    pair_screen(pair=pair, user=annotator, decision="annotate")
    item = qa_item_create(pair=pair, user=annotator)
    factories.pair(project)  # something left in the queue
    users = {
        "annotator": annotator,
        "reviewer": reviewer,
        "coordinator": coordinator,
        "outsider": outsider,
        "superuser": superuser,
    }
    return {"project": project, "pair": pair, "item": item, "users": users}


def _url(name: str, world: dict) -> str:
    """Reverse `name`, filling each URL parameter it takes from the world's objects."""
    project, pair, item = world["project"], world["pair"], world["item"]
    values = {"slug": project.slug, "pair_id": pair.pk, "item_id": item.pk, "username": "reviewer"}
    params = get_resolver().reverse_dict.getlist(name)[0][0][0][1]
    return reverse(name, kwargs={param: values[param] for param in params})


POST_DATA = {
    "pair_screen": {"decision": "annotate"},
    "pair_activity": {"seconds": "10"},
    "item_save": {"version": "1", "question": "问题？"},
}


def test_each_page_answers_each_visitor_as_the_table_says(world):
    check_pages(world["users"], page_cells(EXPECTED, lambda name: _url(name, world), **POST_DATA))


def test_outsider_gets_404_for_a_project_that_does_not_exist_either(client, outsider):
    client.force_login(outsider)
    assert client.get(reverse("project_detail", args=["no-such-project"])).status_code == 404


def test_second_annotator_cannot_open_or_edit_someone_elses_pair(client, world, second_annotator):
    client.force_login(second_annotator)
    project, pair, item = world["project"], world["pair"], world["item"]
    assert client.get(reverse("pair_detail", args=[project.slug, pair.pk])).status_code == 403
    response = client.post(reverse("item_save", args=[project.slug, item.pk]), {"version": 1, "question": "x"})
    assert response.status_code == 403
    item.refresh_from_db()
    assert item.question == ""
