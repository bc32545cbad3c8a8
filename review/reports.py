"""Project agreement reports: gather every judgment from the database, compute every statistic, store it.

Views, the API, `manage.py agreement_compute SLUG`, the Celery task and the
review service (after each review) call these functions; the maths is
`review.agreement`, which never sees the ORM.

What a report measures, one *scope* each (the names the release card uses too):

* `review:<criterion>`: reviewers' pass/flag verdicts per criterion; a unit is
  one revision of an item (the round of reviewers who judged the same text).
  Strata: the pair's final topic and region, and the item's author; a project kind
  adds its own (`common.kinds.ProjectKind.strata`; trivia: category, subset, difficulty).
* `label:topic`, `label:region`: the labellers' current (raw, pre-adjudication)
  labels; a unit is a page pair.
* `screening`: screening decisions of pairs screened by more than one person
  (each person's latest decision); a unit is a page pair.

New judgment kinds (Likert scores, best-answer choices of validation projects)
are one more gatherer in `SCOPE_GATHERERS`, with their level of measurement.

Background work follows the house rules: a report row is queued, a worker
claims it with a conditional update (a retry or a second delivery finds
nothing to claim), progress and errors are written to the row. When the data
fingerprint equals the latest done report's, nothing is recomputed: the
report reuses that result and says so (`same_as`).
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections import defaultdict
from collections.abc import Callable, Hashable, Iterable
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import User
from django.core.cache import cache
from django.db import IntegrityError, transaction
from django.db.models import Max, Q
from django.http import Http404
from django.utils import timezone

from annotation.access import AnyUser, ProjectAccess, project_access
from annotation.models import Membership, Project, QAItem, Role, Screening, deleted_items, deleted_pairs
from common import kinds as project_kinds
from common.jobs import JobLost, JobRun, job_claim, job_enqueue, job_expire_stale, pause_between_steps, stale_seconds
from review.agreement import (
    CSV_HEADER,
    DEFAULT_SEED,
    NO_STRATUM,
    Level,
    agreement_summary,
    judgments_fingerprint,
    rating_table,
    strata_statistics,
    summary_csv_rows,
)
from review.models import ArticleLabel, FinalLabel, Judgment, LabelKind
from review.models_reports import AgreementReport, ReportQuerySet

log = logging.getLogger(__name__)

SCHEMA_VERSION = 1
BOOTSTRAP = 1000
SEED = DEFAULT_SEED
STRATA = ("topic", "region", "annotator")
CONTESTED_SHOWN = 50
LOST_ERROR = "The computation stopped without finishing (its worker was lost). Compute again."


def auto_after_judgments() -> int:
    """New judgments since the last report that queue a report by themselves (0 turns it off)."""
    return int(getattr(settings, "AGREEMENT_AUTO_JUDGMENTS", 50))


def auto_countdown() -> int:
    """Seconds a automatically queued report waits, so a burst of reviews lands in one computation."""
    return int(getattr(settings, "AGREEMENT_AUTO_COUNTDOWN", 60))


# Access


AGREEMENT_READERS = (Role.COORDINATOR, Role.REVIEWER, Role.RESEARCHER)


def agreement_access(user: AnyUser, slug: str) -> ProjectAccess:
    """Agreement figures are for coordinators, reviewers and researchers; non-members 404, other members 403."""
    return project_access(user, slug, role=AGREEMENT_READERS)


def get_report_for_user(user: AnyUser, slug: str, report_id: int) -> tuple[ProjectAccess, AgreementReport]:
    access = agreement_access(user, slug)
    report = AgreementReport.objects.filter(project=access.project, pk=report_id).first()
    if report is None:
        raise Http404("No such agreement report in this project.")
    report.project = access.project
    return access, report


def sees_rater_names(membership: Membership) -> bool:
    """Coordinators see per-rater figures (pair matrix, annotator strata); reviewers and researchers see the
    project's figures only."""
    return membership.is_coordinator


def result_for_viewer(result: dict[str, Any], membership: Membership) -> dict[str, Any]:
    """The stored result as this viewer may see it: reviewers get it without who-agrees-with-whom."""
    if sees_rater_names(membership) or not result:
        return result
    scopes = {}
    for key, scope in result.get("scopes", {}).items():
        summary = {
            **scope["summary"],
            "raters": [],
            "pairs": [],
            "matrices": {},
        }
        strata = {kind: rows for kind, rows in scope.get("strata", {}).items() if kind != "annotator"}
        scopes[key] = {**scope, "summary": summary, "strata": strata}
    return {**result, "scopes": scopes, "redacted": "Per-rater figures are shown to coordinators only."}


# Gathering judgments


@dataclass
class Scope:
    key: str
    kind: str  # review | label | screening
    label: str
    level: Level
    categories: list[Any]
    unit: str  # what a unit is: "revision" or "pair"
    judgments: list[tuple[Hashable, Hashable, Any]] = field(default_factory=list)  # (unit, rater name or id, value)
    strata: dict[str, dict[Hashable, str]] = field(default_factory=dict)
    links: dict[Hashable, dict[str, int]] = field(default_factory=dict)  # unit -> {"item_id"/"pair_id": id}
    notes: list[str] = field(default_factory=list)
    # Figures beside the agreement statistics ({name, label, value, note}): a Likert criterion's mean and spread,
    # the better-answer choice's position bias. Part of the fingerprint.
    figures: list[dict[str, Any]] = field(default_factory=list)


def _usernames(ids: Iterable[int | None]) -> dict[int, str]:
    wanted = {pk for pk in ids if pk is not None}
    if not wanted:
        return {}
    return dict(get_user_model().objects.filter(pk__in=wanted).values_list("pk", "username"))


def _final_labels(project: Project) -> dict[str, dict[int, str]]:
    finals: dict[str, dict[int, str]] = {kind: {} for kind in LabelKind.values}
    deleted = deleted_pairs(project)
    for pair_id, kind, value in FinalLabel.objects.filter(project=project).values_list("pair_id", "kind", "value"):
        if pair_id not in deleted:
            finals[kind][pair_id] = value
    return finals


def _review_scopes(project: Project) -> list[Scope]:
    deleted = deleted_items(project)
    rows = [
        row
        for row in Judgment.objects.filter(project=project, reviewer__isnull=False)
        .order_by()
        .values_list("criterion", "revision_id", "item_id", "reviewer_id", "verdict")
        if row[2] not in deleted
    ]
    names = _usernames(reviewer for _, _, _, reviewer, _ in rows)
    items = {
        pk: (pair_id, author or "(unknown)")
        for pk, pair_id, author in QAItem.objects.filter(project=project)
        .order_by()
        .values_list("id", "pair_id", "author__username")
    }
    finals = _final_labels(project)
    labels = {criterion["key"]: criterion["label"] for criterion in project.review_criteria}
    keys = list(labels) + sorted({criterion for criterion, *_ in rows} - set(labels))
    scopes = {
        key: Scope(
            key=f"review:{key}",
            kind="review",
            label=labels.get(key, key),
            level="nominal",
            categories=list(Judgment.Verdict.values),
            unit="revision",
            strata={name: {} for name in STRATA},
        )
        for key in keys
    }
    for criterion, revision_id, item_id, reviewer_id, verdict in rows:
        scope = scopes[criterion]
        scope.judgments.append((revision_id, names[reviewer_id], verdict))
        if revision_id not in scope.links:
            pair_id, author = items[item_id]
            scope.links[revision_id] = {"item_id": item_id, "pair_id": pair_id}
            scope.strata["topic"][revision_id] = finals[LabelKind.TOPIC].get(pair_id, NO_STRATUM)
            scope.strata["region"][revision_id] = finals[LabelKind.REGION].get(pair_id, NO_STRATUM)
            scope.strata["annotator"][revision_id] = author
    kind_strata = project_kinds.of(project).strata
    if kind_strata is not None:
        extra = kind_strata(project)
        for scope in scopes.values():
            for name, by_item in extra.items():
                scope.strata[name] = {
                    unit: by_item.get(link["item_id"], NO_STRATUM) for unit, link in scope.links.items()
                }
    return list(scopes.values())


def _independent_labels(project: Project) -> list[tuple[str, int, int, str]]:
    """(kind, pair, labeller, value): each labeller's label as it stood when the pair's labelling was complete.

    Until `labellers_per_pair` labellers are done a labeller sees only their own
    labels; once the pair is complete everyone's are shown, so a relabel after
    that moment is no longer independent and is not what agreement measures.
    Pairs not complete yet count with their current labels; a labeller who came
    after completion counts with their first label.
    """
    needed = project.labellers_per_pair
    history: dict[int, dict[int, dict[str, list[tuple[Any, str]]]]] = defaultdict(
        lambda: defaultdict(lambda: defaultdict(list))
    )
    deleted = deleted_pairs(project)
    for kind, pair_id, labeller_id, value, created_at in (
        ArticleLabel.objects.filter(project=project)
        .order_by("created_at", "id")
        .values_list("kind", "pair_id", "labeller_id", "value", "created_at")
    ):
        if pair_id not in deleted:
            history[pair_id][labeller_id][kind].append((created_at, value))
    out = []
    for pair_id, labellers in history.items():
        done = sorted(
            max(kinds[kind][0][0] for kind in LabelKind.values)
            for kinds in labellers.values()
            if all(kinds.get(kind) for kind in LabelKind.values)
        )
        complete = done[needed - 1] if len(done) >= needed else None
        for labeller_id, kinds in labellers.items():
            for kind, rows in kinds.items():
                if complete is None:
                    value = rows[-1][1]
                else:
                    before = [v for created_at, v in rows if created_at <= complete]
                    value = before[-1] if before else rows[0][1]
                out.append((kind, pair_id, labeller_id, value))
    return out


def _label_scopes(project: Project) -> list[Scope]:
    rows = _independent_labels(project)
    names = _usernames(labeller for _, _, labeller, _ in rows)
    declared: dict[str, list[str]] = {LabelKind.TOPIC: list(project.topics), LabelKind.REGION: list(project.regions)}
    scopes = []
    for kind in LabelKind.values:
        judgments: list[tuple[Hashable, Hashable, Any]] = [
            (pair_id, names[labeller], value) for k, pair_id, labeller, value in rows if k == kind
        ]
        observed = sorted({value for _, _, value in judgments} - set(declared[kind]))
        scope = Scope(
            key=f"label:{kind}",
            kind="label",
            label=f"Article label: {LabelKind(kind).label.lower()}",
            level="nominal",
            categories=declared[kind] + observed,
            unit="pair",
            judgments=judgments,
            links={pair_id: {"pair_id": pair_id} for k, pair_id, _, _ in rows if k == kind},
            notes=[
                "Each labeller's label as it stood when the pair's labelling was complete, before anyone saw "
                "the others' labels and before adjudication; later relabels are not counted."
            ],
        )
        scopes.append(scope)
    return scopes


def _screening_scope(project: Project) -> list[Scope]:
    latest: dict[tuple[int, int], str] = {}
    deleted = deleted_pairs(project)
    for pair_id, annotator_id, decision in (
        Screening.objects.filter(project=project, annotator__isnull=False)
        .order_by("created_at", "id")
        .values_list("pair_id", "annotator_id", "decision")
    ):
        if pair_id not in deleted:
            latest[(pair_id, annotator_id)] = decision  # a person who screened a pair twice: their latest decision
    screeners: dict[int, int] = defaultdict(int)
    for pair_id, _ in latest:
        screeners[pair_id] += 1
    names = _usernames(annotator for _, annotator in latest)
    judgments: list[tuple[Hashable, Hashable, Any]] = [
        (pair_id, names[annotator], decision)
        for (pair_id, annotator), decision in latest.items()
        if screeners[pair_id] > 1
    ]
    once = sum(1 for n in screeners.values() if n == 1)
    return [
        Scope(
            key="screening",
            kind="screening",
            label="Screening decision",
            level="nominal",
            categories=list(Screening.Decision.values),
            unit="pair",
            judgments=judgments,
            links={pair_id: {"pair_id": pair_id} for pair_id, count in screeners.items() if count > 1},
            notes=[f"Pairs screened by more than one person only; {once} pair(s) screened once are not counted."],
        )
    ]


def _kind_scopes(project: Project) -> list[Scope]:
    """Judgments another app keeps, gathered by that app (`common.kinds.ProjectKind.scopes`)."""
    gather = project_kinds.of(project).scopes
    return gather(project) if gather is not None else []


SCOPE_GATHERERS: list[Callable[[Project], list[Scope]]] = [
    _review_scopes,
    _label_scopes,
    _screening_scope,
    _kind_scopes,
]


def scopes_gather(project: Project) -> list[Scope]:
    """Every kind of judgment of the project, in a handful of queries (no per-row queries)."""
    return [scope for gather in SCOPE_GATHERERS for scope in gather(project)]


# Computing


def _digest_strata(strata: dict[str, dict[Hashable, str]]) -> str:
    digest = hashlib.sha256()
    for name in sorted(strata):
        digest.update(name.encode())
        digest.update(json.dumps(sorted((str(unit), label) for unit, label in strata[name].items())).encode())
    return digest.hexdigest()


def _fingerprint(tables: list[tuple[Scope, Any]], bootstrap: int, seed: int) -> str:
    digest = hashlib.sha256(f"schema {SCHEMA_VERSION} bootstrap {bootstrap} seed {seed}\n".encode())
    for scope, table in tables:
        digest.update(f"{scope.key}\t{judgments_fingerprint(table)}\t{_digest_strata(scope.strata)}\n".encode())
        if scope.figures:
            digest.update(json.dumps(scope.figures, sort_keys=True).encode())
    return "sha256:" + digest.hexdigest()


def scope_compute(scope: Scope, table: Any, *, bootstrap: int, seed: int) -> dict[str, Any]:
    """Every statistic of one scope: overall, per rater pair, most contested units, and each stratification."""
    summary = agreement_summary(table, scope.level, bootstrap=bootstrap, seed=seed)
    data = summary.to_dict()
    for unit in data["contested_units"]:
        unit.update(scope.links.get(unit["unit"], {}))
    strata = {
        name: [stratum.to_dict() for stratum in strata_statistics(table, mapping, bootstrap=bootstrap, seed=seed)]
        for name, mapping in scope.strata.items()
        if mapping
    }
    return {
        "key": scope.key,
        "kind": scope.kind,
        "label": scope.label,
        "level": scope.level,
        "unit": scope.unit,
        "notes": scope.notes,
        "figures": scope.figures,
        "summary": data,
        "strata": strata,
    }


def _headline(result: dict[str, Any]) -> dict[str, Any]:
    headline = {}
    for key, scope in result["scopes"].items():
        alpha = scope["summary"]["statistics"]["krippendorff_alpha"]
        headline[key] = {
            "label": scope["label"],
            "alpha": alpha["value"],
            "ci_low": alpha["ci_low"],
            "ci_high": alpha["ci_high"],
            "n_units": alpha["n_units"],
            "n_judgments": scope["summary"]["n_judgments"],
        }
    return headline


Progress = Callable[[int, str], None]


def agreement_report_compute(
    *, report_id: int, bootstrap: int = BOOTSTRAP, seed: int = SEED, progress: Progress | None = None
) -> AgreementReport | None:
    """Compute a queued report; None if it is not there to claim (done, running elsewhere, or a duplicate delivery).

    `progress(percent, stage)` is called as the work advances (the command prints it).
    """
    run = job_claim(AgreementReport, report_id, progress_done=0, stage="Gathering judgments")
    if run is None:
        return None
    report = AgreementReport.objects.select_related("project").get(pk=report_id)
    project = report.project

    def step(percent: int, stage: str) -> None:
        run.beat(progress_done=percent, stage=stage)
        if progress is not None:
            progress(percent, stage)
        pause_between_steps()

    try:
        step(1, "Gathering judgments")
        watermark = Judgment.objects.filter(project=project).aggregate(top=Max("id"))["top"] or 0
        scopes = scopes_gather(project)
        tables = [(scope, rating_table(scope.judgments, scope.level, categories=scope.categories)) for scope in scopes]
        fingerprint = _fingerprint(tables, bootstrap, seed)
        earlier = (
            AgreementReport.objects.done()
            .filter(project=project)
            .exclude(pk=report_id)
            .order_by("-finished_at", "-id")
            .first()
        )
        if earlier is not None and earlier.fingerprint == fingerprint:
            same_as = earlier.same_as_id or earlier.pk
            _finish(
                run,
                fingerprint=fingerprint,
                watermark=watermark,
                result=earlier.result,
                headline=earlier.headline,
                same_as_id=same_as,
                stage=f"Unchanged since report {same_as}: its figures are reused, nothing was recomputed.",
            )
        else:
            step(5, "Computing")
            result_scopes = {}
            for number, (scope, table) in enumerate(tables, start=1):
                step(5 + int(90 * (number - 1) / len(tables)), f"Computing {scope.key} ({number} of {len(tables)})")
                result_scopes[scope.key] = scope_compute(scope, table, bootstrap=bootstrap, seed=seed)
            result = {
                "schema_version": SCHEMA_VERSION,
                "project": project.slug,
                "fingerprint": fingerprint,
                "computed_at": timezone.now().isoformat(),
                "bootstrap": {"replicates": bootstrap, "seed": seed},
                "scope_order": list(result_scopes),
                "scopes": result_scopes,
            }
            _finish(
                run,
                fingerprint=fingerprint,
                watermark=watermark,
                result=result,
                headline=_headline(result),
                same_as_id=None,
                stage="Done",
            )
        if progress is not None:
            progress(100, "Done")
    except JobLost:
        return None
    except Exception as error:
        log.exception("Agreement report %s failed", report_id)
        run.fail(error, stage="Failed")
    return AgreementReport.objects.get(pk=report_id)


def _finish(run: JobRun, *, watermark: int, **fields: Any) -> None:
    run.finish(progress_done=100, judgment_watermark=watermark, **fields)


# Requesting


def agreement_reports_expire_stale(*, project: Project) -> int:
    """Mark reports whose worker stopped writing as failed, so a new one can be queued."""
    return len(job_expire_stale(AgreementReport, LOST_ERROR, project=project))


def _enqueue(report_id: int, countdown: int) -> None:
    job_enqueue("agreement_report", report_id, countdown=countdown or None)


def _project_watermark(project: Project) -> int:
    return Judgment.objects.filter(project=project).aggregate(top=Max("id"))["top"] or 0


def agreement_report_request(
    *,
    project: Project,
    user: User | None = None,
    trigger: str = AgreementReport.Trigger.PAGE,
    enqueue: bool = True,
    countdown: int = 0,
) -> tuple[AgreementReport, bool]:
    """Queue a report for a worker (after commit); (report, created).

    One report waits or runs per project: asked again meanwhile, the waiting one
    is returned (created False) and, if still queued, sent to the workers once
    more (a duplicate delivery is harmless: only one run can claim it).
    """
    if trigger not in AgreementReport.Trigger.values:
        raise ValueError(f"Unknown trigger {trigger!r}")
    agreement_reports_expire_stale(project=project)
    for _attempt in range(3):
        try:
            with transaction.atomic():
                report = AgreementReport.objects.create(
                    project=project,
                    trigger=trigger,
                    requested_by=user,
                    judgment_watermark=_project_watermark(project),
                )
        except IntegrityError:
            waiting = AgreementReport.objects.active().filter(project=project).first()
            if waiting is None:  # it finished between our insert and this look: try again
                continue
            if enqueue and waiting.status == AgreementReport.Status.PENDING:
                _enqueue(waiting.pk, countdown)
            return waiting, False
        if enqueue:
            _enqueue(report.pk, countdown)
        return report, True
    raise IntegrityError(f"Could not queue an agreement report for {project.slug}: reports kept finishing meanwhile.")


def agreement_report_after_judgments(*, project: Project, judgments: int | None = None) -> AgreementReport | None:
    """Debounced automatic report: queue one once enough judgments arrived since the last report.

    Called after every recorded review. Nothing happens while a report is
    queued or running (the burst is waiting for it) or before
    `AGREEMENT_AUTO_JUDGMENTS` new judgments; the queued report waits
    `AGREEMENT_AUTO_COUNTDOWN` seconds, so the rest of a burst lands in it.
    Never raises: a review is recorded whatever happens here.

    `judgments`: how many the review just recorded. They are counted in the cache, and the database is asked
    only once as many as the threshold were counted since it was last asked (or when the cache has no count, as
    after a restart; while it is unreachable, no report queues by itself); None asks it every time.
    """
    threshold = auto_after_judgments()
    if threshold <= 0:
        return None
    try:
        if judgments is not None and _counted_since_asked(project, judgments) < threshold:
            return None
        return _report_if_due(project, threshold, counted=judgments is not None)
    except Exception:  # an agreement report is never worth failing a review over
        log.exception("Could not queue an automatic agreement report for %s", project.slug)
        return None


def _debounce_key(project: Project) -> str:
    return f"agreement-auto:{project.pk}"


def _counted_since_asked(project: Project, judgments: int) -> float:
    """The judgments counted since the database was last asked, these included; infinity when nothing was
    counted (the cache forgot, or never knew): then the database says. While the cache is unreachable (it fails
    open and answers None), just these."""
    try:
        counted = cache.incr(_debounce_key(project), judgments)
    except ValueError:  # no count kept
        return float("inf")
    return judgments if counted is None else counted


def _report_if_due(project: Project, threshold: int, *, counted: bool) -> AgreementReport | None:
    """What the debounce asks the database: whether a report waits (sent again if its message was lost), else
    whether enough judgments came since the last one to queue the next. `counted`: the count in the cache starts
    again from what the database said."""
    reports = AgreementReport.objects.filter(project=project)
    waiting = reports.active().first()
    if waiting is not None:
        _resend_if_lost(waiting)
        if counted:  # asked again after as many judgments more (or at once, if the cache forgets)
            cache.set(_debounce_key(project), 0, timeout=None)
        return None
    last = reports.order_by("-id").values_list("judgment_watermark", flat=True).first() or 0
    new = Judgment.objects.filter(project=project, id__gt=last).count()
    if counted:
        cache.set(_debounce_key(project), new if new < threshold else 0, timeout=None)
    if new < threshold:
        return None
    report, created = agreement_report_request(
        project=project, trigger=AgreementReport.Trigger.AUTO, countdown=auto_countdown()
    )
    return report if created else None


def _resend_if_lost(report: AgreementReport) -> None:
    """A report queued long ago and never claimed lost its message (a broker restart): send it once more.

    `heartbeat_at` of a queued report is when it was last sent; the conditional
    update lets only one of several reviews at once send it.
    """
    if report.status != AgreementReport.Status.PENDING:
        return
    now = timezone.now()
    cutoff = now - timedelta(seconds=stale_seconds(AgreementReport) + auto_countdown())
    sent = report.heartbeat_at or report.created_at
    if sent >= cutoff:
        return
    if AgreementReport.objects.filter(
        Q(heartbeat_at__isnull=True) | Q(heartbeat_at__lt=cutoff), pk=report.pk, status=AgreementReport.Status.PENDING
    ).update(heartbeat_at=now):
        _enqueue(report.pk, 0)


# Reading


def reports_for_project(project: Project) -> ReportQuerySet:
    return AgreementReport.objects.filter(project=project).select_related("requested_by").defer("result")


def latest_done_report(project: Project) -> AgreementReport | None:
    return AgreementReport.objects.done().filter(project=project).order_by("-finished_at", "-id").first()


def latest_agreement_report(project: Project) -> dict[str, Any] | None:
    """The latest done report, for a release to cite: overall figures per scope, and where they come from.

    No per-rater figures (review may be blind); the full report is on the
    agreement page and at /api/projects/<slug>/agreement/reports/<id>/.
    """
    report = latest_done_report(project)
    if report is None:
        return None
    return {
        "report_id": report.pk,
        "computed_at": report.finished_at.isoformat() if report.finished_at else None,
        "fingerprint": report.fingerprint,
        "same_as": report.same_as_id,
        "covers": "every judgment of the project when the report was computed, not only the released items",
        "judgments_since": Judgment.objects.filter(project=project, id__gt=report.judgment_watermark).count(),
        "scopes": {
            key: {
                "statistics": scope["summary"]["statistics"],
                "fingerprint": scope["summary"]["fingerprint"],
                "n_units": scope["summary"]["n_units"],
                "n_judgments": scope["summary"]["n_judgments"],
                **({"figures": scope["figures"]} if scope.get("figures") else {}),
            }
            for key, scope in ordered_scopes(report.result)
        },
    }


def project_agreement_report(*, project: Project) -> dict[str, Any] | None:
    """The name `exports.statistics` looks for: the release manifest's `agreement` comes from here."""
    return latest_agreement_report(project)


# PostgreSQL's jsonb keeps object keys in an order of its own: these put scopes, stratifications
# and statistics back in the order they were computed in, for pages, downloads and the API.
STATISTICS_ORDER = (
    "krippendorff_alpha",
    "percent_agreement",
    "fleiss_kappa",
    "gwet_ac1",
    "cohen_kappa",
    "cohen_kappa_mean",
    "rwg_star_j",
    "rwg_j",
)


def ordered_statistics(statistics: dict[str, Any]) -> dict[str, Any]:
    rank = {name: position for position, name in enumerate(STATISTICS_ORDER)}
    return dict(sorted(statistics.items(), key=lambda item: (rank.get(item[0], len(rank)), item[0])))


def scope_rank(key: str) -> tuple[int, str]:
    """Review criteria, then labels, then screening, then anything newer: for headlines, which keep no order."""
    kind = key.split(":", 1)[0]
    return ({"review": 0, "label": 1, "screening": 2}.get(kind, 3), "" if kind == "review" else key)


def ordered_scopes(result: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """(key, scope) in the order computed, each with its statistics and stratifications in their order."""
    scopes = result.get("scopes", {})
    order = [key for key in result.get("scope_order", []) if key in scopes]
    order += [key for key in scopes if key not in order]
    out = []
    for key in order:
        scope = scopes[key]
        summary = {**scope["summary"], "statistics": ordered_statistics(scope["summary"]["statistics"])}
        summary["pairs"] = [
            {**pair, "statistics": ordered_statistics(pair["statistics"])} for pair in summary.get("pairs", [])
        ]
        strata = {
            name: [{**s, "statistics": ordered_statistics(s["statistics"])} for s in scope["strata"][name]]
            for name in [
                *(n for n in STRATA if n in scope.get("strata", {})),
                *(n for n in scope.get("strata", {}) if n not in STRATA),
            ]
        }
        out.append((key, {**scope, "summary": summary, "strata": strata}))
    return out


def report_csv_rows(result: dict[str, Any]) -> list[list[Any]]:
    """One row per figure of every scope: overall, per rater pair and per stratum; header first."""
    rows: list[list[Any]] = [["report_scope", "stratification", *CSV_HEADER]]
    for key, scope in ordered_scopes(result):
        rows += [[key, "", *row] for row in summary_csv_rows(scope["summary"])[1:]]
        for name, strata in scope["strata"].items():
            only_strata = {"statistics": {}, "pairs": [], "strata": strata}
            rows += [[key, name, *row] for row in summary_csv_rows(only_strata)[1:]]
    return rows


def history_points(project: Project, limit: int = 60) -> list[tuple[int, Any, dict[str, Any]]]:
    """(report id, finished at, headline) of the latest done reports, oldest first: one point each."""
    rows = list(
        AgreementReport.objects.done()
        .filter(project=project)
        .order_by("-finished_at", "-id")
        .values_list("pk", "finished_at", "headline")[:limit]
    )
    return rows[::-1]
