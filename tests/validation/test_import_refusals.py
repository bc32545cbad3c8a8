"""A validation import refuses a line it cannot read with its number and field, never "failed" with a Python
error; and every CSV import reads files the same way (common/csvfile.py), saying what to do: long cells,
Windows-1256 text, `;`-separated files."""

from __future__ import annotations

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from tests.conftest import api_as
from tests.validation.conftest import TSV_HEADER


@pytest.fixture(autouse=True)
def media(settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"


def _import(project, coordinator, name: str, data: bytes, capture) -> dict:
    client = api_as(coordinator)
    with capture(execute=True):
        queued = client.post(
            f"/api/projects/{project.slug}/validation/import/",
            {"file": SimpleUploadedFile(name, data)},
            format="multipart",
        )
    assert queued.status_code == 202, queued.content
    return client.get(queued.data["url"]).data


def _problems(job: dict) -> list[tuple[int | None, str | None, str]]:
    assert job["status"] == "refused", (job["status"], job.get("error"), job["report"])
    return [(p["line"], p["field"], p["message"]) for p in job["report"]["problems"]]


GOOD = "1\tfood\tq\tWhat is machboos?\tRice with spices.\tfactoid\t['https://example.org/a']\tg\n"


@pytest.mark.parametrize(
    ("urls", "field"),
    [
        ("[" * 5000 + "]" * 5000, None),  # a list literal nested past Python's recursion limit
        ("http://[::1/broken", "answer_URLs[0]"),  # an unclosed IPv6 bracket
    ],
)
def test_a_url_cell_python_cannot_parse_refuses_its_line(
    vproject, coordinator, django_capture_on_commit_callbacks, urls, field
):
    bad = f"2\tfood\tq\tWhat is harees?\tWheat and meat.\tfactoid\t{urls}\tg\n"

    job = _import(
        vproject, coordinator, "items.tsv", (TSV_HEADER + GOOD + bad).encode(), django_capture_on_commit_callbacks
    )

    problems = _problems(job)
    assert problems and all(line == 3 for line, _, _ in problems)
    if field:
        assert problems[0][1] == field


def test_a_jsonl_line_nested_too_deep_is_refused_with_its_number(
    vproject, coordinator, django_capture_on_commit_callbacks
):
    good = b'{"question": "What is machboos?", "answer": "Rice."}\n'
    deep = b'{"question": "q", "answer": "a", "extra": ' + b"[" * 3000 + b"]" * 3000 + b"}\n"

    problems = _problems(_import(vproject, coordinator, "items.jsonl", good + deep, django_capture_on_commit_callbacks))

    assert problems == [(2, None, problems[0][2])] and "levels deep" in problems[0][2]


def test_a_one_megabyte_cell_is_refused_with_its_line_and_column(
    vproject, coordinator, django_capture_on_commit_callbacks, csv_module_default_limit
):
    big = f"2\tfood\tq\t{'x' * 1_048_576}\tRice.\tfactoid\t\tg\n"

    problems = _problems(
        _import(vproject, coordinator, "items.tsv", (TSV_HEADER + big).encode(), django_capture_on_commit_callbacks)
    )

    assert [(line, field) for line, field, _ in problems] == [(2, "question")]
    assert "longer than" in problems[0][2]


def test_a_windows_1256_file_says_how_to_save_it_as_utf8(vproject, coordinator, django_capture_on_commit_callbacks):
    data = (TSV_HEADER + "1\tfood\tq\tما هو المجبوس؟\tأرز.\tfactoid\t\tg\n").encode("cp1256")

    problems = _problems(_import(vproject, coordinator, "items.tsv", data, django_capture_on_commit_callbacks))

    assert "Windows-1256" in problems[0][2] and "CSV UTF-8" in problems[0][2]


def test_a_semicolon_separated_file_says_so(vproject, coordinator, django_capture_on_commit_callbacks):
    data = b"question;answer\nWhat is machboos?;Rice.\n"

    problems = _problems(_import(vproject, coordinator, "items.csv", data, django_capture_on_commit_callbacks))

    assert problems[0][0] == 1 and "separated by semicolons" in problems[0][2]


def _queued(client, path: str, data: dict, capture) -> dict:
    with capture(execute=True):
        response = client.post(path, data, format="multipart")
    if response.status_code != 202:
        return {"status": response.status_code, "body": response.json()}
    return client.get(response.data["url"]).data


def test_seed_and_domain_files_with_long_cells_or_semicolons_are_refused_with_a_remedy(
    vproject, coordinator, django_capture_on_commit_callbacks, csv_module_default_limit
):
    client = api_as(coordinator)
    long_query = f"topic,query\nfood,{'x' * 200_000}\n".encode()
    seeds = _queued(
        client,
        f"/api/projects/{vproject.slug}/validation/seeds/import/",
        {"file": SimpleUploadedFile("seeds.csv", long_query), "locations": ["Doha"]},
        django_capture_on_commit_callbacks,
    )
    domains = _queued(
        client,
        f"/api/projects/{vproject.slug}/validation/domains/import/",
        {"file": SimpleUploadedFile("domains.csv", b"base_url;label\nexample.org;reliable\n")},
        django_capture_on_commit_callbacks,
    )

    assert [(line, field) for line, field, _ in _problems(seeds)] == [(2, "query")]
    assert "separated by semicolons" in _problems(domains)[0][2]


def test_a_domain_file_with_an_unclosed_ipv6_bracket_refuses_that_line(
    vproject, coordinator, django_capture_on_commit_callbacks
):
    data = b"base_url,label\nexample.org,very_reliable\nhttp://[::1/x,very_reliable\n"

    job = _queued(
        api_as(coordinator),
        f"/api/projects/{vproject.slug}/validation/domains/import/",
        {"file": SimpleUploadedFile("domains.csv", data)},
        django_capture_on_commit_callbacks,
    )

    assert [(line, field) for line, field, _ in _problems(job)] == [(3, "base_url")]
