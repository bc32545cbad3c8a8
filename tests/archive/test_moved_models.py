"""Archives written before models moved out of `annotation` still import.

Account and ApiToken (now `accounts`) are not part of a project archive (archive/registry.py EXCLUDED: they are
about a person, not a project), so an archive written before their move differs from one written now only in the
migrations its manifest records. Collection and CollectionTitle (now `wikiqa`) are part of it: an archive written
before their move names them `annotation.Collection` and `annotation.CollectionTitle`, in members named after
those labels. A label of the old app still resolves to the model's new home (archive/reader.py MOVED_MODELS).
"""

from __future__ import annotations

import hashlib
import json
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from django.apps import apps
from django.core.management import CommandError, call_command

from annotation.models import Project
from archive.reader import MOVED_MODELS
from archive.registry import EXCLUDED, archived_by_label
from tests.archive.canonical import canonical_dump

OLD_LABELS = {"annotation.Account": "accounts.Account", "annotation.ApiToken": "accounts.ApiToken"}
WIKIQA_LABELS = {
    "annotation.Collection": "wikiqa.Collection",
    "annotation.CollectionTitle": "wikiqa.CollectionTitle",
    "annotation.WikiPage": "wikiqa.WikiPage",
}


def rewritten(source: Path, target: Path, change: Callable[[dict[str, Any], dict[str, bytes]], None]) -> Path:
    """A copy of the archive with its manifest (and members) changed, sizes and sha256 kept true."""
    with zipfile.ZipFile(source) as archive:
        manifest = json.loads(archive.read("manifest.json"))
        members = {info.filename: archive.read(info.filename) for info in archive.infolist()}
    del members["manifest.json"]
    change(manifest, members)
    with zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as written:
        for name, data in members.items():
            manifest["members"][name] = {
                **manifest["members"].get(name, {}),
                "size": len(data),
                "sha256": hashlib.sha256(data).hexdigest(),
            }
            written.writestr(name, data)
        written.writestr("manifest.json", json.dumps(manifest))
    return target


def test_the_old_labels_name_the_models_in_accounts_and_the_archive_uses_the_new_ones():
    for old, new in OLD_LABELS.items():
        assert MOVED_MODELS[old] == new
        assert apps.get_model(new)._meta.label == new
        assert new in EXCLUDED and old not in EXCLUDED
    assert not {label for label in archived_by_label() if label.startswith("accounts.")}


def test_an_archive_written_before_accounts_had_an_app_imports(rich_project, media, tmp_path):
    out = tmp_path / "yue.zip"
    call_command("project_archive_export", rich_project.slug, "--out", str(out))

    def before_the_move(manifest: dict[str, Any], members: dict[str, bytes]) -> None:
        assert "accounts" in manifest["migrations"]
        del manifest["migrations"]["accounts"]
        manifest["migrations"]["annotation"] = ["0021_account_created_in_project"]

    old = rewritten(out, tmp_path / "yue-old.zip", before_the_move)
    call_command("project_archive_import", str(old), "--slug", "yue-old")

    before, after = canonical_dump(rich_project), canonical_dump(Project.objects.get(slug="yue-old"))
    assert after == before


@pytest.mark.parametrize("label", sorted(OLD_LABELS))
def test_an_archive_naming_a_person_model_by_its_old_label_is_read_as_the_new_one_and_refused(
    label, rich_project, media, tmp_path
):
    """Credentials and account flags never come in with a project, under the old label or the new one."""
    out = tmp_path / "yue.zip"
    call_command("project_archive_export", rich_project.slug, "--out", str(out))
    member = f"data/{label.lower()}.jsonl"

    def with_rows_of(manifest: dict[str, Any], members: dict[str, bytes]) -> None:
        members[member] = b""
        manifest["models"].append({"model": label, "member": member, "rows": 0, "max_pk": 0})

    tampered = rewritten(out, tmp_path / "tampered.zip", with_rows_of)
    with pytest.raises(CommandError, match=f"holds {OLD_LABELS[label]}, which this server does not have"):
        call_command("project_archive_import", str(tampered), "--slug", "tampered")
    assert not Project.objects.filter(slug="tampered").exists()


def test_the_old_labels_name_the_models_in_wikiqa_and_the_archive_uses_the_new_ones():
    for old, new in WIKIQA_LABELS.items():
        assert MOVED_MODELS[old] == new
        assert apps.get_model(new)._meta.label == new
    archived = set(archived_by_label())
    assert {"wikiqa.Collection", "wikiqa.CollectionTitle"} <= archived
    assert not {old for old in WIKIQA_LABELS if old in archived}
    assert "wikiqa.WikiPage" in EXCLUDED and "annotation.WikiPage" not in EXCLUDED  # a server-wide cache


def test_an_archive_written_before_the_collections_moved_to_wikiqa_imports(rich_project, media, tmp_path):
    out = tmp_path / "yue.zip"
    call_command("project_archive_export", rich_project.slug, "--out", str(out))
    moved = {new: old for old, new in WIKIQA_LABELS.items()}

    def before_the_move(manifest: dict[str, Any], members: dict[str, bytes]) -> None:
        assert "wikiqa" in manifest["migrations"]
        del manifest["migrations"]["wikiqa"]
        manifest["migrations"]["annotation"] = ["0024_gold_flagged_event_and_revision"]
        renamed = 0
        for entry in manifest["models"]:
            if entry["model"] in moved:
                old_member = f"data/{moved[entry['model']].lower()}.jsonl"
                members[old_member] = members.pop(entry["member"])
                manifest["members"][old_member] = manifest["members"].pop(entry["member"])
                entry["model"], entry["member"] = moved[entry["model"]], old_member
                renamed += 1
        assert renamed == 2  # the collection and its titles

    old = rewritten(out, tmp_path / "yue-old.zip", before_the_move)
    with zipfile.ZipFile(old) as archive:
        assert "data/annotation.collection.jsonl" in archive.namelist()
    call_command("project_archive_import", str(old), "--slug", "yue-old")

    imported = Project.objects.get(slug="yue-old")
    assert imported.collections.count() == rich_project.collections.count() == 1
    assert canonical_dump(imported) == canonical_dump(rich_project)
