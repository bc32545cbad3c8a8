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


def _trivia(trivia, coordinator, data: bytes):
    return api_as(coordinator).post(
        f"/api/projects/{trivia.slug}/trivia/import/",
        {"file": SimpleUploadedFile("items.csv", data)},
        format="multipart",
    )


def test_a_megabyte_cell_in_a_trivia_csv_names_its_line_and_column(trivia, coordinator):
    data = (TRIVIA_HEADER + f"q1,Geografia eta Historia,1,{MEGABYTE},In Biscay,In Gipuzkoa,In Navarre,0\n").encode()

    response = _trivia(trivia, coordinator, data)

    assert response.status_code == 400, response.content[:300]
    assert response.json()["detail"].startswith("items.csv line 2 (id q1): question: at most")
    assert not TriviaItem.objects.exists()


def test_a_windows_1256_trivia_csv_is_told_to_save_as_utf8(trivia, coordinator):
    data = (TRIVIA_HEADER + "q1,Geografia eta Historia,1,ما هو؟,أ,ب,ج,0\n").encode("cp1256")

    detail = _trivia(trivia, coordinator, data).json()["detail"]

    assert "Windows-1256" in detail and "CSV UTF-8" in detail


def test_a_semicolon_separated_trivia_csv_is_told_so(trivia, coordinator):
    data = TRIVIA_HEADER.replace(",", ";").encode() + b"q1;Geografia eta Historia;1;Q?;A;B;C;0\n"

    response = _trivia(trivia, coordinator, data)

    assert response.status_code == 400
    assert "separated by semicolons, not commas" in response.json()["detail"]


def test_an_entity_csv_with_semicolons_or_a_megabyte_cell_is_refused_with_a_remedy(coordinator):
    entities.entity_project_create(
        name="Companies", slug="companies", language="eng", attributes=ATTRIBUTES,
        grouping_fields=["market", "country", "region"], seed=5, created_by=coordinator,
    )  # fmt: skip
    client = api_as(coordinator)

    def post(data: bytes):
        upload = SimpleUploadedFile("companies.csv", data)
        return client.post("/api/projects/companies/entities/import/", {"file": upload}, format="multipart")

    semicolons = post(b"name;description\nIberdrola;An energy company.\n")
    big = post(f"name,description\n{MEGABYTE},x\n".encode())

    assert semicolons.status_code == 400 and "separated by semicolons" in semicolons.json()["detail"]
    assert big.status_code in (200, 400)  # read, not a 500: a long name is cut as any name is
    assert Entity.objects.count() <= 1


def test_a_people_csv_with_a_megabyte_name_names_its_row_and_column(project, coordinator):
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
