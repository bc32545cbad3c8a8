"""The validation project kind, registered from this app's `ready()` (`common.kinds`)."""

from __future__ import annotations

from typing import Any

from annotation.kind import item_counts
from annotation.models import Project
from common import kinds
from common.kinds import COORD, PUBLIC, Link
from validation.agreement import validation_scopes
from validation.models import ValidationSettings
from validation.next_steps import validation_steps
from validation.release import NAME, release_writers
from validation.services import UPLOAD_IMPORTER, validation_release_units

NAV = (
    Link("Review", "Duplicates", "validation_duplicates", COORD),
    Link("Review", "Agreement", "validation_agreement", COORD),
    Link("Review", "Model suggestions", "validation_suggestions", COORD),
    Link("Data", "Releases", "release_list", PUBLIC),
    Link("Data", "Items", "validation_items", COORD),
    Link("Data", "Import", "validation_import", COORD),
    Link("Data", "Seed queries", "validation_seeds", COORD),
    Link("Data", "Drafted seed queries", "validation_seed_drafts", COORD),
    Link("Data", "Search collection", "validation_search", COORD),
    Link("Data", "Domains", "validation_domains", COORD),
    Link("Settings", "Validation settings", "validation_settings", COORD),
    Link("Settings", "Members", "project_members", COORD),
    Link("Settings", "Model endpoints", "endpoint_list", COORD),
)


def manifest_project(project: Project) -> dict[str, Any]:
    """A validation release's manifest: the validation settings, no Wikipedia ones."""
    found = ValidationSettings.objects.filter(project=project).first()
    settings: dict[str, Any] = {"reviewers_per_item": project.reviewers_per_item, "settings_version": project.version}
    if found is not None:
        settings |= {
            "location": found.location,
            "tasks": found.tasks,
            "likert_criteria": found.likert_criteria,
            "duplicate_threshold": found.duplicate_threshold,
            "validation_settings_version": found.version,
        }
    return {"settings": settings}


def register() -> None:
    kinds.register(
        kinds.ProjectKind(
            value=Project.Kind.VALIDATION,
            name="Validation",
            home="validation_home",
            settings="validation_settings",
            nav=NAV,
            words=kinds.Words(item="QA pair", items="QA pairs", source="Source", source_of=lambda item: ""),
            count=kinds.Count("QA pair", "QA pairs", item_counts),
            importer=UPLOAD_IMPORTER,
            next_steps=validation_steps,
            release_writers=release_writers,
            release_units=validation_release_units,
            release_columns=(("QA pairs", NAME),),
            manifest_project=manifest_project,
            scopes=validation_scopes,
            history_fields=(("question", "Question"), ("answer_standard", "Answer")),
        )
    )
