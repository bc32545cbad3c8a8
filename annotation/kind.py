"""The Wikipedia QA project kind, as this app registers it (`common.kinds`); wikiqa adds its importer, review its
next steps and exports its release writers, because those parts live above this app."""

from __future__ import annotations

from typing import Any

from django.db.models import Count as Counted

from annotation.models import PagePair, Project, QAItem
from common import kinds
from common.kinds import ALL, ANNOT, COORD, PUBLIC, READ, REVIEW, Link

NAV = (
    Link("Work", "Guidelines", "project_guidelines", ALL),
    Link("Work", "My items", "my_items", ANNOT),
    Link("Review", "Review queue", "review_queue", REVIEW),
    Link("Review", "Agreement", "agreement", READ),
    Link("Review", "Dashboard", "dashboard", COORD),
    Link("Review", "Labels", "label_list", COORD),
    Link("Review", "Reviewers", "reviewers", COORD),
    Link("Data", "Releases", "release_list", PUBLIC),
    Link("Data", "Pairs", "pair_list", COORD),
    Link("Data", "Items", "item_list", COORD),
    Link("Data", "Import", "import_start", COORD),
    Link("Data", "Collect", "collection_start", COORD),
    Link("Data", "Deleted", "deleted_list", COORD),
    Link("Data", "Archive", "project_archives", COORD),
    Link("Settings", "Settings", "project_settings", COORD),
    Link("Settings", "Members", "project_members", COORD),
    Link("Settings", "Model endpoints", "endpoint_list", COORD),
    Link("Settings", "Audit log", "audit_project", COORD),
)


def _counts(rows: Any) -> dict[int, int]:
    return dict(rows.values("project_id").annotate(n=Counted("id")).values_list("project_id", "n"))


def pair_counts(project_ids: list[int]) -> dict[int, int]:
    return _counts(PagePair.objects.filter(project_id__in=project_ids))


def item_counts(project_ids: list[int]) -> dict[int, int]:
    """Live QA items per project: the count of kinds whose work is items rather than page pairs."""
    return _counts(QAItem.objects.alive().filter(project_id__in=project_ids))


def wikipedia_manifest_project(project: Project) -> dict[str, Any]:
    """What a Wikipedia QA release's manifest says of its project beyond name and languages."""
    return {
        "local_wiki": project.local_wiki,
        "standard_wiki": project.standard_wiki,
        "settings": {
            "lead_qa_min": project.lead_qa_min,
            "lead_qa_max": project.lead_qa_max,
            "collect_document_qa": project.collect_document_qa,
            "reviewers_per_item": project.reviewers_per_item,
            "review_criteria": project.review_criteria,
            "topics": project.topics,
            "regions": project.regions,
            "settings_version": project.version,
        },
    }


def register() -> None:
    kinds.register(
        kinds.ProjectKind(
            value=Project.Kind.WIKIPEDIA_QA,
            name="Wikipedia QA",
            home="project_detail",
            settings="project_settings",
            nav=NAV,
            count=kinds.Count("page pair", "page pairs", pair_counts),
            release_columns=(("Lead QAs", "lead_qa"), ("Document QAs", "document_qa")),
            manifest_project=wikipedia_manifest_project,
            prompt_templates=True,
        )
    )
