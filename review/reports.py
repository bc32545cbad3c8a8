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
report reuses that result and says so (`same_as`). Otherwise each scope whose
own fingerprint is unchanged takes its figures from that report.
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Callable, Hashable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import timedelta
from itertools import groupby, islice
from operator import itemgetter
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import User
from django.core.cache import cache
from django.db import IntegrityError, transaction
from django.db.models import Max, OuterRef, Q, Subquery
from django.http import Http404
from django.utils import timezone

from annotation.access import AnyUser, ProjectAccess, project_access
from annotation.models import Membership, Project, QAItem, Role, Screening, deleted_items, deleted_pairs
from common import kinds as project_kinds
from common.jobs import JobLost, JobRun, job_claim, job_enqueue, job_expire_stale, pause_between_steps, stale_seconds
from common.snapshot import read_snapshot
from review.agreement import (
    CSV_HEADER,
    DEFAULT_SEED,
    NO_STRATUM,
    AgreementInputError,
    Level,
    Tally,
    agreement_summary,
    rating_table,
    summary_csv_rows,
    table_tally,
    tally_strata_statistics,
)
from review.models import ArticleLabel, FinalLabel, Judgment, LabelKind
from review.models_reports import AgreementReport, ReportQuerySet

log = logging.getLogger(__name__)

# 2: each scope carries its own fingerprint, so an unchanged scope is taken from the report before.
# 3: judgments streamed into tallies; fingerprints are order-free sums of each unit's hash (`Tally.fingerprint`).
SCHEMA_VERSION = 3
BOOTSTRAP = 1000
SEED = DEFAULT_SEED
STRATA = ("topic", "region", "annotator")
CONTESTED_SHOWN = 50
ROWS_PER_FETCH = 5_000  # rows are streamed from the database in batches of this many, not all held at once
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

Beat = Callable[[str], None]  # told how far a gatherer's read has come


@dataclass
class Scope:
    key: str
    kind: str  # review | label | screening
    label: str
    level: Level
    categories: list[Any]
    unit: str  # what a unit is: "revision" or "pair"
    judgments: list[tuple[Hashable, Hashable, Any]] = field(default_factory=list)  # (unit, rater name or id, value)
    strata: Mapping[str, Mapping[Hashable, str]] = field(default_factory=dict)
    links: Mapping[Hashable, Mapping[str, int]] = field(default_factory=dict)  # unit -> {"item_id"/"pair_id": id}
    notes: list[str] = field(default_factory=list)
    # Figures beside the agreement statistics ({name, label, value, note}): a Likert criterion's mean and spread,
    # the better-answer choice's position bias. Part of the fingerprint.
    figures: list[dict[str, Any]] = field(default_factory=list)
    # The judgments added up (`review.agreement.Tally`): a gatherer that streams its rows gives it instead of
    # `judgments` and `strata` (the review, label and screening gatherers do), with `links` for its contested units.
    tally: Tally | None = None

    def tallied(self) -> Tally:
        """The judgments added up. Once added up, the judgment tuples are let go: they take many times its memory."""
        if self.tally is None:
            table = rating_table(self.judgments, self.level, categories=self.categories)
            strata = {name: mapping for name, mapping in self.strata.items() if mapping}
            self.tally = table_tally(table, strata=strata or None, contested=CONTESTED_SHOWN)
            self.judgments = []
        return self.tally

    @property
    def n_judgments(self) -> int:
        return len(self.judgments) if self.tally is None else self.tally.n_judgments


def _usernames(ids: Iterable[int | None]) -> dict[int, str]:
    wanted = {pk for pk in ids if pk is not None}
    if not wanted:
        return {}
    return dict(get_user_model().objects.filter(pk__in=wanted).values_list("pk", "username"))


def _chunks(rows: Iterable[Any], size: int) -> Iterator[list[Any]]:
    """Rows a list of `size` at a time."""
    iterator = iter(rows)
    while chunk := list(islice(iterator, size)):
        yield chunk


def _review_scopes(project: Project, beat: Beat) -> Iterator[Scope]:
    """One scope per criterion (the project's, then any other judged one), from one pass over the project's
    judgments in revision order: each revision's verdicts are added to its criterion's tally as they come.

    A revision's strata (its pair's final topic and region, its item's author, the kind's own) are looked up a
    chunk of rows at a time, by the chunk's item ids: memory stays the same whatever the project's size, and no
    statement reads another project's rows (tests/test_coordinator_plans.py). `beat` is told how
    many rows were read after each chunk.
    """
    deleted = deleted_items(project)
    labels = {criterion["key"]: criterion["label"] for criterion in project.review_criteria}
    categories = list(Judgment.Verdict.values)
    judged = Judgment.objects.filter(project=project, reviewer__isnull=False).order_by()
    names = _usernames(judged.values_list("reviewer_id", flat=True).distinct())
    tallies = {key: Tally("nominal", categories, contested=CONTESTED_SHOWN) for key in labels}
    rows = judged.order_by("revision_id").values_list("revision_id", "item_id", "criterion", "reviewer_id", "verdict")
    revision: int | None = None
    strata: dict[str, str] = {}
    given: dict[str, tuple[list[str], list[str]]] = {}  # criterion -> the revision's reviewers and verdicts

    def add() -> None:
        for criterion, (reviewers, verdicts) in given.items():
            tally = tallies.get(criterion)
            if tally is None:
                tally = tallies[criterion] = Tally("nominal", categories, contested=CONTESTED_SHOWN)
            try:
                tally.add(revision, reviewers, [tally.code(verdict) for verdict in verdicts], strata)
            except AgreementInputError as error:
                raise AgreementInputError(f"review criterion {criterion!r}, revision {revision}: {error}") from None

    deleted_pair_ids = deleted_pairs(project)
    authors: dict[int, str] = {}
    read = 0
    for chunk in _chunks(rows.iterator(chunk_size=ROWS_PER_FETCH), ROWS_PER_FETCH):
        read += len(chunk)
        beat(f"Reading review judgments: {read:,} read")
        items = {item_id for _, item_id, _, _, _ in chunk} - deleted
        strata_of = _revision_strata(project, items, deleted_pair_ids, authors)
        for revision_id, item_id, criterion, reviewer_id, verdict in chunk:
            if item_id in deleted:
                continue
            if revision_id != revision:
                add()
                revision, strata, given = revision_id, strata_of[item_id], {}
            reviewers, verdicts = given.setdefault(criterion, ([], []))
            reviewers.append(names[reviewer_id])
            verdicts.append(verdict)
    add()
    links = _revision_links([unit.unit for tally in tallies.values() for unit in tally.contested_units()])
    keys = list(labels) + sorted(set(tallies) - set(labels))
    for key in keys:
        tally = tallies.pop(key)
        yield Scope(
            key=f"review:{key}",
            kind="review",
            label=labels.get(key, key),
            level="nominal",
            categories=list(categories),
            unit="revision",
            tally=tally,
            links=links,
        )


def _revision_strata(
    project: Project, items: set[int], deleted_pair_ids: set[int], authors: dict[int, str]
) -> dict[int, dict[str, str]]:
    """item id -> its revisions' strata: the pair's final topic and region (NO_STRATUM where none, or where the
    pair is deleted), the item's author, and the project kind's own (`common.kinds.ProjectKind.strata`).
    `authors` (id -> username) is kept by the caller across chunks; the authors it lacks are read into it."""
    # The items by their ids alone (they are the project's own, from its judgments) and each item's pair's final
    # labels by a subquery per item, an equality on the unique (pair, kind) index: the same plan whatever the
    # tables' statistics (with the project's index beside them, or a list of pairs against a table the planner
    # thinks small, a chunk read the project's every row).
    finals = {
        kind: Subquery(FinalLabel.objects.filter(pair_id=OuterRef("pair_id"), kind=kind).values("value")[:1])
        for kind in (LabelKind.TOPIC, LabelKind.REGION)
    }
    rows = {
        pk: (pair_id, author, topic, region)
        for pk, pair_id, author, topic, region in QAItem.objects.filter(pk__in=items)
        .order_by()
        .annotate(topic=finals[LabelKind.TOPIC], region=finals[LabelKind.REGION])
        .values_list("pk", "pair_id", "author_id", "topic", "region")
    }
    authors.update(_usernames({author for _, author, _, _ in rows.values()} - set(authors)))
    kind_strata = project_kinds.of(project).strata
    by_kind = kind_strata(project, items) if kind_strata is not None else {}
    strata = {}
    for item in items:
        pair_id, author, topic, region = rows[item]
        if pair_id in deleted_pair_ids:
            topic = region = None
        strata[item] = {
            "topic": NO_STRATUM if topic is None else topic,
            "region": NO_STRATUM if region is None else region,
            "annotator": (authors.get(author) if author is not None else None) or "(unknown)",
            **{name: labels.get(item, NO_STRATUM) for name, labels in by_kind.items()},
        }
    return strata


def _revision_links(revisions: list[Hashable]) -> dict[Hashable, dict[str, int]]:
    """The item and pair of each of a few revisions (a report's most contested), its first item's where two."""
    links: dict[Hashable, dict[str, int]] = {}
    # By the revisions alone (they are the project's own): their index, whatever the table's statistics.
    for revision_id, item_id, pair_id in (
        Judgment.objects.filter(revision_id__in=set(revisions))
        .order_by("revision_id", "item_id")
        .values_list("revision_id", "item_id", "item__pair_id")
    ):
        links.setdefault(revision_id, {"item_id": item_id, "pair_id": pair_id})
    return links


class PairLinks(Mapping[Hashable, dict[str, int]]):
    """unit -> {"pair_id": unit}: the link of a scope whose units are page pairs."""

    def __getitem__(self, unit: Hashable) -> dict[str, int]:
        if not isinstance(unit, int):
            raise KeyError(unit)
        return {"pair_id": unit}

    def __iter__(self) -> Iterator[Hashable]:
        return iter(())

    def __len__(self) -> int:
        return 0


def _independent_labels(project: Project) -> Iterator[tuple[int, str, list[tuple[int, str]]]]:
    """(pair, kind, [(labeller, value), ...]) for each live pair and kind of label: each labeller's label as it
    stood when the pair's labelling was complete, labellers in the order of their first label on the pair.

    Until `labellers_per_pair` labellers are done a labeller sees only their own
    labels; once the pair is complete everyone's are shown, so a relabel after
    that moment is no longer independent and is not what agreement measures.
    Pairs not complete yet count with their current labels; a labeller who came
    after completion counts with their first label.

    The labels are read a pair at a time, in pair order: one pair's labels are held, never the project's.
    """
    needed = project.labellers_per_pair
    deleted = deleted_pairs(project)
    rows = (
        ArticleLabel.objects.filter(project=project)
        .order_by("pair_id", "created_at", "id")
        .values_list("pair_id", "labeller_id", "kind", "value", "created_at")
    )
    for pair_id, labels in groupby(rows.iterator(chunk_size=ROWS_PER_FETCH), key=itemgetter(0)):
        if pair_id in deleted:
            continue
        history: dict[int, dict[str, list[tuple[Any, str]]]] = {}  # labeller -> kind -> (time, value), in order
        for _, labeller_id, kind, value, created_at in labels:
            history.setdefault(labeller_id, {}).setdefault(kind, []).append((created_at, value))
        # A labeller is done once they gave every kind: at the latest of their first labels of each kind.
        done = sorted(
            max(kinds[kind][0][0] for kind in LabelKind.values)
            for kinds in history.values()
            if all(kind in kinds for kind in LabelKind.values)
        )
        # The pair is complete when its `needed`-th labeller was done (with `needed` 0, the last one done).
        at = needed - 1 if needed >= 1 else len(done) - 1
        complete = done[at] if 0 <= at < len(done) else None
        chosen: dict[str, list[tuple[int, str]]] = {}
        for labeller_id, kinds in history.items():
            for kind, given in kinds.items():
                # The label as it stood at completion (the last one up to then, else the first); the current one
                # if the pair is not complete.
                before = [value for at, value in given if complete is None or at <= complete]
                chosen.setdefault(kind, []).append((labeller_id, before[-1] if before else given[0][1]))
        for kind, values in chosen.items():
            yield pair_id, kind, values


def _label_scopes(project: Project, beat: Beat) -> Iterator[Scope]:
    """One scope per kind of article label, both from one pass over the project's labels, a pair at a time."""
    labellers = ArticleLabel.objects.filter(project=project).order_by().values_list("labeller_id", flat=True)
    names = _usernames(labellers.distinct())
    declared: dict[str, list[str]] = {LabelKind.TOPIC: list(project.topics), LabelKind.REGION: list(project.regions)}
    tallies = {
        kind: Tally("nominal", list(dict.fromkeys(declared[kind])), fixed=False, contested=CONTESTED_SHOWN)
        for kind in LabelKind.values
    }
    for pairs, (pair_id, kind, values) in enumerate(_independent_labels(project)):
        if pairs % ROWS_PER_FETCH == 0:
            beat(f"Reading article labels: {pairs:,} pairs and kinds read")
        tally = tallies.get(kind)
        if tally is not None:
            tally.add(pair_id, [names[labeller] for labeller, _ in values], [tally.code(value) for _, value in values])
    for kind in LabelKind.values:
        tally = tallies.pop(kind)
        known = list(dict.fromkeys(declared[kind]))
        tally.finish(order=known + sorted(set(tally.categories) - set(known)))
        yield Scope(
            key=f"label:{kind}",
            kind="label",
            label=f"Article label: {LabelKind(kind).label.lower()}",
            level="nominal",
            categories=list(tally.categories),
            unit="pair",
            tally=tally,
            links=PairLinks(),
            notes=[
                "Each labeller's label as it stood when the pair's labelling was complete, before anyone saw "
                "the others' labels and before adjudication; later relabels are not counted."
            ],
        )


def _screening_scope(project: Project, beat: Beat) -> list[Scope]:
    """Pairs screened by more than one person, each person's latest decision, a pair at a time in pair order."""
    deleted = deleted_pairs(project)
    screened = Screening.objects.filter(project=project, annotator__isnull=False)
    names = _usernames(screened.order_by().values_list("annotator_id", flat=True).distinct())
    tally = Tally("nominal", list(Screening.Decision.values), contested=CONTESTED_SHOWN)
    once = 0
    rows = screened.order_by("pair_id", "created_at", "id").values_list("pair_id", "annotator_id", "decision")
    for pairs, (pair_id, screenings) in enumerate(groupby(rows.iterator(chunk_size=ROWS_PER_FETCH), key=itemgetter(0))):
        if pairs % ROWS_PER_FETCH == 0:
            beat(f"Reading screenings: {pairs:,} pairs read")
        if pair_id in deleted:
            continue
        latest: dict[int, str] = {}
        for _, annotator_id, decision in screenings:
            latest[annotator_id] = decision  # a person who screened a pair twice: their latest decision
        if len(latest) == 1:
            once += 1
            continue
        tally.add(pair_id, [names[annotator] for annotator in latest], [tally.code(d) for d in latest.values()])
    return [
        Scope(
            key="screening",
            kind="screening",
            label="Screening decision",
            level="nominal",
            categories=list(Screening.Decision.values),
            unit="pair",
            tally=tally,
            links=PairLinks(),
            notes=[f"Pairs screened by more than one person only; {once} pair(s) screened once are not counted."],
        )
    ]


def _kind_scopes(project: Project, beat: Beat) -> list[Scope]:
    """Judgments another app keeps, gathered by that app (`common.kinds.ProjectKind.scopes`)."""
    gather = project_kinds.of(project).scopes
    return gather(project) if gather is not None else []


SCOPE_GATHERERS: list[Callable[[Project, Beat], Iterable[Scope]]] = [
    _review_scopes,
    _label_scopes,
    _screening_scope,
    _kind_scopes,
]


def _no_beat(stage: str) -> None:
    pass


def scopes_each(project: Project, beat: Beat = _no_beat) -> Iterator[tuple[int, Scope]]:
    """Every kind of judgment of the project, in a handful of queries (no per-row queries), a scope at a time
    with the number of its gatherer in `SCOPE_GATHERERS` (for progress). Each scope is added up (`Scope.tallied`)
    as soon as its gatherer gives it, so no gatherer's judgment tuples wait while the next one reads. `beat(stage)`
    is told how far a long read has come (a job's heartbeat)."""
    for number, gather in enumerate(SCOPE_GATHERERS):
        for scope in gather(project, beat):
            scope.tallied()
            yield number, scope
            del scope


def scopes_gather(project: Project) -> list[Scope]:
    """Every scope of the project at once (`scopes_each`)."""
    return [scope for _, scope in scopes_each(project)]


# Computing


def _fingerprint_header(bootstrap: int, seed: int) -> bytes:
    return f"schema {SCHEMA_VERSION} bootstrap {bootstrap} seed {seed}\n".encode()


def _scope_fingerprint_text(scope: Scope) -> bytes:
    """What a scope adds to the report's fingerprint: its key, its judgments, its strata and its figures. A scope
    whose text is unchanged has the same statistics (the report's bootstrap and seed being the same)."""
    tally = scope.tallied()
    text = f"{scope.key}\t{tally.fingerprint}\t{tally.strata_fingerprint}\n".encode()
    if scope.figures:
        text += json.dumps(scope.figures, sort_keys=True).encode()
    return text


def _reusable_scopes(earlier: AgreementReport | None, bootstrap: int, seed: int) -> dict[str, dict[str, Any]]:
    """The earlier report's scope results that may stand for unchanged scopes: same schema, bootstrap and seed."""
    result = earlier.result if earlier is not None else None
    if not result or result.get("schema_version") != SCHEMA_VERSION:
        return {}
    if result.get("bootstrap") != {"replicates": bootstrap, "seed": seed}:
        return {}
    return dict(result.get("scopes", {}))


def scope_compute(scope: Scope, tally: Tally, *, bootstrap: int, seed: int) -> dict[str, Any]:
    """Every statistic of one scope: overall, per rater pair, most contested units, and each stratification."""
    summary = agreement_summary(tally, scope.level, bootstrap=bootstrap, seed=seed)
    data = summary.to_dict()
    for unit in data["contested_units"]:
        unit.update(scope.links.get(unit["unit"], {}))
    strata = {
        name: [stratum.to_dict() for stratum in tally_strata_statistics(tally, name, bootstrap=bootstrap, seed=seed)]
        for name in tally.strata
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
        # Every read in one snapshot (common.snapshot): a judgment saved while the report reads (a read per
        # criterion) is in all of them or in none. Heartbeats go aside; the result is written after it ends.
        with read_snapshot() as snapshot, run.aside(enabled=snapshot.own):
            watermark = Judgment.objects.filter(project=project).aggregate(top=Max("id"))["top"] or 0
            earlier = (
                AgreementReport.objects.done()
                .filter(project=project)
                .exclude(pk=report_id)
                .order_by("-finished_at", "-id")
                .first()
            )
            reusable = _reusable_scopes(earlier, bootstrap, seed)
            # A scope at a time: coded, fingerprinted, computed (or taken from the report before when its fingerprint
            # is the same) and let go, so a big project's tables are never all held at once.
            digest = hashlib.sha256(_fingerprint_header(bootstrap, seed))
            result_scopes: dict[str, dict[str, Any]] = {}
            recomputed = []
            for number, scope in scopes_each(project, beat=lambda stage: run.beat(stage=stage)):
                step(5 + 90 * number // len(SCOPE_GATHERERS), f"Computing {scope.label}")
                text = _scope_fingerprint_text(scope)
                digest.update(text)
                scope_fingerprint = "sha256:" + hashlib.sha256(text).hexdigest()
                before = reusable.get(scope.key)
                if before is not None and before.get("fingerprint") == scope_fingerprint:
                    # The same judgments and strata: the same statistics. What is written about the scope is current.
                    result_scopes[scope.key] = {**before, "label": scope.label, "notes": scope.notes}
                else:
                    computed = scope_compute(scope, scope.tallied(), bootstrap=bootstrap, seed=seed)
                    result_scopes[scope.key] = {**computed, "fingerprint": scope_fingerprint}
                    recomputed.append(scope.key)
                del scope
            fingerprint = "sha256:" + digest.hexdigest()
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
            result = {
                "schema_version": SCHEMA_VERSION,
                "project": project.slug,
                "fingerprint": fingerprint,
                "computed_at": timezone.now().isoformat(),
                "bootstrap": {"replicates": bootstrap, "seed": seed},
                "scope_order": list(result_scopes),
                "scopes": result_scopes,
            }
            kept = len(result_scopes) - len(recomputed)
            taken = f"; {kept} unchanged since report {earlier.pk}, taken from it" if kept and earlier else ""
            _finish(
                run,
                fingerprint=fingerprint,
                watermark=watermark,
                result=result,
                headline=_headline(result),
                same_as_id=None,
                stage=f"Done: {len(recomputed)} of {len(result_scopes)} scopes computed{taken}.",
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
