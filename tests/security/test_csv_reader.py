"""Every CSV import reads files through one reader (common/csvfile.py): a 1 MB cell is refused with its row and
column (it was a 500, "field larger than field limit"), and a Windows-1256 or `;`-separated file is told what
to do. Trivia, entity and people imports, through the API."""

from __future__ import annotations

from django.core.files.uploadedfile import SimpleUploadedFile

from multichoice import entities
from multichoice.models import Entity, TriviaItem
from tests.conftest import api_as
from tests.multichoice.test_entities import ATTRIBUTES

TRIVIA_HEADER = "id,category,difficulty,question,candidate0,candidate1,candidate2,answer\n"
MEGABYTE = "x" * 1_048_576


def _import_job(coordinator, path: str, name: str, data: bytes, capture) -> dict:
    """Import through the API (trivia and entity imports are jobs); the job as its page's API shows it."""
    with capture(execute=True):
        response = api_as(coordinator).post(path, {"file": SimpleUploadedFile(name, data)}, format="multipart")
    assert response.status_code == 202, response.content[:300]
    return api_as(coordinator).get(response.json()["url"]).json()


def _trivia_refusal(trivia, coordinator, data: bytes, capture) -> str:
    job = _import_job(coordinator, f"/api/projects/{trivia.slug}/trivia/import/", "items.csv", data, capture)
    assert job["status"] == "refused", job
    return job["report"]["problems"][0]["message"]


def test_a_megabyte_cell_in_a_trivia_csv_names_its_line_and_column(
    trivia, coordinator, django_capture_on_commit_callbacks, csv_module_default_limit
):
    data = (TRIVIA_HEADER + f"q1,Geografia eta Historia,1,{MEGABYTE},In Biscay,In Gipuzkoa,In Navarre,0\n").encode()

    message = _trivia_refusal(trivia, coordinator, data, django_capture_on_commit_callbacks)

    assert message.startswith("items.csv line 2 (id q1): question: at most")
    assert not TriviaItem.objects.exists()


def test_a_windows_1256_trivia_csv_is_told_to_save_as_utf8(trivia, coordinator, django_capture_on_commit_callbacks):
    data = (TRIVIA_HEADER + "q1,Geografia eta Historia,1,ما هو؟,أ,ب,ج,0\n").encode("cp1256")

    message = _trivia_refusal(trivia, coordinator, data, django_capture_on_commit_callbacks)

    assert "Windows-1256" in message and "CSV UTF-8" in message


def test_a_semicolon_separated_trivia_csv_is_told_so(trivia, coordinator, django_capture_on_commit_callbacks):
    data = TRIVIA_HEADER.replace(",", ";").encode() + b"q1;Geografia eta Historia;1;Q?;A;B;C;0\n"

    message = _trivia_refusal(trivia, coordinator, data, django_capture_on_commit_callbacks)

    assert "separated by semicolons, not commas" in message


def test_an_entity_csv_with_semicolons_or_a_megabyte_cell_is_refused_with_a_remedy(
    coordinator, django_capture_on_commit_callbacks, csv_module_default_limit
):
    entities.entity_project_create(
        name="Companies", slug="companies", language="eng", attributes=ATTRIBUTES,
        grouping_fields=["market", "country", "region"], seed=5, created_by=coordinator,
    )  # fmt: skip

    def post(data: bytes) -> dict:
        path = "/api/projects/companies/entities/import/"
        return _import_job(coordinator, path, "companies.csv", data, django_capture_on_commit_callbacks)

    semicolons = post(b"name;description\nIberdrola;An energy company.\n")
    big = post(f"name,description\n{MEGABYTE},x\n".encode())

    assert semicolons["status"] == "refused"
    assert "separated by semicolons" in semicolons["report"]["problems"][0]["message"]
    assert big["status"] in ("done", "refused"), big  # read, not a failure: the job ends with a report
    assert Entity.objects.count() <= 1


def test_a_people_csv_with_a_megabyte_name_names_its_row_and_column(project, coordinator, csv_module_default_limit):
    data = f"username,email,name,roles,languages\nmei,,{'x' * 1_000_000},annotator,\n".encode()  # the 1 MiB cap

    response = api_as(coordinator).post(
        f"/api/projects/{project.slug}/people/import/",
        {"file": SimpleUploadedFile("people.csv", data)},
        format="multipart",
    )

    assert response.status_code == 400
    assert "row 2.name" in response.json()["details"]


def test_a_semicolon_separated_people_csv_is_told_so(project, coordinator):
    data = b"username;email;name;roles;languages\nmei;;;annotator;\n"

    response = api_as(coordinator).post(
        f"/api/projects/{project.slug}/people/import/",
        {"file": SimpleUploadedFile("people.csv", data)},
        format="multipart",
    )

    assert response.status_code == 400
    assert "separated by semicolons" in response.json()["detail"]


def test_the_agreement_calculator_tells_a_semicolon_separated_file(coordinator):
    response = api_as(coordinator).post(
        "/api/agreement/calculate/",
        {"file": SimpleUploadedFile("r.csv", b"unit;rater;value\n1;a;2\n1;b;2\n"), "level": "nominal"},
        format="multipart",
    )

    assert response.status_code == 400
    assert "separated by semicolons" in response.json()["detail"]


def test_a_semicolon_separated_pair_import_is_told_so(
    project, coordinator, django_capture_on_commit_callbacks, settings, tmp_path
):
    settings.MEDIA_ROOT = tmp_path / "media"
    data = b"local_title;standard_title;local_url;standard_url;local_lead;standard_lead\nA;B;u;v;x;y\n"
    client = api_as(coordinator)

    with django_capture_on_commit_callbacks(execute=True):
        queued = client.post(
            f"/api/projects/{project.slug}/imports/",
            {"files": [SimpleUploadedFile("pairs.csv", data)]},
            format="multipart",
        )
    job = client.get(f"/api/projects/{project.slug}/imports/{queued.data['id']}/").data

    assert job["status"] == "refused", job
    assert any("separated by semicolons" in p["message"] for p in job["report"]["problems"])
