"""A crafted project archive: every name, path, code and template in its rows is outside input.

The archive checks (tests/archive/test_checks.py) vet member names, sizes and checksums. These archives pass
those checks — their manifest is rewritten to match — and carry the attack inside a row.
"""

from __future__ import annotations

import hashlib
import json
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings
from django.contrib.auth import get_user_model
from django.urls import reverse

from annotation.models import ImportJob, Project
from archive import services as archives
from common.errors import InvalidInput
from exports import services as exports
from exports.models import Release
from tests.conftest import api_as
from tests.exports.conftest import authored_pair

Rows = list[dict[str, Any]]


@pytest.fixture(autouse=True)
def media(settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"
    return settings.MEDIA_ROOT


@pytest.fixture
def published(project, coordinator, annotator, other_project):
    """Project A with a published release, and project B (bar-deu) with one too: the target of an overwrite."""
    authored_pair(project, annotator)
    exports.release_build_now(project=project, user=coordinator, seed=1)
    owner = other_project.memberships.get(is_coordinator=True).user
    authored_pair(other_project, annotator)
    victim = exports.release_build_now(project=other_project, user=owner, seed=1)
    return victim


@pytest.fixture
def archive(project, published, tmp_path) -> Path:
    out = tmp_path / "project.zip"
    archives.archive_write_to(project=project, out=out)
    return out


def tampered(source: Path, target: Path, *, rows: dict[str, Callable[[Rows], None]], manifest=None) -> Path:
    """Edit data members' rows (member -> edit(rows)), then make the manifest agree: sizes, sha256s, counts."""
    with zipfile.ZipFile(source) as old:
        members = {info.filename: old.read(info) for info in old.infolist()}
    book = json.loads(members.pop("manifest.json"))
    for member, edit in rows.items():
        lines = [json.loads(line) for line in members[member].decode().splitlines()]
        edit(lines)
        members[member] = "".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines).encode()
        for entry in book["models"]:
            if entry["member"] == member:
                entry["rows"] = len(lines)
    if manifest is not None:
        manifest(book)
    book["members"] = {
        name: {"size": len(data), "sha256": hashlib.sha256(data).hexdigest()} for name, data in members.items()
    }
    with zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as new:
        for name, data in members.items():
            new.writestr(name, data)
        new.writestr("manifest.json", json.dumps(book))
    return target


def refused(path: Path) -> str:
    with pytest.raises(InvalidInput) as caught:
        archives.archive_import_file(path=path, slug="copy")
    assert not Project.all_objects.filter(slug="copy").exists()
    return caught.value.message


def _rename_release_file(old: str, new: str) -> dict[str, Any]:
    def release_rows(lines: Rows) -> None:
        for entry in lines[0]["fields"]["files"]:
            if entry["name"] == old:
                entry["name"] = new

    def manifest(book: dict[str, Any]) -> None:
        for entry in book["files"]:
            if entry["name"] == old:
                entry["name"] = new

    return {"rows": {"data/exports.release.jsonl": release_rows}, "manifest": manifest}


# 1. Release file names: nothing written outside the release folder, nothing served from outside it


@pytest.mark.parametrize(
    "name", ["../../../../../../../outside.txt", "../../bar-deu/v1/README.md", "/tmp/abs.md", ".hidden", "a/../../b"]
)
def test_an_archive_naming_a_release_file_outside_its_folder_is_refused_and_writes_nothing(
    archive, tmp_path, media, published, name
):
    victim_readme = Path(settings.MEDIA_ROOT) / published.path / "README.md"
    before = victim_readme.read_bytes()

    message = refused(tampered(archive, tmp_path / "evil.zip", **_rename_release_file("README.md", name)))

    assert "not a plain file name" in message
    assert victim_readme.read_bytes() == before
    assert hashlib.sha256(before).hexdigest() == published.file_entry("README.md")["sha256"]
    assert not (tmp_path / "outside.txt").exists() and not Path("/outside.txt").exists()
    assert not list((Path(settings.MEDIA_ROOT) / "releases").glob(".importing-*"))


def test_the_file_writer_refuses_a_name_leading_outside_even_when_the_row_check_is_bypassed(
    archive, tmp_path, published, monkeypatch
):
    """The write itself checks the resolved path (a second wall behind the row rules)."""
    monkeypatch.setattr("archive.reader.row_problems", lambda label, obj: iter(()))
    victim_readme = Path(settings.MEDIA_ROOT) / published.path / "README.md"
    before = victim_readme.read_bytes()

    message = refused(
        tampered(archive, tmp_path / "evil.zip", **_rename_release_file("README.md", "../../bar-deu/v1/README.md"))
    )

    assert "not a plain file name inside its release" in message
    assert victim_readme.read_bytes() == before


def test_a_release_row_naming_a_file_outside_its_folder_is_never_served(client, project, published, coordinator):
    release = Release.objects.get(project=project)
    secret = Path(settings.MEDIA_ROOT) / "secret.txt"
    secret.write_text("not for you")
    files = [*release.files, {"name": "../../../secret.txt", "size": 11, "sha256": "0" * 64}]
    Release.objects.filter(pk=release.pk).update(files=files)  # as a row imported before the rule would be
    base = f"projects/{project.slug}/releases/{release.version}/files/../../../secret.txt"

    api = api_as(coordinator).get(f"/api/{base}")
    api_encoded = api_as(coordinator).get(f"/api/{base.replace('../', '..%2F')}")
    client.force_login(coordinator)
    page = client.get(reverse("release_file", args=[project.slug, release.version, "../../../secret.txt"]))

    for response in (api, api_encoded, page):
        assert response.status_code == 404
        assert b"not for you" not in b"".join(getattr(response, "streaming_content", [response.content]))
    assert (
        api_as(coordinator).get(f"/api/projects/{project.slug}/releases/{release.version}/files/README.md").status_code
        == 200
    )


def test_a_release_path_outside_the_releases_folder_is_never_served(project, published, coordinator):
    release = Release.objects.get(project=project)
    Release.objects.filter(pk=release.pk).update(path="../../etc")

    response = api_as(coordinator).get(f"/api/projects/{project.slug}/releases/{release.version}/files/README.md")

    assert response.status_code == 404


# 8. Every field an archive brings is checked as the forms would


def _rename_user(old: str, new: str) -> dict[str, Callable[[Rows], None]]:
    """users.jsonl and every row naming the person by username."""

    def rename(value: Any) -> Any:
        if value == old:
            return new
        if isinstance(value, dict):
            return {key: rename(item) for key, item in value.items()}
        if isinstance(value, list):
            return [rename(item) for item in value]
        return value

    def edit(lines: Rows) -> None:
        lines[:] = [rename(line) for line in lines]

    members = ["users.jsonl", "data/annotation.membership.jsonl", "data/annotation.pagepair.jsonl"]
    members += ["data/annotation.qaitem.jsonl", "data/annotation.qaitemrevision.jsonl"]
    members += ["data/annotation.screening.jsonl", "data/annotation.evidencespan.jsonl"]
    members += ["data/audit.auditevent.jsonl"]
    return {member: edit for member in members}


@pytest.mark.parametrize(
    ("username", "expected"),
    [
        ("<img src=x onerror=alert(1)>", "Enter a valid username"),
        ("ｖｉｃｔｉｍ２", "NFKC"),
        ("a" * 151, "at most 150"),
        ("bob smith", "Enter a valid username"),
    ],
)
def test_an_archive_bringing_a_username_sign_in_would_refuse_is_refused(archive, tmp_path, username, expected):
    message = refused(tampered(archive, tmp_path / "evil.zip", rows=_rename_user("annotator", username)))

    assert "users.jsonl" in message and expected in message
    assert not get_user_model().objects.filter(username=username).exists()


def _project_field(field: str, value: Any) -> dict[str, Any]:
    def edit(lines: Rows) -> None:
        lines[0]["fields"][field] = value

    return {"rows": {"data/annotation.project.jsonl": edit}}


@pytest.mark.parametrize(
    ("field", "value", "expected"),
    [
        ("local_wiki", "127.0.0.1:8999/x#", "not a wiki code"),
        ("standard_wiki", "evil.example", "not a wiki code"),
        ("standard_variant", "zh/../x", "not a script variant"),
        ("local_language", "<b>", "not a language code"),
        ("kind", "superuser", "not a valid choice"),
        ("name", "x" * 201, "at most 200"),
    ],
)
def test_an_archive_bringing_a_project_field_the_forms_would_refuse_is_refused(
    archive, tmp_path, field, value, expected
):
    message = refused(tampered(archive, tmp_path / "evil.zip", **_project_field(field, value)))

    assert "annotation.project.jsonl line 1" in message and field in message and expected in message


def test_an_archive_bringing_a_prompt_template_with_a_format_spec_is_refused(archive, tmp_path):
    def edit(lines: Rows) -> None:
        lines[0]["fields"]["prompt_templates"]["local_lead"] = "{question:>20000000}"

    message = refused(tampered(archive, tmp_path / "evil.zip", rows={"data/exports.exportsettings.jsonl": edit}))

    assert "exportsettings" in message and "format spec" in message


def test_an_archive_bringing_nan_in_a_row_is_refused_naming_member_and_line(archive, tmp_path):
    def edit(lines: Rows) -> None:
        lines[0]["fields"]["counts"] = {"score": float("nan")}

    message = refused(tampered(archive, tmp_path / "evil.zip", rows={"data/exports.release.jsonl": edit}))

    assert "exports.release.jsonl line 1" in message and "NaN" in message


def test_an_archived_import_job_never_reads_a_file_its_row_names(archive, tmp_path, media, project):
    """An upload path in an ImportJob row would name another file of this server; and a pending job would run."""
    secret = Path(settings.MEDIA_ROOT) / "imports" / "other" / "pairs.jsonl"
    secret.parent.mkdir(parents=True)
    secret.write_text("{}\n")

    def edit(lines: Rows) -> None:
        lines.append(
            {
                "pk": 77,
                "fields": {
                    "project": project.pk,
                    "status": "pending",
                    "files": [{"name": "pairs.jsonl", "path": "imports/other/pairs.jsonl", "size": 3}],
                },
            }
        )

    imported, _ = archives.archive_import_file(
        path=tampered(archive, tmp_path / "job.zip", rows={"data/annotation.importjob.jsonl": edit}), slug="copy"
    )

    job = ImportJob.objects.get(project=imported)
    assert job.status == ImportJob.Status.FAILED and "archived" in job.error
    assert job.files == [{"name": "pairs.jsonl", "size": 3}]
    assert secret.exists()
