"""The trivia and entity-question project kinds, registered from this app's `ready()` (`common.kinds`)."""

from __future__ import annotations

from typing import Any

from django.db.models import Count as Counted

from annotation.kind import item_counts
from annotation.models import Project
from common import kinds
from common.kinds import ANNOT, COORD, PUBLIC, READ, REVIEW, Link
from multichoice import jobs, release
from multichoice.entities import entity_review_strata
from multichoice.models import Entity, EntitySettings, TriviaSettings
from multichoice.next_steps import entity_steps, trivia_steps
from multichoice.services.reviews import trivia_review_strata

TRIVIA_NAV = (
    Link("Work", "Write an item", "trivia_item_new", ANNOT),
    Link("Review", "Review queue", "review_queue", REVIEW),
    Link("Review", "Agreement", "agreement", READ),
    Link("Review", "Reviewers", "reviewers", COORD),
    Link("Review", "Tagged translations", "trivia_problems", COORD),
    Link("Review", "Suggested translations", "trivia_suggestions", COORD),
    Link("Review", "Balance", "trivia_balance", COORD),
    Link("Data", "Releases", "release_list", PUBLIC),
    Link("Data", "Items", "trivia_items", COORD),
    Link("Data", "Import", "trivia_import", COORD),
    Link("Settings", "Trivia settings", "trivia_settings", COORD),
    Link("Settings", "Members", "project_members", COORD),
    Link("Settings", "Model endpoints", "endpoint_list", COORD),
)
ENTITY_NAV = (
    Link("Review", "Review queue", "review_queue", REVIEW),
    Link("Review", "Agreement", "agreement", READ),
    Link("Review", "Reviewers", "reviewers", COORD),
    Link("Data", "Releases", "release_list", PUBLIC),
    Link("Settings", "Members", "project_members", COORD),
    Link("Settings", "Model endpoints", "endpoint_list", COORD),
)


def _review_settings(project: Project) -> dict[str, Any]:
    return {
        "reviewers_per_item": project.reviewers_per_item,
        "review_criteria": project.review_criteria,
        "settings_version": project.version,
    }


def trivia_manifest(project: Project) -> dict[str, Any]:
    """A trivia release's manifest: its two languages and categories, no Wikipedia settings."""
    found = TriviaSettings.objects.filter(project=project).first()
    settings = _review_settings(project)
    if found is not None:
        settings |= {
            "source_language": found.source_language,
            "target_language": found.target_language,
            "categories": found.categories,
            "trivia_settings_version": found.version,
        }
    return {"settings": settings}


def entity_manifest(project: Project) -> dict[str, Any]:
    """An entity-question release's manifest: the entity attributes and seed, no Wikipedia settings."""
    found = EntitySettings.objects.filter(project=project).first()
    settings = _review_settings(project)
    if found is not None:
        settings |= {
            "entity_label": found.entity_label,
            "attributes": found.attributes,
            "grouping_fields": found.grouping_fields,
            "seed": found.seed,
            "entity_settings_version": found.version,
        }
    return {"settings": settings}


def entity_counts(project_ids: list[int]) -> dict[int, int]:
    rows = Entity.objects.filter(project_id__in=project_ids).values("project_id").annotate(n=Counted("id"))
    return dict(rows.values_list("project_id", "n"))


def register() -> None:
    kinds.register(
        kinds.ProjectKind(
            value=Project.Kind.TRIVIA,
            name="Trivia",
            home="trivia_home",
            settings="trivia_settings",
            nav=TRIVIA_NAV,
            words=kinds.Words(
                item="trivia item",
                items="trivia items",
                source="Category",
                source_of=lambda item: item.trivia.category,
                source_fields=("trivia__category",),
                source_local=False,
                kind="Subset",
                kind_of=lambda item: item.trivia.get_subset_display(),
                kind_fields=("trivia__subset",),
                kind_filter=False,
            ),
            count=kinds.Count("trivia item", "trivia items", item_counts),
            next_steps=trivia_steps,
            importer=jobs.TRIVIA_IMPORTER,
            review_page="trivia_item",
            item_summary="multichoice/_item_summary.html",
            release_writers=release.release_writers,
            release_units=release.trivia_release_units,
            release_columns=(("Trivia items", release.NAME),),
            manifest_project=trivia_manifest,
            strata=trivia_review_strata,
            history_fields=(("question", "Question"), ("options", "Candidates (✓ correct)")),
        )
    )
    kinds.register(
        kinds.ProjectKind(
            value=Project.Kind.ENTITY_QA,
            name="Entity questions",
            home="entity_home",
            settings="entity_home",
            nav=ENTITY_NAV,
            words=kinds.Words(
                item="question",
                items="questions",
                source="Entity",
                source_of=lambda item: item.entity_question.entity.name,
                source_fields=("entity_question__entity__name",),
                source_local=False,
                kind="Direction",
                kind_of=lambda item: item.entity_question.get_direction_display(),
                kind_fields=("entity_question__direction",),
                kind_filter=False,
            ),
            count=kinds.Count("entity", "entities", entity_counts),
            next_steps=entity_steps,
            importer=jobs.ENTITY_IMPORTER,
            review_page="entity_verify",
            item_summary="multichoice/_entity_summary.html",
            release_writers=release.entity_release_writers,
            release_units=release.entity_release_units,
            release_columns=(("Questions", release.ENTITY_NAME),),
            manifest_project=entity_manifest,
            strata=entity_review_strata,
            history_fields=(("question", "Question"), ("options", "Options (✓ correct)")),
        )
    )
