"""The automatic permission matrix: every URL pattern and every API operation, nobody where they don't belong.

What each role gets on its own project lives in the per-app tables (tests/annotation/test_page_permissions.py
`EXPECTED`, `PAGE_EXPECTED` in tests/<app>/test_*permissions*.py, the API tables listed in `API_TABLES`); their
tests assert those statuses through the one harness, tests/security/harness.py (a world built once per table, a
signed-in client per visitor, each cell rolled back). This module adds what no single app can:

- completeness: every route of the URL resolver and every operation of the OpenAPI schema has a row in one of
  those tables (or in `OWN_API` below), so a new endpoint without an entry fails here;
- the cross-project dimension: members of project A (each role, and a member holding every role) get 404 on
  every URL of project B, for every method; and B's objects addressed through A's URL answer exactly like an id
  that does not exist (404), for A's members and for a superuser alike;
- B's ids in a query string of A's URL (`FOREIGN_IDS`): a filtered list never shows another project's rows;
- the researcher, a role no app table has a column for: every page and API operation of a project, run against
  a project of the route's own kind, answers exactly as `RESEARCHER_PAGES` / `RESEARCHER_API` say (and 403
  for everything they do not list: no queue, no change).
"""

from __future__ import annotations

import importlib
import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.urls import URLPattern, URLResolver, get_resolver, resolve, reverse
from drf_spectacular.generators import SchemaGenerator

from annotation import ingest
from annotation.models import Membership, Project
from annotation.services import members as authoring
from archive import services as archives
from endpoints import services as endpoints
from evaluation.models import EvaluationRun
from review import queue as review_queue
from review import reports as agreement_reports
from tests import factories
from tests.annotation.test_page_permissions import EXPECTED as ANNOTATION_PAGES
from tests.annotation.test_page_permissions import _all_page_tables, _page_url_names
from tests.conftest import api_as
from tests.evaluation.test_permissions import judged_objects
from tests.exports.conftest import authored_pair
from tests.review.conftest import submitted_pair
from tests.security.harness import Cell, check_api, undone
from wikiqa import collect

# Access rules and pure logic: the same on both engines, so they run on the embedded default only.
pytestmark = pytest.mark.one_engine

TESTS_DIR = Path(__file__).resolve().parent.parent

# The per-app API tables: (module, attribute, prefix their paths are relative to). Rows start (method, path, ...).
API_TABLES: list[tuple[str, str, str]] = [
    ("tests.annotation.test_api", "ENDPOINTS", "/api/"),
    ("tests.review.test_api", "ENDPOINTS", "/api/projects/{slug}/"),
    ("tests.wikiqa.test_permissions", "API_EXPECTED", "/api/"),
    ("tests.exports.test_permissions", "API_ENDPOINTS", "/api/"),
    ("tests.review.test_calculator_permissions", "API_EXPECTED", "/api/"),
    ("tests.evaluation.test_permissions", "API_ENDPOINTS", "/api/"),
]

# Operations no app table covers: (method, path under /api/, body, statuses in the order of ROLES).
# Obtaining a token with a wrong password is refused the same way for everyone (throttled per address, and
# counted towards the sign-in lockout: the harness gives each cell cache counts of its own, so none is locked out).
# The token rows of people's own tokens are in tests/security/test_token_permissions.py.
OWN_API: list[tuple[str, str, Any, tuple[int, ...]]] = [
    ("post", "auth/token/", {"username": "annotator", "password": "wrong"}, (400, 400, 400, 400, 400, 400)),
]

# URL parameters that name one object by a database id (global across projects) ...
OBJECT_IDS = {
    "pair_id", "item_id", "slot_id", "job_id", "collection_id", "report_id", "archive_id", "endpoint_id", "domain",
    "run_id", "judgment_id", "judged_id", "model_job_id", "draft_id",
}  # fmt: skip
# ... and the ones that only mean something inside a project (a release number, a file or member name).
NOT_FOUND_ID = 987_654_321


# Tables and routes


class _Sample(dict):
    """Fills any {placeholder} of a table path with a value the URL converters accept."""

    def __missing__(self, key: str) -> str:
        return "1"


def schema_path(url: str) -> str:
    """The OpenAPI path (`/api/projects/{slug}/…`) of a concrete API URL, through the resolver."""
    route = resolve(url.split("?")[0]).route
    return "/" + re.sub(r"<(?:\w+:)?(\w+)>", r"{\1}", route)


def table_operations() -> set[tuple[str, str]]:
    """(method, OpenAPI path) of every row of every API table, the app tables' and ours."""
    rows: list[tuple[str, str]] = [(method, "/api/" + path) for method, path, *_ in OWN_API]
    modules = {module for module, _, _ in API_TABLES}
    for module, attribute, prefix in API_TABLES:
        rows += [(method, prefix + path) for method, path, *_ in getattr(importlib.import_module(module), attribute)]
    # Any other app's API_EXPECTED (paths under /api/) counts too, so a new app only adds its own table.
    for path in TESTS_DIR.glob("*/test_*permissions*.py"):
        module_name = ".".join(path.relative_to(TESTS_DIR.parent).with_suffix("").parts)
        if module_name not in modules:
            app_tests = importlib.import_module(module_name)
            for table in (getattr(app_tests, "API_EXPECTED", []), getattr(app_tests, "API_ENDPOINTS", [])):
                rows += [(method, "/api/" + path) for method, path, *_ in table]
    return {(method, schema_path(path.format_map(_Sample()))) for method, path in rows}


def schema_operations() -> set[tuple[str, str]]:
    schema = SchemaGenerator().get_schema(request=None, public=True)
    methods = {"get", "post", "put", "patch", "delete"}
    return {
        (method, path) for path, operations in schema["paths"].items() for method in operations if method in methods
    }


def resolver_routes() -> list[tuple[str, str | None]]:
    """(route, url name) of every URL pattern outside Django's admin."""
    found: list[tuple[str, str | None]] = []

    def walk(patterns, prefix: str = "") -> None:
        for pattern in patterns:
            if isinstance(pattern, URLResolver):
                if pattern.namespace != "admin":
                    walk(pattern.url_patterns, prefix + str(pattern.pattern))
            elif isinstance(pattern, URLPattern):
                found.append((prefix + str(pattern.pattern), pattern.name))

    walk(get_resolver().url_patterns)
    return found


def page_tables() -> dict[str, tuple[str, tuple[int, ...]]]:
    tables = dict(ANNOTATION_PAGES)
    for path in TESTS_DIR.glob("*/test_*permissions*.py"):
        module = importlib.import_module(".".join(path.relative_to(TESTS_DIR.parent).with_suffix("").parts))
        tables |= getattr(module, "PAGE_EXPECTED", {})
    return tables


API_PAGES = {"api_schema", "api_docs"}  # served under /api/ but pages (in the page table)


def api_routes() -> set[str]:
    return {
        "/" + re.sub(r"<(?:\w+:)?(\w+)>", r"{\1}", route)
        for route, name in resolver_routes()
        if route.startswith("api/") and name not in API_PAGES
    }


def test_every_api_operation_of_the_schema_has_a_permission_entry():
    missing = schema_operations() - table_operations()
    assert not missing, (
        "These API operations have no row in a permission table (add one to your app's API table, "
        f"or to OWN_API here): {sorted(missing)}"
    )


def test_every_permission_entry_names_an_operation_that_exists():
    assert not table_operations() - schema_operations()


def test_every_api_route_of_the_resolver_is_in_the_schema():
    """A Django view under /api/ outside DRF would escape the schema, and with it the matrix."""
    schema_paths = {path for _, path in schema_operations()}
    assert not api_routes() - schema_paths


def test_every_page_url_of_the_resolver_has_a_permission_entry():
    assert _page_url_names() <= _all_page_tables()
    unnamed = [route for route, name in resolver_routes() if name is None]
    assert not unnamed, f"Name these URL patterns so a permission table can list them: {unnamed}"


def test_own_api_rows(cast):
    check_api(cast, [Cell(method, "/api/" + path, statuses, body) for method, path, body, statuses in OWN_API])


# The cross-project world


@pytest.fixture
def cast(project, annotator, reviewer, coordinator, outsider, superuser, researcher):
    return {
        "researcher": researcher,
        "annotator": annotator,
        "reviewer": reviewer,
        "coordinator": coordinator,
        "outsider": outsider,
        "superuser": superuser,
    }


@pytest.fixture
def lead(project):
    """A member of project A holding every role: only the object lookup can refuse them."""
    user = factories.user("lead")
    authoring.membership_set(project=project, user=user, roles={"coordinator", "annotator", "reviewer"})
    return user


def kind_of(route: str) -> str:
    """The kind of project a route belongs to: its kind-specific lookups only run on a project of that kind."""
    for marker, kind in KIND_MARKERS.items():
        if marker in route:
            return kind
    return Project.Kind.WIKIPEDIA_QA


KIND_MARKERS = {
    "/validation/": Project.Kind.VALIDATION,
    "/trivia/": Project.Kind.TRIVIA,
    "/entities/": Project.Kind.ENTITY_QA,
}


class Worlds:
    """Project A and project B of each kind, built when a case first needs them.

    A is the cast's project (the `project` fixture for Wikipedia QA, one of the same kind otherwise: the cast
    and `lead` are its members); B has one of everything a URL of its kind names, and members of its own.
    """

    def __init__(self, project: Project, cast: dict[str, Any], lead: Any, other_project: Project) -> None:
        self.project, self.cast, self.lead, self.other_project = project, cast, lead, other_project
        self._a: dict[str, Project] = {Project.Kind.WIKIPEDIA_QA: project}
        self._b: dict[str, dict[str, Any]] = {}

    def a(self, kind: str) -> Project:
        if kind not in self._a:
            self._a[kind] = self._a_of_kind(kind)
        return self._a[kind]

    def b(self, kind: str) -> dict[str, Any]:
        if kind not in self._b:
            builders: dict[str, Callable[[], dict[str, Any]]] = {
                Project.Kind.WIKIPEDIA_QA: self._b_wikipedia,
                Project.Kind.VALIDATION: self._b_validation,
                Project.Kind.TRIVIA: self._b_trivia,
                Project.Kind.ENTITY_QA: self._b_entities,
            }
            self._b[kind] = builders[kind]()
            assert Project.objects.get(slug=self._b[kind]["values"]["slug"]).kind == kind
        return self._b[kind]

    def _create(self, kind: str, slug: str, owner: Any) -> Project:
        from multichoice import entities
        from multichoice.services import projects as trivia
        from tests.multichoice.conftest import CATEGORIES
        from tests.multichoice.test_entities import ATTRIBUTES
        from validation import services as validation

        if kind == Project.Kind.VALIDATION:
            return validation.validation_project_create(
                name=slug, slug=slug, language="eng", location="Qatar", created_by=owner
            )
        if kind == Project.Kind.TRIVIA:
            return trivia.trivia_project_create(
                name=slug,
                slug=slug,
                source_language="eus",
                target_language="eng",
                categories=CATEGORIES,
                created_by=owner,
            )
        return entities.entity_project_create(
            name=slug, slug=slug, language="eng", attributes=ATTRIBUTES, created_by=owner
        )

    def _a_of_kind(self, kind: str) -> Project:
        project = self._create(kind, f"a-{kind.replace('_', '-')}", self.cast["coordinator"])
        authoring.membership_set(project=project, user=self.cast["annotator"], roles={"annotator"})
        authoring.membership_set(project=project, user=self.cast["reviewer"], roles={"reviewer"})
        authoring.membership_set(project=project, user=self.lead, roles={"coordinator", "annotator", "reviewer"})
        return project

    def _b_people(self, kind: str) -> tuple[Any, Any, Any]:
        prefix = f"b_{kind}"
        owner = factories.user(f"{prefix}_owner")
        return owner, factories.user(f"{prefix}_annotator"), factories.user(f"{prefix}_reviewer")

    def _b_of_kind(self, kind: str) -> tuple[Project, Any, Any, Any]:
        owner, annotator, reviewer = self._b_people(kind)
        project = self._create(kind, f"b-{kind.replace('_', '-')}", owner)
        authoring.membership_set(project=project, user=annotator, roles={"annotator"})
        authoring.membership_set(project=project, user=reviewer, roles={"reviewer"})
        return project, owner, annotator, reviewer

    def _b_validation(self) -> dict[str, Any]:
        from annotation.models import ImportJob
        from tests.validation.conftest import COLLECTED_TSV, tsv_source
        from validation import services as validation
        from validation.models import ModelJob, SearchCollection, SeedDraft

        project, owner, _, reviewer = self._b_of_kind(Project.Kind.VALIDATION)
        report = validation.validation_items_import(project=project, source=tsv_source(COLLECTED_TSV), user=owner)
        assert report.ok, report.problems
        slot = validation.validation_claim_next(project=project, user=reviewer)
        assert slot is not None
        job = ImportJob.objects.create(project=project, created_by=owner, status=ImportJob.Status.DONE)
        validation.source_domain_label(
            project=project, domain="b-only.org", label="not_sure", user=owner, origin="coordinator"
        )
        search = SearchCollection.objects.create(project=project, created_by=owner, budget=5)
        model_job = ModelJob.objects.create(project=project, purpose="seed_drafts", endpoint_name="e", model="m")
        draft = SeedDraft.objects.create(
            project=project, job=model_job, location="L", topic="t", language="eng", drafted="q", query="q"
        )
        values = {
            "slug": project.slug,
            "item_id": slot.item_id,
            "slot_id": slot.pk,
            "job_id": job.pk,
            "domain": "b-only.org",
            "collection_id": search.pk,
            "model_job_id": model_job.pk,
            "draft_id": draft.pk,
        }
        return {"owner": owner, "values": values}

    def _b_trivia(self) -> dict[str, Any]:
        from annotation.models import ImportJob
        from multichoice.services.files import trivia_import_jsonl
        from multichoice.services.items import trivia_item_create
        from tests.multichoice.conftest import item_values

        project, owner, annotator, _ = self._b_of_kind(Project.Kind.TRIVIA)
        item = trivia_item_create(project=project, user=annotator, **item_values())
        line = {"id": "9", "category": "C", "subset": "local", "difficulty": 1, "question": "Q?", "answer": 0}
        data = json.dumps(
            line | {"candidates": ["a", "b", "c"], "target_question": "Q?", "target_candidates": ["a", "b", "c"]}
        )
        imported = trivia_import_jsonl(project=project, data=data.encode(), user=owner)
        job = ImportJob.objects.create(project=project, created_by=owner, format="csv", status=ImportJob.Status.DONE)
        values = {"slug": project.slug, "item_id": item.item_id, "import_id": imported["import_id"], "job_id": job.pk}
        from multichoice.models import TranslationSuggestionJob

        suggestion_job = TranslationSuggestionJob.objects.create(project=project, endpoint_name="e", model="m")
        values["model_job_id"] = suggestion_job.pk
        return {"owner": owner, "values": values}

    def _b_entities(self) -> dict[str, Any]:
        from annotation.models import ImportJob
        from multichoice import entities
        from tests.multichoice.test_entities import CSV

        project, owner, _, reviewer = self._b_of_kind(Project.Kind.ENTITY_QA)
        entities.entities_import(project=project, data=CSV.encode(), name="companies.csv")
        entities.questions_generate(project=project)
        question = entities.verification_next(project=project, user=reviewer)
        assert question is not None
        job = ImportJob.objects.create(
            project=project, created_by=owner, format="generate", status=ImportJob.Status.DONE
        )
        return {"owner": owner, "values": {"slug": project.slug, "item_id": question.item_id, "job_id": job.pk}}

    def _b_wikipedia(self) -> dict[str, Any]:
        """Project B with one of everything a URL names: pairs, items, a review slot, releases, an import, ..."""
        from exports import services as exports

        other_project = self.other_project
        owner = Membership.objects.get(project=other_project, is_coordinator=True).user
        b_annotator, b_reviewer = factories.user("b_annotator"), factories.user("b_reviewer")
        authoring.membership_set(project=other_project, user=b_annotator, roles={"annotator"})
        authoring.membership_set(project=other_project, user=b_reviewer, roles={"reviewer"})
        authored_pair(other_project, b_annotator)
        release = exports.release_build_now(project=other_project, user=owner, seed=1)
        pair, items = submitted_pair(other_project, b_annotator)
        slot = review_queue.review_claim(item=items[0], user=b_reviewer)
        job = ingest.import_job_create(
            project=other_project, user=owner, files=[SimpleUploadedFile("pairs.jsonl", b"")], dry_run=True
        )
        collection = collect.collection_create(project=other_project, user=owner, titles=["Minga"])
        report, _ = agreement_reports.agreement_report_request(project=other_project, enqueue=False)
        agreement_reports.agreement_report_compute(report_id=report.pk, bootstrap=0)
        export = archives.archive_export_now(project=other_project, user=owner)
        endpoint = endpoints.endpoint_create(
            project=other_project, user=owner, name="b", base_url="http://127.0.0.1:9/v1", model="m"
        )
        run = EvaluationRun.objects.create(
            project=other_project, release=release, release_version=release.version, manifest_sha256="", status="done"
        )
        judgment, judged = judged_objects(run)
        return {
            "owner": owner,
            "values": {
                "slug": other_project.slug,
                "pair_id": pair.pk,
                "item_id": items[0].pk,
                "slot_id": slot.pk,
                "job_id": job.pk,
                "collection_id": collection.pk,
                "version": release.version,
                "name": "lead_qa.jsonl",
                "format_name": "wilova",
                "username": b_reviewer.username,
                "fmt": "json",
                "report_id": report.pk,
                "archive_id": export.pk,
                "endpoint_id": endpoint.pk,
                "run_id": run.pk,
                "judgment_id": judgment.pk,
                "judged_id": judged.pk,
                "release_item": judged.prediction.item_id,
            },
        }


@pytest.fixture
def worlds(project, cast, lead, other_project, settings, tmp_path, monkeypatch):
    settings.MEDIA_ROOT = tmp_path / "media"
    settings.MODEL_ALLOWED_HOSTS = ["127.0.0.1"]  # project B's model endpoint (never called: every answer is 404)
    monkeypatch.setattr("wikiqa.tasks.collection_run.delay", lambda collection_id: None)
    monkeypatch.setattr("annotation.tasks.import_job_run.delay", lambda job_id: None)
    return Worlds(project, cast, lead, other_project)


def _not_the_kind_guard(response: Any) -> bool:
    """A 404 that came from the object or membership lookup, not from the project being of another kind."""
    return b"This project is not a" not in response.content


def _page_params(name: str) -> list[str]:
    return list(get_resolver().reverse_dict.getlist(name)[0][0][0][1])


def _page_route(name: str) -> str:
    return "/" + get_resolver().reverse_dict.getlist(name)[0][0][0][0]


def _api_params(path: str) -> list[str]:
    return re.findall(r"\{(\w+)\}", path)


def api_cases() -> list[Any]:
    return [
        pytest.param(method, path, id=f"{method.upper()} {path}")
        for method, path in sorted(schema_operations())
        if "{slug}" in path
    ]


def page_cases() -> list[Any]:
    return [
        pytest.param(name, method, id=f"{method.upper()} {name}")
        for name, (method, _) in sorted(page_tables().items())
        if "slug" in _page_params(name)
    ]


def _values(worlds: Worlds, route: str) -> dict[str, Any]:
    """B's values for a route: B of the route's kind (its ids), over B's Wikipedia values for shared names."""
    kind = kind_of(route)
    values = dict(worlds.b(Project.Kind.WIKIPEDIA_QA)["values"]) if kind == Project.Kind.WIKIPEDIA_QA else {}
    return values | worlds.b(kind)["values"]


# Each of the checks below walks every route against one set of worlds (building them is the costly part), each
# request in a savepoint that is rolled back, and reports every wrong answer.


def test_members_of_project_a_get_404_on_every_api_operation_of_project_b(cast, lead, worlds):
    wrong = []
    for case in api_cases():
        method, path = case.values
        worlds.a(kind_of(path))  # the cast are members of a project of this kind, too
        url = path.format(**_values(worlds, path))
        for role in ("annotator", "reviewer", "coordinator", "researcher", "lead"):
            user = lead if role == "lead" else cast[role]
            with undone():
                response = getattr(api_as(user), method)(url, {}, format="json")
            if response.status_code != 404:
                wrong.append(
                    f"{method.upper()} {url} as {role} of A: {response.status_code} {response.content[:200]!r}"
                )
            elif not _not_the_kind_guard(response):
                wrong.append(f"{method.upper()} {url}: refused by the kind guard, not the lookup")
    assert not wrong, "\n".join(wrong)


def test_members_of_project_a_get_404_on_every_page_of_project_b(cast, lead, worlds):
    clients = _signed_in({role: lead if role == "lead" else cast[role] for role in MEMBERS_OF_A})
    wrong = []
    for case in page_cases():
        name, method = case.values
        worlds.a(kind_of(_page_route(name)))
        values = _values(worlds, _page_route(name))
        url = reverse(name, kwargs={param: values[param] for param in _page_params(name)})
        for role, client in clients.items():
            with undone():
                status = getattr(client, method)(url).status_code
            if status != 404:
                wrong.append(f"{method.upper()} {url} as {role} of A: {status}")
    assert not wrong, "\n".join(wrong)


MEMBERS_OF_A = ("annotator", "reviewer", "coordinator", "researcher", "lead")


def _signed_in(users: dict[str, Any]) -> dict[str, Client]:
    """A test client per person, signed in once."""
    clients = {}
    for role, user in users.items():
        clients[role] = Client()
        clients[role].force_login(user)
    return clients


def _mixed(params: list[str], project_a_slug: str, values: dict[str, Any], *, missing: bool) -> dict[str, Any]:
    """Project A's slug with B's object ids (or with ids that do not exist)."""
    mixed = {param: values[param] for param in params}
    mixed["slug"] = project_a_slug
    for param in set(params) & OBJECT_IDS:
        mixed[param] = NOT_FOUND_ID if missing else values[param]
    return mixed


def test_objects_of_project_b_through_project_a_answer_like_objects_that_do_not_exist(cast, lead, worlds):
    wrong = []
    for case in api_cases():
        method, path = case.values
        params = _api_params(path)
        if not OBJECT_IDS & set(params):
            continue
        values, project_a = _values(worlds, path), worlds.a(kind_of(path))
        assert project_a.kind == kind_of(path)  # A's kind guard lets the request through to the object lookup
        foreign = path.format(**_mixed(params, project_a.slug, values, missing=False))
        nowhere = path.format(**_mixed(params, project_a.slug, values, missing=True))
        for role in ("lead", "superuser"):
            client = api_as(lead if role == "lead" else cast[role])
            responses = []
            for url in (foreign, nowhere):
                with undone():
                    responses.append(getattr(client, method)(url, {}, format="json"))
            if [r.status_code for r in responses] != [404, 404]:
                wrong.append(f"{method.upper()} {foreign} as {role}: {[r.status_code for r in responses]}")
            elif not all(_not_the_kind_guard(r) for r in responses):
                wrong.append(f"{method.upper()} {foreign}: the kind guard")
    assert not wrong, "\n".join(wrong)


def test_pages_of_project_b_objects_through_project_a_answer_404(cast, lead, worlds):
    clients = _signed_in({"lead": lead, "superuser": cast["superuser"]})
    wrong = []
    for case in page_cases():
        name, method = case.values
        params = _page_params(name)
        if not OBJECT_IDS & set(params):
            continue
        route = _page_route(name)
        values, project_a = _values(worlds, route), worlds.a(kind_of(route))
        assert project_a.kind == kind_of(route)
        url = reverse(name, kwargs=_mixed(params, project_a.slug, values, missing=False))
        for role, client in clients.items():
            with undone():
                status = getattr(client, method)(url).status_code
            if status != 404:
                wrong.append(f"{method.upper()} {url} as {role}: {status}")
    assert not wrong, "\n".join(wrong)


# B's ids where a URL of project A takes them in its query string (a filter of a list): answered like an id that does
# not exist, so a list never shows another project's rows. (method, path with A's {slug} and B's ids, body)
FOREIGN_IDS: list[tuple[str, str, Any]] = [
    ("get", "/api/projects/{slug}/model-calls/?endpoint={endpoint_id}", None),
]


def test_project_b_ids_in_a_query_of_project_a_answer_404(cast, lead, worlds):
    values = worlds.b(Project.Kind.WIKIPEDIA_QA)["values"] | {"slug": worlds.a(Project.Kind.WIKIPEDIA_QA).slug}
    wrong = []
    for method, path, body in FOREIGN_IDS:
        url = path.format(**values)
        for role, user in (("lead", lead), ("superuser", cast["superuser"])):
            with undone():
                status = getattr(api_as(user), method)(url, body, format="json").status_code
            if status != 404:
                wrong.append(f"{method.upper()} {url} as {role}: {status}")
    assert not wrong, "\n".join(wrong)


def test_project_b_objects_exist_for_its_own_coordinator(worlds):
    """The 404s above come from the project boundary, not from a world missing the objects."""
    wrong = []
    for case in api_cases():
        method, path = case.values
        if method != "get":
            continue
        url = path.format(**_values(worlds, path))

        response = api_as(worlds.b(kind_of(path))["owner"]).get(url)

        # Anything but 404: 400 for the diff without ?old=&new=, 403 where a role is checked before the object.
        if response.status_code not in (200, 400, 403):
            wrong.append(f"GET {url}: {response.status_code} {response.content[:200]!r}")
    assert not wrong, "\n".join(wrong)


def test_project_b_object_pages_exist_for_its_own_coordinator(client, worlds):
    wrong = []
    for case in page_cases():
        name, method = case.values
        if method != "get" or not OBJECT_IDS & set(_page_params(name)):
            continue
        route = _page_route(name)
        values = _values(worlds, route)
        client.force_login(worlds.b(kind_of(route))["owner"])

        response = client.get(reverse(name, kwargs={param: values[param] for param in _page_params(name)}))

        if response.status_code not in (200, 302, 403):
            wrong.append(f"GET {name}: {response.status_code}")
    assert not wrong, "\n".join(wrong)


def test_every_kind_specific_route_is_recognised_by_its_kind():
    """A new kind's routes must get a marker here, or the matrix would test them against a Wikipedia project."""
    kinds = {kind_of(path) for _, path in schema_operations()} | {kind_of(_page_route(n)) for n in page_tables()}
    assert kinds == set(Project.Kind.values)


# The researcher: every route, with what a member holding only the researcher role gets
#
# Researchers read releases (their statistics are in the manifest and the card) and agreement reports, and the
# guidelines; everything else, queues above all, is refused (403). Each row runs against a project of the route's
# kind, where the researcher is a member, with that project's own objects where the route names one.

OK, REDIRECT, REFUSED, MISSING = 200, 302, 403, 404
PAGE_KINDS = {"validation_": "validation", "trivia_": "trivia", "entity_": "entity_qa"}  # url name prefixes
API_KINDS = {"validation/": "validation", "trivia/": "trivia", "entities/": "entity_qa"}  # after projects/{slug}/

# Pages: url name -> status; any other page of a project is refused (403).
RESEARCHER_PAGES: dict[str, int] = {
    "project_detail": REDIRECT,  # to the releases
    "project_guidelines": OK,
    "release_list": OK,
    "release_detail": OK,
    "release_diff": OK,
    "release_file": OK,
    "release_archive": OK,
    "agreement": OK,
    "agreement_report": OK,
    "agreement_download": OK,
    "validation_home": OK,  # each kind's landing page, which shows a researcher no queue
    "trivia_home": OK,
    "entity_home": OK,
    "project_restore": MISSING,  # a deleted project exists only for its coordinators
    # Researchers score model answers on the releases they read (a POST without a file is the form again: 400).
    "evaluation_runs": OK,
    "evaluation_run": OK,
    "evaluation_items": OK,
    "evaluation_item": OK,
    "evaluation_gold_flag": 400,  # they flag a gold that looks wrong (no note: the form again)
    "evaluation_csv": OK,
    "evaluation_results": OK,
    "evaluation_leaderboard_download": OK,
    "evaluation_run_create": 400,
    "evaluation_run_generate": 400,
    "evaluation_run_score": REDIRECT,
    # They judge runs with an LLM, check the judge, override it and compare runs (no verdict given: 400).
    "evaluation_judgments": OK,
    "evaluation_judge_prompt": REDIRECT,
    "evaluation_judgment": OK,
    "evaluation_judgment_resume": REDIRECT,
    "evaluation_judgment_csv": OK,
    "evaluation_judge_check": OK,
    "evaluation_judge_checks": OK,
    "evaluation_judgment_sample": REDIRECT,  # they sample k per scenario for people to check
    "evaluation_judged_override": 400,
    "evaluation_compare": OK,
    "evaluation_leaderboard": OK,
    "evaluation_nativqa": OK,
}
# API: (method, OpenAPI path) -> status; any other operation of a project is refused (403).
RESEARCHER_API: dict[tuple[str, str], int] = {
    ("get", "/api/projects/{slug}/"): OK,
    ("get", "/api/projects/{slug}/next-steps/"): OK,  # their own next steps: none beyond reading
    # A project's settings of its kind (criteria, languages, tasks) are read like the guidelines.
    ("get", "/api/projects/{slug}/review/settings/"): OK,
    ("get", "/api/projects/{slug}/validation/settings/"): OK,
    ("get", "/api/projects/{slug}/trivia/settings/"): OK,
    ("get", "/api/projects/{slug}/releases/"): OK,
    ("get", "/api/projects/{slug}/releases/{version}/"): OK,
    ("get", "/api/projects/{slug}/releases/diff/"): 400,  # readable; without ?old=&new= it says what is missing
    ("get", "/api/projects/{slug}/releases/{version}/files/{name}"): OK,
    ("get", "/api/projects/{slug}/releases/{version}/archive/"): OK,
    ("get", "/api/projects/{slug}/agreement/reports/"): OK,
    ("get", "/api/projects/{slug}/agreement/reports/{report_id}/"): OK,
    ("post", "/api/deleted-projects/{slug}/restore/"): MISSING,
    ("get", "/api/projects/{slug}/evaluation/runs/"): OK,
    ("post", "/api/projects/{slug}/evaluation/runs/"): 415,  # predictions come as a multipart upload
    ("post", "/api/projects/{slug}/evaluation/runs/generate/"): 400,  # without a release and endpoint
    ("get", "/api/projects/{slug}/evaluation/runs/{run_id}/"): OK,
    ("get", "/api/projects/{slug}/evaluation/runs/{run_id}/predictions/"): OK,
    ("get", "/api/projects/{slug}/evaluation/runs/{run_id}/results.csv"): OK,
    ("get", "/api/projects/{slug}/evaluation/runs/{run_id}/results.{fmt}"): OK,
    ("get", "/api/projects/{slug}/evaluation/leaderboard.{fmt}"): OK,
    ("get", "/api/projects/{slug}/evaluation/runs/{run_id}/items/{release_item}/"): OK,
    ("post", "/api/projects/{slug}/evaluation/runs/{run_id}/items/{release_item}/gold-flags/"): 400,  # no note
    ("get", "/api/projects/{slug}/evaluation/judge-prompt/"): OK,
    ("post", "/api/projects/{slug}/evaluation/judge-prompt/"): 400,  # no text
    ("get", "/api/projects/{slug}/evaluation/runs/{run_id}/judgments/"): OK,
    ("post", "/api/projects/{slug}/evaluation/runs/{run_id}/judgments/"): 400,  # no endpoint
    ("get", "/api/projects/{slug}/evaluation/runs/{run_id}/judgments/{judgment_id}/"): OK,
    ("post", "/api/projects/{slug}/evaluation/runs/{run_id}/judgments/{judgment_id}/resume/"): 202,
    ("get", "/api/projects/{slug}/evaluation/runs/{run_id}/judgments/{judgment_id}/verdicts.csv"): OK,
    ("get", "/api/projects/{slug}/evaluation/runs/{run_id}/judgments/{judgment_id}/items/"): OK,
    ("post", "/api/projects/{slug}/evaluation/runs/{run_id}/judgments/{judgment_id}/items/{judged_id}/check/"): 400,
    ("get", "/api/projects/{slug}/evaluation/runs/{run_id}/judgments/{judgment_id}/check/next/"): OK,
    ("get", "/api/projects/{slug}/evaluation/runs/{run_id}/judgments/{judgment_id}/samples/"): OK,
    # they sample k per scenario for people to check; the resume above put the judgment back in the queue: 409
    ("post", "/api/projects/{slug}/evaluation/runs/{run_id}/judgments/{judgment_id}/samples/"): 409,
    ("post", "/api/projects/{slug}/evaluation/runs/{run_id}/judgments/{judgment_id}/items/{judged_id}/override/"): 400,
    ("get", "/api/projects/{slug}/evaluation/runs/{run_id}/compare/"): 400,  # no baseline
    ("get", "/api/projects/{slug}/evaluation/leaderboard/"): OK,
    ("get", "/api/projects/{slug}/evaluation/nativqa/"): OK,
}


def _kind(name_or_path: str, kinds: dict[str, str]) -> str:
    return next((kind for prefix, kind in kinds.items() if name_or_path.startswith(prefix)), "wikipedia_qa")


def test_every_researcher_row_names_a_route_that_exists():
    assert set(RESEARCHER_PAGES) <= set(page_tables())
    assert set(RESEARCHER_API) <= schema_operations()


@pytest.fixture
def kind_worlds(worlds):
    """A researcher who is a member of project B of every kind (each with one of everything its routes name)."""
    researcher = factories.user("researcher_b")
    wikipedia = dict(worlds.b(Project.Kind.WIKIPEDIA_QA)["values"])
    found: dict[str, Any] = {"researcher": researcher}
    for kind in Project.Kind.values:
        values = wikipedia | worlds.b(kind)["values"]
        authoring.membership_set(
            project=Project.objects.get(slug=values["slug"]), user=researcher, roles={"researcher"}
        )
        found[kind] = values
    return found


def test_a_researcher_gets_exactly_the_reading_pages(client, kind_worlds):
    """Every page of a project, of the route's own kind, with its own objects (one world for all: it is costly)."""
    client.force_login(kind_worlds["researcher"])
    wrong = []
    for case in page_cases():
        name, method = case.values
        values = kind_worlds[_kind(name, PAGE_KINDS)]
        url = reverse(name, kwargs={param: values[param] for param in _page_params(name)})

        status = getattr(client, method)(url).status_code

        if status != RESEARCHER_PAGES.get(name, REFUSED):
            wrong.append(f"{method.upper()} {name} ({url}): {status}")
    assert not wrong, wrong


def test_a_researcher_gets_exactly_the_reading_api(kind_worlds):
    api = api_as(kind_worlds["researcher"])
    wrong = []
    for case in api_cases():
        method, path = case.values
        values = kind_worlds[_kind(path.removeprefix("/api/projects/{slug}/"), API_KINDS)]
        url = path.format(**values)

        response = getattr(api, method)(url, {}, format="json")

        if response.status_code != RESEARCHER_API.get((method, path), REFUSED):
            wrong.append(f"{method.upper()} {url}: {response.status_code} {response.content[:120]!r}")
    assert not wrong, wrong
