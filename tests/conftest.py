"""The shared cast: a project with a coordinator, an annotator, a reviewer and an outsider (and, when a test
asks for one, a researcher)."""

from __future__ import annotations

import csv
import io
import os
import shutil
import tempfile
import uuid
from pathlib import Path

import pytest
from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.db import connection, transaction
from rest_framework.test import APIClient

from annotation.services.members import membership_set
from annotation.services.pairs import pair_claim_next, pair_screen
from tests import factories

PASSWORD = factories.PASSWORD
MEDIA_KEY = pytest.StashKey[Path]()

# `live_worker`: a real Celery worker subprocess for @pytest.mark.worker tests (see tests/worker.py);
# `model_stub`: an OpenAI-compatible server on 127.0.0.1 to script model replies (see tests/model_stub.py).
# `serpapi_stub`: recorded SerpApi responses served on 127.0.0.1 (see tests/serpapi_stub.py).
pytest_plugins = ["tests.worker", "tests.model_stub", "tests.serpapi_stub"]


def pytest_configure(config: pytest.Config) -> None:
    # Hashing is not what tests prove; the production hasher costs ~0.3 s per user created.
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    # Each run counts login failures and API throttles in its own key space of the shared Redis.
    settings.CACHES["default"]["KEY_PREFIX"] = f"localqa-test-{uuid.uuid4().hex}"
    # Files of its own too: test processes run side by side (pytest -n) and projects share slugs. The
    # environment carries it to the Celery workers and servers the tests start.
    media = Path(tempfile.mkdtemp(prefix="localqa-test-media-"))
    config.stash[MEDIA_KEY] = media
    settings.MEDIA_ROOT = media
    os.environ["MEDIA_ROOT"] = str(media)


# A test that asks for none of these cannot reach the test database: pytest-django refuses it any query.
# (`django_db_blocker` is not one: pytest-django gives it to every test; only a fixture that unblocks with it
# reaches the database, as `demo_once` does.)
DATABASE_FIXTURES = frozenset(
    {"db", "transactional_db", "django_db_reset_sequences", "django_db_serialized_rollback", "live_server"}
    | {"django_db_setup", "demo_once"}
)


def uses_no_database(item: pytest.Item) -> bool:
    """Pure logic: no database fixture, no `django_db` mark, and not a test of PostgreSQL's own behaviour."""
    names = set(getattr(item, "fixturenames", ()))
    return not (
        names & DATABASE_FIXTURES
        or item.get_closest_marker("django_db") is not None
        or item.get_closest_marker("postgresql") is not None
    )


def browser_walk_once(item: pytest.Item) -> bool:
    """A browser walk drives pages whose queries the tests below them run on both engines: it runs once, on the
    embedded default, except the first-hour walks of every kind (`every_engine`) and PostgreSQL's own."""
    return (
        item.get_closest_marker("browser") is not None
        and item.get_closest_marker("every_engine") is None
        and item.get_closest_marker("postgresql") is None
    )


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """`@pytest.mark.postgresql(reason=...)`: behaviour only PostgreSQL has; skipped on the embedded default.
    `@pytest.mark.one_engine`: access rules and pure logic, the same on both engines; run on the embedded default
    only, and on PostgreSQL deselected (pytest's summary counts them as deselected). A test that uses no database
    at all (`uses_no_database`) is pure logic by construction and is marked `one_engine` here; so is a browser walk,
    unless it is marked `every_engine` (the first-hour walks of every kind) or `postgresql`."""
    for item in items:
        if item.get_closest_marker("one_engine") is None and (uses_no_database(item) or browser_walk_once(item)):
            item.add_marker(pytest.mark.one_engine)
    if connection.vendor == "postgresql":
        if os.environ.get("LOCALQA_EVERY_ENGINE") != "1":
            kept = [item for item in items if item.get_closest_marker("one_engine") is None]
            config.hook.pytest_deselected(items=[item for item in items if item not in kept])
            items[:] = kept
        return
    for item in items:
        marker = item.get_closest_marker("postgresql")
        if marker is not None:
            reason = marker.kwargs.get("reason")
            if not reason:
                raise pytest.UsageError(f"{item.nodeid}: @pytest.mark.postgresql needs a reason=")
            item.add_marker(pytest.mark.skip(reason=f"PostgreSQL only: {reason}"))


def pytest_unconfigure(config: pytest.Config) -> None:
    media = config.stash.get(MEDIA_KEY, None)
    if media is not None:
        shutil.rmtree(media, ignore_errors=True)


@pytest.fixture(autouse=True)
def own_cache_counts(settings):
    """Counts in the cache (API throttles, password brakes, sign-in lockouts) start at zero in every test: the
    hourly password-reset and password-change rates would otherwise carry over from one test to the next."""
    settings.CACHES = {
        **settings.CACHES,
        "default": {**settings.CACHES["default"], "KEY_PREFIX": f"localqa-test-{uuid.uuid4().hex}"},
    }


@pytest.fixture
def csv_module_default_limit():
    """The csv module's cell limit as a fresh process has it (131,072 characters): another test's read raised it
    for the whole process, which would hide an import that reads with the csv module directly (a megabyte cell's
    "field larger than field limit"). Restored afterwards."""
    before = csv.field_size_limit(131_072)
    yield
    csv.field_size_limit(before)


@pytest.fixture(scope="module")
def demo_once(django_db_setup, django_db_blocker):
    """demo_setup's projects, made once for a module whose tests read them: the module holds one transaction,
    each test runs in a savepoint inside it (what it changes is rolled back), and the module's end rolls back the
    demo. For tests that use `db`; tests that commit (browser, worker) make the demo themselves."""
    with django_db_blocker.unblock(), transaction.atomic():
        call_command("demo_setup", stdout=io.StringIO())
        yield
        transaction.set_rollback(True)


@pytest.fixture
def coordinator(db):
    return factories.user("coordinator")


@pytest.fixture
def annotator(db):
    return factories.user("annotator")


@pytest.fixture
def second_annotator(db):
    return factories.user("annotator2")


@pytest.fixture
def reviewer(db):
    return factories.user("reviewer")


@pytest.fixture
def outsider(db):
    return factories.user("outsider")


@pytest.fixture
def superuser(db):
    return get_user_model().objects.create_superuser("root", "root@example.org", PASSWORD)


@pytest.fixture
def project(coordinator, annotator, second_annotator, reviewer):
    project = factories.project(coordinator, slug="yue-cmn")
    membership_set(project=project, user=annotator, roles={"annotator"})
    membership_set(project=project, user=second_annotator, roles={"annotator"})
    membership_set(project=project, user=reviewer, roles={"reviewer"})
    return project


@pytest.fixture
def researcher(project):
    """A member of `project` with the researcher role only: releases and agreement reports, no queues."""
    user = factories.user("researcher")
    membership_set(project=project, user=user, roles={"researcher"})
    return user


@pytest.fixture
def other_project(db):
    owner = factories.user("other_coordinator")
    return factories.project(owner, slug="bar-deu", local_language="bar", standard_language="deu")


@pytest.fixture
def pair(project):
    return factories.pair(project)


@pytest.fixture
def annotating_pair(project, annotator):
    """A pair the annotator has claimed and screened as 'annotate'."""
    factories.pair(project)
    claimed = pair_claim_next(project=project, user=annotator)
    return pair_screen(pair=claimed, user=annotator, decision="annotate")


@pytest.fixture
def api_client():
    return APIClient()


def api_as(user) -> APIClient:
    client = APIClient()
    client.force_authenticate(user)
    return client
