"""Values from outside that once reached the database, the worker or a file unchecked: each is refused early."""

from __future__ import annotations

import json

import pytest
from django.contrib.auth.models import Permission
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import get_resolver, reverse
from rest_framework.test import APIClient

from annotation import ingest
from annotation.languages import is_wiki_code
from annotation.models import ImportJob, PagePair, Project
from annotation.services.projects import project_create, project_update
from common import jsontext
from common.errors import InvalidInput
from common.pagination import BoundedLimitOffsetPagination
from exports import services as exports
from exports.models import ExportSettings, Release
from tests import factories
from tests.conftest import api_as
from tests.exports.conftest import authored_pair
from wikiqa import wikipedia

HOSTS = ["127.0.0.1:8999/x#", "evil.example", "zh.wikipedia.org@evil", "a b", "ZH", "zh-", "-zh", "zh--yue", "z/h", ""]
WIKI_CODES = ["zh-yue", "zh-min-nan", "bat-smg", "roa-tara", "be-tarask", "zh-classical", "bar", "de", "arz"]


# Wiki codes: the host the worker connects to


@pytest.mark.parametrize("code", WIKI_CODES)
def test_hyphenated_wiki_codes_are_wiki_codes(code):
    assert is_wiki_code(code)


@pytest.mark.parametrize("code", HOSTS)
def test_a_wiki_code_naming_a_host_or_path_is_not_a_wiki_code(code):
    assert not is_wiki_code(code)


@pytest.mark.parametrize("code", ["127.0.0.1:8999/x#", "evil.example", "a b"])
def test_a_project_refuses_a_wiki_code_that_names_another_host_on_every_way_in(client, coordinator, project, code):
    coordinator.user_permissions.add(Permission.objects.get(codename="add_project"))
    with pytest.raises(InvalidInput) as refused:
        project_create(name="X", slug="x", local_language="yue", standard_language="cmn", local_wiki=code)
    assert refused.value.field == "local_wiki"
    with pytest.raises(InvalidInput):
        project_update(project=project, standard_wiki=code)

    created = api_as(coordinator).post(
        "/api/projects/",
        {"name": "X", "slug": "x", "local_language": "yue", "standard_language": "cmn", "standard_wiki": code},
        format="json",
    )
    patched = api_as(coordinator).patch(f"/api/projects/{project.slug}/", {"local_wiki": code}, format="json")
    client.force_login(coordinator)
    form = {"name": "X", "slug": "x", "local_language": "yue", "standard_language": "cmn", "local_wiki": code}
    form |= {"lead_qa_min": 2, "lead_qa_max": 3, "reviewers_per_item": 1, "claim_minutes": 30}
    page = client.post(reverse("project_create"), form)

    assert created.status_code == 400 and "standard_wiki" in created.json()["details"]
    assert patched.status_code == 400 and "local_wiki" in patched.json()["details"]
    assert page.status_code == 200 and "is not a wiki code" in page.content.decode()
    assert list(Project.objects.values_list("slug", "local_wiki", "standard_wiki")) == [("yue-cmn", "zh-yue", "zh")]


def test_a_project_accepts_hyphenated_wiki_codes(coordinator):
    project = project_create(
        name="Min Nan", slug="nan-cmn", local_language="nan", standard_language="cmn", local_wiki="zh-min-nan"
    )
    project_update(project=project, local_wiki="bat-smg", standard_wiki="be-tarask")

    assert (project.local_wiki, project.standard_wiki) == ("bat-smg", "be-tarask")


def test_the_wikipedia_client_never_connects_to_a_host_a_stored_code_names(project, coordinator):
    Project.objects.filter(pk=project.pk).update(local_wiki="127.0.0.1:8999/x#")  # written before the rule
    requests = []
    session = wikipedia.WikiSession(transport=_Recorder(requests), min_interval=0)

    with pytest.raises(wikipedia.WikipediaError, match="not a wiki code"):
        session.facts("127.0.0.1:8999/x#", "Minga")

    assert requests == []


class _Recorder:
    def __init__(self, requests: list) -> None:
        self.requests = requests

    def handle_request(self, request):
        self.requests.append(request)
        raise AssertionError(f"the client connected to {request.url}")

    def close(self) -> None:
        pass


# Prompt templates: named placeholders only


@pytest.mark.parametrize(
    "template",
    [
        "{question:>20000000}",
        "{question!r:>{local_lead}}",
        "{question!s}",
        "{question} {local_lead:.5}",
        "{question.__class__}",
        "{question[0]}",
        "{question} {}",
    ],
)
def test_a_prompt_template_with_a_conversion_spec_or_attribute_is_refused_on_save(
    client, project, coordinator, template
):
    with pytest.raises(InvalidInput) as refused:
        exports.export_settings_update(project=project, prompt_templates={"local_lead": template})
    response = api_as(coordinator).patch(
        f"/api/projects/{project.slug}/export-settings/", {"prompt_templates": {"local_lead": template}}, format="json"
    )
    client.force_login(coordinator)
    settings_row = exports.export_settings_get(project=project)
    form = {f"template_{scenario}": text for scenario, text in settings_row.prompt_templates.items()}
    page = client.post(
        reverse("export_settings", args=[project.slug]),
        form | {"template_local_lead": template, "license": settings_row.license, "version": settings_row.version},
    )

    assert refused.value.field == "prompt_templates.local_lead"
    assert response.status_code == 400 and "prompt_templates.local_lead" in response.json()["details"]
    assert page.status_code == 200 and "has-error" in page.content.decode()
    assert "{question}" in exports.export_settings_get(project=project).prompt_templates["local_lead"]
    assert template not in exports.export_settings_get(project=project).prompt_templates.values()


def test_a_release_build_refuses_a_stored_template_with_a_format_spec_without_echoing_text(project, coordinator):
    authored_pair(project, factories.user("author"))
    row = exports.export_settings_get(project=project)
    templates = row.prompt_templates | {"local_lead": "{question!r:>{local_lead}}"}
    ExportSettings.objects.filter(pk=row.pk).update(prompt_templates=templates)  # written before the rule

    release = exports.release_build_now(project=project, user=coordinator, seed=1)

    assert release.status == Release.Status.FAILED
    assert "conversion" in release.error and "local_lead" in release.error
    assert "茶餐廳" not in release.error and "菠蘿" not in release.error  # no lead text in the error


# Imports and lists: database errors become refusals


def _row(number: int, **fields) -> dict:
    return {
        "local_title": f"唐樓 {number}",
        "standard_title": f"唐楼 {number}",
        "local_url": f"https://zh-yue.wikipedia.org/wiki/T{number}",
        "standard_url": f"https://zh.wikipedia.org/wiki/T{number}",
        "local_lead": "唐樓係舊式樓宇。",
        "standard_lead": "唐楼。",
        **fields,
    }


def test_the_json_reader_names_every_non_finite_number_in_document_order():
    with pytest.raises(jsontext.NonFiniteNumber) as refused:
        jsontext.loads('{"a": [1, {"b": NaN}], "c": 1e400, "d": {"e": -Infinity}, "f": 2.5}')

    error = refused.value
    assert error.found == [(("a", 1, "b"), "NaN"), (("c",), "1e400"), (("d", "e"), "-Infinity")]
    assert (error.path, error.value, error.key) == ("a[1].b", "NaN", "a")
    assert jsontext.loads('{"f": 2.5, "g": [null]}') == {"f": 2.5, "g": [None]}


@pytest.mark.parametrize("number", ["NaN", "Infinity", "-Infinity", "1e400"])
def test_a_jsonl_line_with_nan_is_refused_naming_its_line_and_field(
    project, coordinator, django_capture_on_commit_callbacks, number
):
    good = json.dumps(_row(1), ensure_ascii=False)
    bad = json.dumps(_row(2, metadata={"score": 0.5}), ensure_ascii=False).replace("0.5", number)
    upload = SimpleUploadedFile("pairs.jsonl", f"{good}\n{bad}\n".encode())

    with django_capture_on_commit_callbacks(execute=True):
        job = ingest.import_job_create(project=project, user=coordinator, files=[upload])

    job.refresh_from_db()
    assert job.status == ImportJob.Status.REFUSED, job.error
    problem = job.report["problems"][0]
    assert (problem["line"], problem["field"]) == (2, "metadata.score")
    assert number in problem["message"]
    assert not PagePair.objects.filter(project=project).exists()


@pytest.mark.parametrize(
    "query",
    ["limit=9223372036854775808", "offset=9223372036854775808", "limit=-1", "limit=abc", "offset=1" + "0" * 5000],
)
def test_a_list_refuses_a_limit_or_offset_the_database_cannot_hold(project, coordinator, query):
    factories.pair(project)
    client = api_as(coordinator)

    for path in ("/api/projects/", f"/api/projects/{project.slug}/pairs/", f"/api/projects/{project.slug}/releases/"):
        response = client.get(f"{path}?{query}")

        assert response.status_code == 400, f"{path}?{query[:40]}: {response.status_code}"
        assert response.json()["field"] == query.split("=")[0]


def test_a_list_keeps_answering_limits_inside_the_bounds(project, coordinator):
    for _ in range(3):
        factories.pair(project)

    response = api_as(coordinator).get(f"/api/projects/{project.slug}/pairs/?limit=2&offset=1")

    assert response.status_code == 200 and len(response.json()["results"]) == 2 and response.json()["count"] == 3


def test_every_paginated_api_view_uses_the_bounded_pagination():
    views = []

    def walk(patterns) -> None:
        for pattern in patterns:
            if hasattr(pattern, "url_patterns"):
                walk(pattern.url_patterns)
            else:
                view = getattr(pattern.callback, "view_class", None) or getattr(pattern.callback, "cls", None)
                if view is not None and getattr(view, "pagination_class", None) is not None:
                    views.append(view)

    walk(get_resolver().url_patterns)
    assert views, "no paginated view found: the walk is broken"
    offenders = [v.__name__ for v in views if not issubclass(v.pagination_class, BoundedLimitOffsetPagination)]
    assert not offenders


def test_an_anonymous_list_request_is_still_refused_before_pagination(project):
    assert APIClient().get("/api/projects/?limit=9223372036854775808").status_code in (401, 403)
