"""No model of ours escapes the archive: each is archived (found from its keys) or excluded with a reason."""

from __future__ import annotations

from django.apps import apps

from archive.registry import EXCLUDED, ID_LISTS, ID_WATERMARKS, TYPED_IDS, archived_models, local_models


def test_every_local_model_is_archived_or_excluded_with_a_reason():
    archived = {entry.label for entry in archived_models()}
    missing = sorted(m._meta.label for m in local_models() if m._meta.label not in archived | set(EXCLUDED))

    assert not missing, (
        f"These models are neither in the project archive nor in archive.registry.EXCLUDED: {missing}. "
        "Give each a foreign key that leads to its project, or exclude it with the reason."
    )


def test_the_local_apps_are_found_and_their_work_is_archived():
    labels = {model._meta.app_label for model in local_models()}
    archived = {entry.label for entry in archived_models()}

    assert {"annotation", "review", "exports", "validation", "multichoice", "archive"} <= labels
    assert {"annotation.QAItemRevision", "review.Judgment", "exports.Release"} <= archived
    assert not {"auth", "contenttypes", "sessions", "authtoken"} & labels


def test_exclusions_name_models_that_exist_and_say_why():
    for label, reason in EXCLUDED.items():
        assert apps.get_model(label) is not None
        assert len(reason) > 20, label
        assert label not in {entry.label for entry in archived_models()}


def test_ids_inside_values_name_existing_fields_of_archived_models():
    archived = {entry.label: entry.model for entry in archived_models()}
    for rules in (ID_LISTS, ID_WATERMARKS):
        for label, fields in rules.items():
            assert label in archived, label
            for field, target in fields.items():
                archived[label]._meta.get_field(field)
                assert target in archived, target
    for label, (type_field, id_field, _) in TYPED_IDS.items():
        archived[label]._meta.get_field(type_field)
        archived[label]._meta.get_field(id_field)


def test_rows_come_after_the_rows_they_name():
    seen: set[str] = set()
    for entry in archived_models():
        for key in entry.references:
            assert key.related_model._meta.label in seen, f"{entry.label}.{key.name}"
        seen.add(entry.label)
