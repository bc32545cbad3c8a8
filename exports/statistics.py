"""The study's statistics table and agreement figures of a release, from aggregate queries."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from django.db.models import CharField, Count, F, FilteredRelation, Q, QuerySet, Value
from django.db.models.fields.json import KeyTextTransform
from django.db.models.functions import Coalesce, NullIf

from annotation.models import PagePair, Project, QAItem
from exports.records import release_items

NOT_LABELLED = "not labelled"
AGREEMENT_NOTE_MISSING = "No agreement figures: the review app is not installed."


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


def _by_label(project: Project, items: QuerySet[QAItem], kind: str) -> dict[str, dict[str, int]]:
    """Per label value: QA pages, lead QAs and document QAs. Unlabelled pairs count under "not labelled".

    One grouped query: the review app's final label of the item's pair, else the label
    an imported project brought in its metadata, else "not labelled".
    """
    sources: list[Any] = [NullIf(KeyTextTransform(kind, "pair__metadata__wilova__labels"), Value(""))]
    try:
        from review.models import FinalLabel  # noqa: F401 - the relation below exists only with the review app
    except ImportError:
        pass
    else:  # the review app's final labels win over imported ones; joined, not looked up item by item
        items = items.annotate(final=FilteredRelation("pair__final_labels", condition=Q(pair__final_labels__kind=kind)))
        sources.insert(0, F("final__value"))
    rows = (
        items.annotate(label=Coalesce(*sources, Value(NOT_LABELLED), output_field=CharField()))
        .values("label")
        .annotate(
            qa_pages=Count("pair_id", distinct=True),
            lead_qas=Count("id", filter=Q(kind=QAItem.Kind.LEAD)),
            document_qas=Count("id", filter=Q(kind=QAItem.Kind.DOCUMENT)),
        )
        .order_by("label")
    )
    return {
        row["label"]: {"qa_pages": row["qa_pages"], "lead_qas": row["lead_qas"], "document_qas": row["document_qas"]}
        for row in rows
    }


AGREEMENT_SEED = 20110125
AGREEMENT_BOOTSTRAP = 1000
MAX_AGREEMENT_JUDGMENTS = 300_000  # per scope; beyond, the build would hold too much: the review app's report does it


def release_agreement(project: Project, statuses: Iterable[str]) -> tuple[dict[str, Any] | None, str]:
    """The agreement figures of a release's data, and a note on where they come from.

    A stored project report of the review app is used when it offers one; until
    then the figures are computed here with the review app's own statistics
    (`review.agreement.agreement_summary`): reviewers' verdicts per criterion on
    the released items' revisions, and the labellers' current topic and region
    labels of the project's pairs. Only overall figures are kept: per-rater-pair
    figures would name reviewers, and review is blind.
    """
    report = _review_report(project)
    if report is not None:
        return report, (
            f"The review app's latest agreement report (#{report['report']['id']}, finished "
            f"{report['report']['finished_at']}), without per-rater figures."
        )
    try:
        from review.agreement import agreement_summary
        from review.models import ArticleLabel, Judgment
    except ImportError:
        return None, AGREEMENT_NOTE_MISSING
    statuses = list(statuses)
    released = release_items(project, statuses).values("id")
    judgments = Judgment.objects.filter(item_id__in=released)
    # One pass for every criterion's size: a criterion nobody judged costs no further query.
    judged = dict(judgments.values_list("criterion").annotate(n=Count("id")).order_by())
    scopes: list[tuple[str, Any, list[str], int | None]] = [
        (
            f"review:{criterion['key']}",
            judgments.filter(criterion=criterion["key"]).values_list("revision_id", "reviewer_id", "verdict"),
            ["pass", "flag"],
            judged.get(criterion["key"], 0),
        )
        for criterion in project.review_criteria
    ]
    scopes += [
        (
            f"label:{kind}",
            ArticleLabel.objects.current()
            .filter(pair__project=project, pair__deleted_at__isnull=True, kind=kind)
            .values_list("pair_id", "labeller_id", "value"),
            list(categories),
            None,
        )
        for kind, categories in (("topic", project.topics), ("region", project.regions))
    ]
    figures: dict[str, Any] = {}
    too_large: list[str] = []
    for scope, query, categories, size in scopes:  # one scope in memory at a time
        size = query.count() if size is None else size
        if size < 2:
            continue
        if size > MAX_AGREEMENT_JUDGMENTS:
            too_large.append(scope)
            continue
        rows = list(query)
        if not _has_a_unit_judged_twice(rows):
            continue
        summary = agreement_summary(
            rows,
            "nominal",
            categories=sorted({*categories, *(value for _, _, value in rows)}),
            bootstrap=AGREEMENT_BOOTSTRAP,
            seed=AGREEMENT_SEED,
            pairwise=False,  # overall figures only: per-pair figures would name reviewers, and cost time
        )
        data = summary.to_dict()
        figures[scope] = {"statistics": data["statistics"], "fingerprint": summary.fingerprint}
    skipped = (
        f" Left out, too large to compute while building (over {MAX_AGREEMENT_JUDGMENTS} judgments): "
        f"{', '.join(too_large)}; compute an agreement report in the review app."
        if too_large
        else ""
    )
    if not figures:
        return (
            None,
            "No agreement figures: no released item was reviewed, and no pair labelled, by two people." + skipped,
        )
    note = (
        "Computed at build time with the review app's statistics: nominal level, "
        f"{AGREEMENT_BOOTSTRAP} bootstrap resamples (seed {AGREEMENT_SEED}) for alpha's 95% interval; "
        "review scopes are reviewers' verdicts per criterion on the released items' revisions, "
        "label scopes the labellers' current labels of the project's pairs." + skipped
    )
    return {"scopes": figures}, note


def _has_a_unit_judged_twice(rows: list[tuple[Any, Any, Any]]) -> bool:
    raters: dict[Any, set[Any]] = {}
    for unit, rater, _ in rows:
        raters.setdefault(unit, set()).add(rater)
        if len(raters[unit]) > 1:
            return True
    return False


def _review_report(project: Project) -> dict[str, Any] | None:
    """The latest finished agreement report of the review app (issue 5), made public: no rater is named.

    Looked up by name, so the release keeps working (computing its own figures)
    where the review app has no report model yet.
    """
    from django.apps import apps

    try:
        model = apps.get_model("review", "AgreementReport")
    except LookupError:
        return None
    report = model._default_manager.filter(project=project, status="done").order_by("-finished_at", "-id").first()
    if report is None or not report.result:
        return None
    scopes = {}
    for key, scope in (report.result.get("scopes") or {}).items():
        summary = {**scope.get("summary", {}), "raters": [], "pairs": [], "matrices": {}}
        scopes[key] = {
            "label": scope.get("label", key),
            "statistics": summary.get("statistics", {}),
            "summary": summary,
            "strata": {kind: rows for kind, rows in (scope.get("strata") or {}).items() if kind != "annotator"},
        }
    return {
        "scopes": scopes,
        "report": {
            "id": report.pk,
            "finished_at": report.finished_at.isoformat() if report.finished_at else None,
            "fingerprint": report.fingerprint,
        },
    }
