"""Bad archives are refused before anything is unpacked, saying what and where, and leave nothing behind."""

from __future__ import annotations

import io
import json
import zipfile
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import CommandError, call_command

from annotation.models import PagePair, Project
from archive import services
from archive.checks import archive_check
from archive.models import ProjectArchive
from common.errors import InvalidInput
from tests.conftest import api_as


@pytest.fixture
def good_archive(project, annotating_pair, tmp_path) -> Path:
    out = tmp_path / "good.zip"
    services.archive_write_to(project=project, out=out)
    return out


def rewrite(source: Path, target: Path, change) -> Path:
    """Copy the zip member by member through `change(name, data) -> [(name, data), ...]`."""
    with zipfile.ZipFile(source) as old, zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as new:
        for info in old.infolist():
            for name, data in change(info.filename, old.read(info)):
                new.writestr(name, data)
    return target


def with_manifest(source: Path, target: Path, edit) -> Path:
    def change(name: str, data: bytes):
        if name == "manifest.json":
            manifest = json.loads(data)
            edit(manifest)
            return [(name, json.dumps(manifest).encode())]
        return [(name, data)]

    return rewrite(source, target, change)


def refused(path: Path) -> str:
    with pytest.raises(InvalidInput) as caught:
        services.archive_import_file(path=path, slug="copy")
    assert not Project.objects.filter(slug="copy").exists()
    return caught.value.message


@pytest.mark.parametrize(
    ("member", "expected"),
    [
        ("../../etc/passwd", "leaves the archive"),
        ("/etc/passwd", "absolute path"),
        ("C:/windows/evil", "absolute path"),
        ("data\\..\\evil.jsonl", "backslash"),
        ("files/release-1/../../x", "leaves the archive"),
        ("notes.txt", "does not have"),
    ],
)
def test_a_member_with_a_dangerous_or_unknown_name_is_refused_before_unpacking(
    good_archive, tmp_path, member, expected
):
    bad = rewrite(
        good_archive,
        tmp_path / "bad.zip",
        lambda name, data: [(name, data)] + [(member, b"x")] * (name == "users.jsonl"),
    )

    message = refused(bad)

    assert expected in message and repr(member) in message and "bad.zip" in message


def test_a_zip_bomb_is_refused_by_its_ratio_before_unpacking(good_archive, tmp_path, settings):
    bomb = b"\0" * (20 * 1024 * 1024)
    bad = rewrite(
        good_archive, tmp_path / "bomb.zip", lambda name, data: [(name, bomb if name == "users.jsonl" else data)]
    )

    message = refused(bad)

    assert "zip bomb" in message and "users.jsonl" in message


def test_an_archive_that_unpacks_past_the_limit_is_refused(good_archive, settings):
    settings.ARCHIVE_MAX_UNPACKED_BYTES = 100

    assert "ARCHIVE_MAX_UNPACKED_BYTES" in refused(good_archive)


def test_an_archive_over_the_size_limit_is_refused_naming_the_limit(good_archive, settings):
    settings.ARCHIVE_MAX_BYTES = 100

    assert "ARCHIVE_MAX_BYTES" in refused(good_archive)


def test_a_member_altered_after_export_fails_its_checksum_and_nothing_is_imported(good_archive, tmp_path):
    def change(name: str, data: bytes):
        if name == "data/annotation.pagepair.jsonl":
            data = data.replace("茶".encode(), "荼".encode())  # same length, different bytes
        return [(name, data)]

    message = refused(rewrite(good_archive, tmp_path / "altered.zip", change))

    assert "annotation.pagepair.jsonl" in message and "sha256" in message


def test_a_member_not_in_the_manifest_is_refused(good_archive, tmp_path):
    bad = with_manifest(good_archive, tmp_path / "unlisted.zip", lambda m: m["members"].pop("users.jsonl"))

    assert "not listed in manifest.json" in refused(bad)


def test_an_archive_of_another_schema_version_is_refused_saying_so(good_archive, tmp_path):
    bad = with_manifest(good_archive, tmp_path / "future.zip", lambda m: m.update(schema_version=99))

    assert "schema_version 99" in refused(bad)


def test_not_a_zip_is_refused(db, tmp_path):
    path = tmp_path / "pairs.zip"
    path.write_bytes(b'{"local_title": "x"}\n')

    assert "not a zip file" in refused(path)


def test_a_bad_row_half_way_rolls_back_everything_and_names_member_line_and_field(good_archive, tmp_path, media):
    def change(name: str, data: bytes):
        if name == "data/annotation.screening.jsonl":
            lines = data.decode().splitlines()
            row = json.loads(lines[-1])
            row["fields"]["pair"] = 987654321
            lines[-1] = json.dumps(row, ensure_ascii=False)
            data = ("\n".join(lines) + "\n").encode()
        return [(name, data)]

    def fix_checksums(manifest):
        import hashlib

        with zipfile.ZipFile(tmp_path / "raw.zip") as raw:
            for member, entry in manifest["members"].items():
                data = raw.read(member)
                entry["sha256"], entry["size"] = hashlib.sha256(data).hexdigest(), len(data)

    rewrite(good_archive, tmp_path / "raw.zip", change)
    bad = with_manifest(tmp_path / "raw.zip", tmp_path / "dangling.zip", fix_checksums)
    pairs_before = PagePair.all_objects.count()

    message = refused(bad)

    assert "data/annotation.screening.jsonl line 1" in message and "'pair'" in message and "987654321" in message
    assert PagePair.all_objects.count() == pairs_before  # the pairs read before the bad row are gone too
    assert not (media / "releases" / "copy").exists()


def test_an_existing_slug_is_refused(good_archive, project):
    with pytest.raises(InvalidInput, match="already exists"):
        services.archive_import_file(path=good_archive, slug=project.slug)


def test_the_import_command_reports_a_refusal_as_an_error(good_archive, project):
    with pytest.raises(CommandError, match="already exists"):
        call_command("project_archive_import", str(good_archive))


def test_an_upload_through_the_api_is_checked_before_it_is_queued_and_not_kept(superuser, tmp_path, media):
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("../../evil.jsonl", b"x")

    response = api_as(superuser).post(
        "/api/archive-imports/", {"file": SimpleUploadedFile("evil.zip", buffer.getvalue())}, format="multipart"
    )

    assert response.status_code == 400
    assert "evil.zip" in response.data["detail"] and "'../../evil.jsonl'" in response.data["detail"]
    assert not ProjectArchive.objects.exists()
    assert not any(path.is_file() for path in (media / "archives").rglob("*"))


def test_a_good_archive_passes_the_checks(good_archive):
    manifest = archive_check(good_archive, name="good.zip")

    assert manifest["project"]["slug"] == "yue-cmn" and manifest["counts"]["annotation.PagePair"] == 1


def test_a_release_file_missing_from_the_archive_is_refused_naming_it(project, annotator, coordinator, tmp_path):
    from exports import services as exports
    from tests.exports.conftest import authored_pair

    authored_pair(project, annotator)
    exports.release_build_now(project=project, user=coordinator, seed=1)
    full = tmp_path / "full.zip"
    services.archive_write_to(project=project, out=full)

    def drop(manifest):
        gone = next(name for name in manifest["members"] if name.endswith("/lead_qa.jsonl"))
        manifest["members"].pop(gone)
        manifest["files"] = [entry for entry in manifest["files"] if entry["member"] != gone]

    raw = rewrite(
        full, tmp_path / "raw.zip", lambda name, data: [] if name.endswith("/lead_qa.jsonl") else [(name, data)]
    )
    bad = with_manifest(raw, tmp_path / "no-file.zip", drop)

    message = refused(bad)

    assert "release v1" in message and "lead_qa.jsonl" in message


def test_an_archive_written_before_the_shared_job_fields_is_read_with_its_old_names(project, tmp_path, media):
    from review.models import AgreementReport
    from wikiqa.models import Collection

    Collection.objects.create(
        project=project, local_wiki="bar", standard_wiki="de", status="done", progress_done=3, progress_total=3
    )
    AgreementReport.objects.create(project=project, status="pending")
    services.archive_write_to(project=project, out=tmp_path / "new.zip")
    old_names = {"progress_done": "done", "progress_total": "total"}

    def change(name: str, data: bytes):
        if name in ("data/wikiqa.collection.jsonl", "data/review.agreementreport.jsonl"):
            rows = [json.loads(line) for line in data.decode().splitlines()]
            for row in rows:
                fields = {key: value for key, value in row["fields"].items() if key not in ("owner", "stage")}
                if name.endswith("collection.jsonl"):
                    fields = {old_names.get(key, key): value for key, value in fields.items()}
                else:  # a report's percent was `progress`, its waiting status "queued"
                    fields.pop("progress_total")
                    fields["progress"], fields["status"] = fields.pop("progress_done"), "queued"
                row["fields"] = fields
            data = "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows).encode()
        return [(name, data)]

    def fix_checksums(manifest):
        import hashlib

        with zipfile.ZipFile(tmp_path / "raw.zip") as raw:
            for member, entry in manifest["members"].items():
                data = raw.read(member)
                entry["sha256"], entry["size"] = hashlib.sha256(data).hexdigest(), len(data)

    rewrite(tmp_path / "new.zip", tmp_path / "raw.zip", change)
    old = with_manifest(tmp_path / "raw.zip", tmp_path / "old.zip", fix_checksums)

    copy, _counts = services.archive_import_file(path=old, slug="copy")

    collection = Collection.objects.get(project=copy)
    assert (collection.status, collection.progress_done, collection.progress_total) == ("done", 3, 3)
    report = AgreementReport.objects.get(project=copy)
    assert report.status == "failed" and "Not finished when the project was archived" in report.error
