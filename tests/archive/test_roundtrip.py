"""Export a project and import it again: every row of every archived model, and every release file, identical."""

from __future__ import annotations

import hashlib
import json
import zipfile
from pathlib import Path
from typing import Any

from django.apps import apps
from django.contrib.auth import get_user_model
from django.core.management import call_command

from annotation.models import Project
from annotation.services.members import membership_set
from archive import services
from archive.registry import archived_models
from exports.models import Release
from tests.archive.canonical import canonical_dump


def release_files(project: Project, media: Path) -> dict[tuple[int, str], bytes]:
    return {
        (release.version, entry["name"]): (media / release.path / entry["name"]).read_bytes()
        for release in Release.objects.filter(project=project).exclude(path="")
        for entry in release.files
    }


def test_a_project_exported_and_imported_under_a_new_slug_is_identical_row_for_row(rich_project, media, tmp_path):
    out = tmp_path / "yue.zip"
    call_command("project_archive_export", rich_project.slug, "--out", str(out))

    call_command("project_archive_import", str(out), "--slug", "yue-copy")

    copy = Project.objects.get(slug="yue-copy")
    before, after = canonical_dump(rich_project), canonical_dump(copy)
    assert {label: len(rows) for label, rows in after.items()} == {label: len(rows) for label, rows in before.items()}
    for entry in archived_models():
        assert after[entry.label] == before[entry.label], entry.label
    assert copy.pk != rich_project.pk  # the ids were taken: new ones, keys translated
    assert copy.name == rich_project.name and copy.created_at == rich_project.created_at


def test_an_archive_written_while_item_events_lived_in_review_still_imports(rich_project, media, tmp_path):
    out, old = tmp_path / "yue.zip", tmp_path / "yue-old.zip"
    call_command("project_archive_export", rich_project.slug, "--out", str(out))
    new_member, old_member = "data/annotation.itemevent.jsonl", "data/review.itemevent.jsonl"
    with zipfile.ZipFile(out) as archive, zipfile.ZipFile(old, "w", zipfile.ZIP_DEFLATED) as written:
        manifest = json.loads(archive.read("manifest.json"))
        for entry in manifest["models"]:
            if entry["model"] == "annotation.ItemEvent":
                entry["model"], entry["member"] = "review.ItemEvent", old_member
        manifest["members"][old_member] = manifest["members"].pop(new_member)
        for info in archive.infolist():
            if info.filename != "manifest.json":
                name = old_member if info.filename == new_member else info.filename
                written.writestr(name, archive.read(info.filename))
        written.writestr("manifest.json", json.dumps(manifest))

    call_command("project_archive_import", str(old), "--slug", "yue-old")

    copy = Project.objects.get(slug="yue-old")
    assert canonical_dump(copy)["annotation.ItemEvent"] == canonical_dump(rich_project)["annotation.ItemEvent"]


def test_the_rich_project_has_rows_in_the_models_that_matter(rich_project):
    """The round trip proves something only if the world has rows where the work is."""
    dump = canonical_dump(rich_project)
    for label in [
        "annotation.Membership",
        "annotation.PagePair",
        "annotation.Screening",
        "annotation.QAItem",
        "annotation.QAItemRevision",
        "annotation.EvidenceSpan",
        "annotation.ImportJob",
        "wikiqa.Collection",
        "wikiqa.CollectionTitle",
        "review.ReviewerLanguages",
        "review.ReviewSlot",
        "review.Judgment",
        "annotation.ItemEvent",
        "review.Verification",
        "review.ArticleLabel",
        "review.FinalLabel",
        "review.AgreementReport",
        "exports.Release",
        "exports.ExportSettings",
    ]:
        assert dump[label], f"no {label} rows in the test world"
    assert any(row["deleted_at"] for row in dump["annotation.QAItem"])  # soft-deleted work travels too
    assert any(row["superseded_at"] is None for row in dump["review.ArticleLabel"])


def test_release_files_are_byte_identical_and_listed_with_their_sha256(rich_project, media, tmp_path):
    out = tmp_path / "yue.zip"
    call_command("project_archive_export", rich_project.slug, "--out", str(out))
    with zipfile.ZipFile(out) as archive:
        manifest = json.loads(archive.read("manifest.json"))
    assert manifest["files"] and all(member["sha256"] for member in manifest["members"].values())

    call_command("project_archive_import", str(out), "--slug", "yue-copy")

    copy = Project.objects.get(slug="yue-copy")
    originals, copies = release_files(rich_project, media), release_files(copy, media)
    assert originals and copies == originals
    release = Release.objects.get(project=copy, version=1)
    assert release.path == "releases/yue-copy/v1" and release.is_published


def test_people_are_matched_by_username_and_no_password_or_privilege_travels(rich_project, tmp_path):
    out = tmp_path / "yue.zip"
    services.archive_write_to(project=rich_project, out=out)
    with zipfile.ZipFile(out) as archive:
        people = [json.loads(line) for line in archive.read("users.jsonl").splitlines()]
    assert {"annotator", "reviewer", "coordinator", "coordinator2"} <= {person["username"] for person in people}
    assert all(set(person) <= {"username", "first_name", "last_name", "email", "date_joined"} for person in people)
    users_before = get_user_model().objects.count()

    services.archive_import_file(path=out, slug="yue-copy")

    assert get_user_model().objects.count() == users_before  # everyone matched on this server


def _round_trip(project: Project, tmp_path: Path) -> Project:
    out = tmp_path / f"{project.slug}.zip"
    services.archive_write_to(project=project, out=out)
    copy, _ = services.archive_import_file(path=out, slug=f"{project.slug}-copy")
    return copy


def _assert_identical(project: Project, copy: Project, *, needs: list[str]) -> None:
    before, after = canonical_dump(project), canonical_dump(copy)
    for label in needs:
        assert before[label], f"no {label} rows in the test world"
    for entry in archived_models():
        assert after[entry.label] == before[entry.label], entry.label


def _judged_validation_project(coordinator, validators: list[Any]) -> Project:
    from tests.validation.conftest import COLLECTED_TSV, tsv_source
    from tests.validation.test_services import ALL_TASKS
    from validation import services as validation

    project = validation.validation_project_create(
        name="Qatar validation", slug="qa-eng", language="eng", location="Qatar", created_by=coordinator
    )
    for person in validators:
        membership_set(project=project, user=person, roles={"reviewer"})
    report = validation.validation_items_import(project=project, source=tsv_source(COLLECTED_TSV), user=coordinator)
    assert report.ok, report.problems
    for person, answer in zip(validators, ("Machboos.", None), strict=True):
        slot = validation.validation_claim_next(project=project, user=person)
        assert slot is not None
        data = {**ALL_TASKS, "answer": answer} if answer else ALL_TASKS
        validation.validation_submit(slot=slot, user=person, version=slot.version, data=data)
    return project


def test_a_validation_project_with_judgments_and_duplicates_round_trips(
    coordinator, reviewer, second_reviewer, tmp_path
):
    project = _judged_validation_project(coordinator, [reviewer, second_reviewer])

    copy = _round_trip(project, tmp_path)

    _assert_identical(
        project,
        copy,
        needs=["validation.ValidationItem", "validation.ValidationJudgment", "validation.ValidationSettings"],
    )
    # A key to a row of the same table (set after the rows are in) came through.
    assert any(row["duplicate_of_id"] for row in canonical_dump(copy)["validation.ValidationItem"])


def test_an_entity_question_project_round_trips_with_its_distractors_translated(coordinator, reviewer, tmp_path):
    from multichoice import entities
    from tests.multichoice.test_entities import ATTRIBUTES, CSV

    project = entities.entity_project_create(
        name="Companies", slug="companies", language="eng", attributes=ATTRIBUTES, seed=11, created_by=coordinator
    )
    entities.entities_import(project=project, data=CSV.encode(), name="companies.csv")
    entities.questions_generate(project=project)

    copy = _round_trip(project, tmp_path)

    _assert_identical(project, copy, needs=["multichoice.Entity", "multichoice.EntityQuestion"])


def test_a_trivia_project_with_reviews_and_a_flagged_translation_round_trips(
    coordinator, annotator, second_annotator, reviewer, tmp_path
):
    from annotation.services.members import membership_set
    from multichoice.services.items import trivia_item_create
    from multichoice.services.projects import trivia_project_create
    from multichoice.services.reviews import trivia_review
    from multichoice.services.translation import translation_claim_next, translation_submit
    from tests.multichoice.conftest import CATEGORIES, item_values

    project = trivia_project_create(
        name="Basque trivia",
        slug="basque-trivia",
        source_language="eus",
        target_language="eng",
        categories=CATEGORIES,
        created_by=coordinator,
    )
    for person, role in ((annotator, "annotator"), (second_annotator, "annotator"), (reviewer, "reviewer")):
        membership_set(project=project, user=person, roles={role})
    item = trivia_item_create(project=project, user=annotator, **item_values())
    trivia_review(item=item, user=reviewer, criteria={c["key"]: True for c in project.review_criteria})
    trivia_item_create(project=project, user=annotator, **item_values(question="Where is Lekeitio?"))
    claimed = translation_claim_next(project=project, user=second_annotator)
    translation_submit(
        item=claimed,
        user=second_annotator,
        target_question="Where is Atxondo?",
        target_candidates=["In Biscay", "In Gipuzkoa", "In Navarre"],
        problem_tags=["outdated"],
        problem_note="Boundaries changed?",
    )

    copy = _round_trip(project, tmp_path)

    _assert_identical(project, copy, needs=["multichoice.TriviaItem", "review.Judgment", "annotation.QAItemRevision"])


def _without_their_project(out: Path, old: Path, models: list[str]) -> int:
    """`out` written again as `old`, as an archive from before `models` named their project: the key left out of
    every row of theirs. Returns how many rows lost it."""
    members = {f"data/{label.lower()}.jsonl" for label in models}
    stripped = 0
    with zipfile.ZipFile(out) as archive, zipfile.ZipFile(old, "w", zipfile.ZIP_DEFLATED) as written:
        manifest = json.loads(archive.read("manifest.json"))
        for info in archive.infolist():
            if info.filename == "manifest.json":
                continue
            if info.filename not in members:
                written.writestr(info.filename, archive.read(info.filename))
                continue
            lines = [json.loads(line) for line in archive.read(info.filename).decode().splitlines()]
            assert all("project" in line["fields"] for line in lines)
            for line in lines:
                del line["fields"]["project"]
            stripped += len(lines)
            data = "".join(json.dumps(line) + "\n" for line in lines).encode()
            manifest["members"][info.filename] |= {"size": len(data), "sha256": hashlib.sha256(data).hexdigest()}
            written.writestr(info.filename, data)
        written.writestr("manifest.json", json.dumps(manifest))
    return stripped


def _assert_imported_with_their_project(project: Project, copy: Project, models: list[str]) -> None:
    before, after = canonical_dump(project), canonical_dump(copy)
    for label in models:
        assert before[label], f"no {label} rows in the test world"
        model = apps.get_model(label)
        assert set(model.objects.filter(project=copy).values_list("project_id", flat=True)) == {copy.pk}
        assert model.objects.filter(project=copy).count() == len(before[label]), label
        assert after[label] == before[label], label


# Review slots name their project since review 0006, judgments and labels since review 0008, screening decisions
# since annotation 0026: an older archive leaves the key out, and the import gives its rows the project it makes.
CARRY_THEIR_PROJECT = [
    "review.ReviewSlot",
    "review.Judgment",
    "review.ArticleLabel",
    "review.FinalLabel",
    "annotation.Screening",
]


def test_an_archive_written_before_rows_named_their_project_still_imports(rich_project, media, tmp_path):
    out, old = tmp_path / "yue.zip", tmp_path / "yue-old.zip"
    call_command("project_archive_export", rich_project.slug, "--out", str(out))
    assert _without_their_project(out, old, CARRY_THEIR_PROJECT)

    call_command("project_archive_import", str(old), "--slug", "yue-old")

    copy = Project.objects.get(slug="yue-old")
    _assert_imported_with_their_project(rich_project, copy, CARRY_THEIR_PROJECT)


def test_a_validation_archive_written_before_judgments_named_their_project_still_imports(
    coordinator, reviewer, second_reviewer, tmp_path
):
    """Validation judgments, suggestions and their uses name their project since validation 0008."""
    project = _judged_validation_project(coordinator, [reviewer, second_reviewer])
    out, old = tmp_path / "qa.zip", tmp_path / "qa-old.zip"
    services.archive_write_to(project=project, out=out)
    models = ["validation.ValidationJudgment", "validation.Suggestion", "validation.SuggestionUse"]
    assert _without_their_project(out, old, models)

    copy, _ = services.archive_import_file(path=old, slug="qa-old")

    _assert_imported_with_their_project(project, copy, ["validation.ValidationJudgment"])
    _assert_identical(project, copy, needs=["validation.ValidationJudgment"])
