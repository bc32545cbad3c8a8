"""Every upload: a size limit, type and encoding checks, and a clear error that names the file; nothing kept.

Uploads: pair imports (page and API), the collection titles file (page), the agreement calculator (page and
API). None of them accepts an archive: a zip is refused by its name, or read as the text it claims to be and
refused as not UTF-8, never unpacked.
"""

from __future__ import annotations

import codecs
import io
import json
import zipfile
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from annotation import ingest
from annotation.models import ImportJob, PagePair
from tests.conftest import api_as
from wikiqa.models import Collection

PNG = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256)) * 4
GOOD_PAIR = {
    "local_title": "Minga",
    "standard_title": "München",
    "local_lead": "Minga is a Stod.",
    "standard_lead": "M.",
}


def zipped(name: str, data: bytes) -> bytes:
    """A zip of one member, the same bytes at any hour: its header holds the member's time, and some times made
    the bytes before the first newline valid UTF-8 (then the calculator refused the header, not the encoding)."""
    buffer = io.BytesIO()
    member = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
    member.compress_type = zipfile.ZIP_DEFLATED
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr(member, data)
    return buffer.getvalue()


def jsonl(*records: dict) -> bytes:
    return b"".join(json.dumps(record, ensure_ascii=False).encode() + b"\n" for record in records)


@pytest.fixture
def media(settings, tmp_path, monkeypatch):
    settings.MEDIA_ROOT = tmp_path / "media"
    monkeypatch.setattr("annotation.tasks.import_job_run.delay", lambda job_id: None)
    monkeypatch.setattr("wikiqa.tasks.collection_run.delay", lambda collection_id: None)
    return Path(settings.MEDIA_ROOT)


def stored_files(media: Path) -> list[Path]:
    return [path for path in media.rglob("*") if path.is_file()] if media.exists() else []


def run_import(project, coordinator, name: str, data: bytes) -> ImportJob:
    """Upload through the API, then run the job as the worker would; its report says what was wrong."""
    response = api_as(coordinator).post(
        f"/api/projects/{project.slug}/imports/",
        {"files": [SimpleUploadedFile(name, data)], "dry_run": "false"},
        format="multipart",
    )
    assert response.status_code == 202, response.content
    ingest.import_job_run(job_id=response.data["id"])
    return ImportJob.objects.get(pk=response.data["id"])


def problems(job: ImportJob) -> str:
    return json.dumps(ingest.import_job_report(job), ensure_ascii=False)


# Pair imports


def test_an_import_over_the_size_limit_is_refused_naming_the_file_and_keeps_nothing(
    project, coordinator, media, settings
):
    settings.IMPORT_MAX_BYTES = 1000
    upload = SimpleUploadedFile("big.jsonl", jsonl(GOOD_PAIR) * 40)

    response = api_as(coordinator).post(
        f"/api/projects/{project.slug}/imports/", {"files": [upload]}, format="multipart"
    )

    assert response.status_code == 400
    assert response.data["field"] == "files"
    assert "big.jsonl" in response.data["detail"] and "1,000 bytes" in response.data["detail"]
    assert not ImportJob.objects.exists() and stored_files(media) == []


def test_the_import_page_refuses_a_file_over_the_limit_with_the_limit_in_the_message(
    client, project, coordinator, media, settings
):
    settings.IMPORT_MAX_BYTES = 1000
    client.force_login(coordinator)

    response = client.post(
        reverse("import_start", args=[project.slug]),
        {"files": [SimpleUploadedFile("big.jsonl", jsonl(GOOD_PAIR) * 40)], "format": "auto"},
    )

    assert response.status_code in (200, 400)
    assert "limit" in response.content.decode()
    assert not ImportJob.objects.exists() and stored_files(media) == []


@pytest.mark.parametrize(
    ("name", "data", "expected"),
    [
        ("pairs.jsonl", PNG, "not valid UTF-8"),
        ("pairs.jsonl", json.dumps(GOOD_PAIR, ensure_ascii=False).encode("latin-1") + "é".encode("latin-1"), "UTF-8"),
        ("pairs.jsonl", codecs.BOM_UTF16_LE + jsonl(GOOD_PAIR).decode().encode("utf-16-le"), "UTF-8"),
        ("pairs.csv", b"local_title,standard_title\n\xff\xfe,x\n", "UTF-8"),
        ("pairs.jsonl", zipped("pairs.jsonl", jsonl(GOOD_PAIR)), "UTF-8"),  # a zip named .jsonl is not unpacked
        (
            "pairs.jsonl",
            b'{"local_title": "Min\\u0000ga", "standard_title": "x", "local_lead": "a", "standard_lead": "b"}\n',
            "local_title",
        ),
        ("pairs.jsonl", b"[1, 2, 3]\n", "must be a JSON object"),
        ("pairs.jsonl", b'{"local_title": ' + b"[" * 100_000 + b"\n", "nested too deeply"),
    ],
    ids=["binary", "latin-1", "utf-16", "csv-binary", "zip-named-jsonl", "nul-character", "not-an-object", "nesting"],
)
def test_a_file_that_is_not_what_it_claims_is_refused_naming_file_and_line_and_writes_no_pair(
    project, coordinator, media, name, data, expected
):
    job = run_import(project, coordinator, name, data)

    assert job.status == ImportJob.Status.REFUSED, job.error
    assert expected in problems(job)
    assert not PagePair.objects.filter(project=project).exists()
    assert stored_files(media) == []  # the uploads are removed once read


def test_a_zip_archive_is_refused_by_its_name_before_anything_is_stored(project, coordinator, media):
    upload = SimpleUploadedFile("pairs.zip", zipped("../../etc/passwd", b"root"))

    response = api_as(coordinator).post(
        f"/api/projects/{project.slug}/imports/", {"files": [upload]}, format="multipart"
    )

    assert response.status_code == 400
    assert "pairs.zip" in response.data["detail"] and ".jsonl, .csv or .json" in response.data["detail"]
    assert stored_files(media) == []


def test_an_upload_named_with_a_path_is_stored_under_its_base_name_inside_the_media_folder(project, coordinator, media):
    upload = SimpleUploadedFile("../../../../tmp/evil.jsonl", jsonl(GOOD_PAIR))

    response = api_as(coordinator).post(
        f"/api/projects/{project.slug}/imports/", {"files": [upload], "dry_run": "true"}, format="multipart"
    )

    assert response.status_code == 202
    job = ImportJob.objects.get(pk=response.data["id"])
    stored = [Path(media / entry["path"]).resolve() for entry in job.files]
    assert all(path.is_relative_to(media.resolve()) and path.name == "evil.jsonl" for path in stored)


# The collection titles file


def test_a_titles_file_that_is_not_utf8_is_refused_naming_the_field(client, project, coordinator, media):
    client.force_login(coordinator)

    response = client.post(
        reverse("collection_start", args=[project.slug]),
        {"titles_file": SimpleUploadedFile("titles.txt", PNG), "local_heavy_only": "on"},
    )

    assert response.status_code in (200, 400)
    assert "not UTF-8" in response.content.decode()
    assert not Collection.objects.exists()


def test_a_titles_file_over_the_limit_is_refused(client, project, coordinator, media, settings):
    settings.IMPORT_MAX_BYTES = 100
    client.force_login(coordinator)

    response = client.post(
        reverse("collection_start", args=[project.slug]),
        {"titles_file": SimpleUploadedFile("titles.txt", b"Minga\n" * 50)},
    )

    assert "larger than the import limit" in response.content.decode()
    assert not Collection.objects.exists()


# The agreement calculator


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        (PNG, "not UTF-8"),
        ("unit,rater,value\nq1,a,pass\nq1,b,passé\n".encode("latin-1"), "not UTF-8"),
        (zipped("ratings.csv", b"unit,rater,value\n"), "not UTF-8"),
        # read (one CSV reader, common/csvfile.py), then refused naming its line and column
        (b"unit,rater,value\nq1,a," + b"x" * 200_000 + b"\n", "line 2, column 'value': is longer than"),
    ],
    ids=["binary", "latin-1", "zip", "huge-field"],
)
def test_the_calculator_api_refuses_a_file_that_is_not_a_utf8_csv_naming_it(annotator, data, expected):
    response = api_as(annotator).post(
        "/api/agreement/calculate/",
        {"file": SimpleUploadedFile("ratings.csv", data), "level": "nominal", "bootstrap": 10},
        format="multipart",
    )

    assert response.status_code == 400, response.content
    assert expected in response.data["detail"]


def test_the_calculator_refuses_a_file_over_its_size_limit(annotator, settings):
    settings.CALCULATOR_MAX_BYTES = 1000
    data = b"unit,rater,value\n" + b"".join(f"q{n},a,pass\nq{n},b,pass\n".encode() for n in range(200))

    response = api_as(annotator).post(
        "/api/agreement/calculate/",
        {"file": SimpleUploadedFile("ratings.csv", data), "level": "nominal", "bootstrap": 10},
        format="multipart",
    )

    assert response.status_code == 400
    assert response.data["field"] == "file"
    assert "1,000 bytes" in response.data["detail"]
