"""The study's statistics table and agreement figures of a release, from aggregate queries."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from django.db.models import Count, F, Q

from annotation.models import PagePair, Project, QAItem
from exports.records import release_items

NOT_LABELLED = "not labelled"
AGREEMENT_NOTE_MISSING = "No agreement report is available: the review app does not offer one yet."


def release_statistics(project: Project, statuses: Iterable[str]) -> dict[str, Any]:
    """Pairs collected, local-heavy, inspected, excluded by reason, QA pages, lead and document QAs; by label."""
    statuses = list(statuses)
    pairs = PagePair.objects.filter(project=project)
    heavy = Q(local_lead_length__gt=F("standard_lead_length")) & (
        Q(local_text_length__isnull=True)
        | Q(standard_text_length__isnull=True)
        | Q(local_text_length__gt=F("standard_text_length"))
    )
    totals = pairs.aggregate(
        collected=Count("id"),
        local_heavy=Count("id", filter=heavy),
        inspected=Count("id", filter=~Q(screening_decision="")),
    )
    excluded = dict(
        pairs.filter(status=PagePair.Status.EXCLUDED)
        .values_list("screening_decision")
        .annotate(n=Count("id"))
        .order_by("screening_decision")
    )
    items = release_items(project, statuses)
    kinds = dict(items.values_list("kind").annotate(n=Count("id")).order_by())
    table = {
        "pairs_collected": totals["collected"],
        "local_heavy": totals["local_heavy"],
        "inspected": totals["inspected"],
        "excluded": sum(excluded.values()),
        "excluded_by_reason": {reason or "unknown": n for reason, n in excluded.items()},
        "qa_pages": items.values("pair_id").distinct().count(),
        "lead_qas": kinds.get(QAItem.Kind.LEAD, 0),
        "document_qas": kinds.get(QAItem.Kind.DOCUMENT, 0),
    }
    table["by_topic"] = _by_label(project, items, "topic")
    table["by_region"] = _by_label(project, items, "region")
    return table


def _by_label(project: Project, items, kind: str) -> dict[str, dict[str, int]]:  # type: ignore[no-untyped-def]
    """Per label value: QA pages, lead QAs and document QAs. Unlabelled pairs count under "not labelled"."""
    try:
        from review.models import FinalLabel
    except ImportError:
        labels: dict[int, str] = {}
    else:
        labels = dict(
            FinalLabel.objects.filter(pair__project=project, kind=kind).values_list("pair_id", "value").iterator()
        )
    rows: dict[str, dict[str, Any]] = {}
    for pair_pk, item_kind, n in items.values_list("pair_id", "kind").annotate(n=Count("id")).order_by().iterator():
        value = labels.get(pair_pk, NOT_LABELLED)
        row = rows.setdefault(value, {"qa_pages": set(), "lead_qas": 0, "document_qas": 0})
        row["qa_pages"].add(pair_pk)
        row["lead_qas" if item_kind == QAItem.Kind.LEAD else "document_qas"] += n
    return {
        value: {"qa_pages": len(row["qa_pages"]), "lead_qas": row["lead_qas"], "document_qas": row["document_qas"]}
        for value, row in sorted(rows.items())
    }


def release_agreement(project: Project) -> tuple[dict[str, Any] | None, str]:
    """The review app's agreement report of the project, and a note; (None, why) when there is none."""
    try:
        from review import agreement  # type: ignore[attr-defined]
    except ImportError:
        return None, AGREEMENT_NOTE_MISSING
    report = getattr(agreement, "project_agreement_report", None)
    if report is None:
        return None, AGREEMENT_NOTE_MISSING
    return report(project=project), "Agreement figures from the review app, at the time the release was built."
