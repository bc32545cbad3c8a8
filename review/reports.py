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
from array import array
from collections import defaultdict
from collections.abc import Callable, Hashable, ItemsView, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

import numpy as np
import numpy.typing as npt
from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import User
from django.core.cache import cache
from django.db import IntegrityError, transaction
from django.db.models import Count, Max, Q, QuerySet
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
    Level,
    RatingTable,
    agreement_summary,
    rating_table,
    rating_table_from_indices,
    strata_statistics,
    summary_csv_rows,
)
from review.models import ArticleLabel, FinalLabel, Judgment, LabelKind
from review.models_reports import AgreementReport, ReportQuerySet

log = logging.getLogger(__name__)

# 2: each scope carries its own fingerprint, so an unchanged scope is taken from the report before.
SCHEMA_VERSION = 2
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
    # The judgments coded for computation: a gatherer may give it instead of `judgments` (the review gatherer does).
    table: RatingTable | None = None

    def rating_table(self) -> RatingTable:
        """The coded judgments. Once coded, the judgment tuples are let go: a project's tuples take many times the
        memory of its tables."""
        if self.table is None:
            self.table = rating_table(self.judgments, self.level, categories=self.categories)
            self.judgments = []
        return self.table

    @property
    def n_judgments(self) -> int:
        return len(self.judgments) if self.table is None else self.table.n_judgments


class RevisionPart(Mapping[Hashable, Any]):
    """One review scope's part of values kept once for every judged revision of the project (its strata and
    links are the same whatever the criterion): the scope's units, in their order, and their values.

    `revisions` are the project's judged revisions, sorted: a revision's number is its place there (found by
    bisection: a dict of every revision would be most of a big report's memory); `value_at(number)` is a
    revision's value; `members` flags the numbers of this scope's revisions.
    """

    def __init__(
        self,
        revisions: npt.NDArray[np.int64],
        value_at: Callable[[int], Any],
        units: tuple[Hashable, ...],
        members: npt.NDArray[np.bool_],
    ) -> None:
        self.revisions, self.value_at, self.units, self.members = revisions, value_at, units, members

    def __getitem__(self, unit: Hashable) -> Any:
        if not isinstance(unit, int | np.integer):
            raise KeyError(unit)
        at = int(np.searchsorted(self.revisions, unit))
        if at >= len(self.revisions) or self.revisions[at] != unit or not self.members[at]:
            raise KeyError(unit)
        return self.value_at(at)

    def __iter__(self) -> Iterator[Hashable]:
        return iter(self.units)

    def __len__(self) -> int:
        return len(self.units)

    def items(self) -> ItemsView[Hashable, Any]:
        return _RevisionItems(self)


class _RevisionItems(ItemsView[Hashable, Any]):
    """A scope's (unit, value) pairs with every unit's number found in one bisection (the fingerprint reads them
    all), not one lookup per unit."""

    def __init__(self, part: RevisionPart) -> None:
        super().__init__(part)
        self.part = part

    def __iter__(self) -> Iterator[tuple[Hashable, Any]]:
        units = self.part.units
        numbers = np.searchsorted(self.part.revisions, np.fromiter(units, dtype=np.int64, count=len(units)))
        return zip(units, map(self.part.value_at, numbers.tolist()), strict=True)


class IdColumns(Mapping[Hashable, dict[str, int]]):
    """id -> {column: id} from sorted numpy columns (8 bytes an id instead of a dict a unit); looked up only for
    the few units a report names (its most contested)."""

    def __init__(self, ids: npt.NDArray[np.int64], columns: dict[str, npt.NDArray[np.int64]]) -> None:
        self.ids, self.columns = ids, columns

    def __getitem__(self, key: Hashable) -> dict[str, int]:
        if not isinstance(key, int):
            raise KeyError(key)
        at = int(np.searchsorted(self.ids, key))
        if at >= len(self.ids) or self.ids[at] != key:
            raise KeyError(key)
        return {name: int(column[at]) for name, column in self.columns.items()}

    def __iter__(self) -> Iterator[Hashable]:
        return iter(self.ids.tolist())

    def __len__(self) -> int:
        return len(self.ids)


def _usernames(ids: Iterable[int | None]) -> dict[int, str]:
    wanted = {pk for pk in ids if pk is not None}
    if not wanted:
        return {}
    return dict(get_user_model().objects.filter(pk__in=wanted).values_list("pk", "username"))


def _review_scopes(project: Project) -> Iterator[Scope]:
    """One scope per criterion, each coded into its table from compact columns (no tuple per judgment kept), a
    criterion at a time: its judgments are read, coded and computed, and let go before the next criterion's are
    read (a read per criterion: holding every criterion's columns at once was much of a big report's memory).

    A revision's links and strata are the same for every criterion: they are kept once for the project, and
    each scope sees its own units' part of them (`RevisionPart`).
    """
    deleted = deleted_items(project)
    judged = Judgment.objects.filter(project=project, reviewer__isnull=False).order_by()
    revisions, links_at, strata_at = _revision_maps(project, judged, deleted)
    units = revisions.tolist()  # one int per revision, shared by every table and map
    labels = {criterion["key"]: criterion["label"] for criterion in project.review_criteria}
    counted = dict(judged.values_list("criterion").annotate(n=Count("id")).order_by())
    keys = list(labels) + sorted(set(counted) - set(labels))
    categories = list(Judgment.Verdict.values)
    for key in keys:
        revision_column, reviewer_column, verdict_column = array("q"), array("q"), array("h")
        verdicts: dict[str, int] = {}  # verdict text -> its number in the columns; rating_table checks the text
        rows = judged.filter(criterion=key).values_list("revision_id", "item_id", "reviewer_id", "verdict")
        for revision_id, item_id, reviewer_id, verdict in (
            rows.iterator(chunk_size=ROWS_PER_FETCH) if counted.get(key) else ()
        ):
            if item_id in deleted:
                continue
            revision_column.append(revision_id)
            reviewer_column.append(reviewer_id)
            verdict_column.append(verdicts.setdefault(verdict, len(verdicts)))
        names = _usernames(set(reviewer_column))
        # Each verdict's number among the categories; one that is not a category goes through rating_table, to
        # fail the way any scope's unknown value does.
        category_of = np.array(
            [categories.index(v) if v in categories else -1 for v in verdicts] or [0], dtype=np.int64
        )
        at = np.searchsorted(revisions, np.frombuffer(revision_column, dtype=np.int64))
        reviewer_ids, reviewer_at = np.unique(np.frombuffer(reviewer_column, dtype=np.int64), return_inverse=True)
        code = category_of[np.frombuffer(verdict_column, dtype=np.int16)]
        if (code < 0).any():
            verdict_texts = list(verdicts)
            judgments = zip(
                map(units.__getitem__, at.tolist()),
                map(names.__getitem__, reviewer_column),
                map(verdict_texts.__getitem__, verdict_column),
                strict=True,
            )
            table = rating_table(judgments, "nominal", categories=categories)
        else:
            table = rating_table_from_indices(
                "nominal",
                units=units,
                raters=[names[reviewer] for reviewer in reviewer_ids.tolist()],
                categories=categories,
                unit_index=at,
                rater_index=reviewer_at,
                code=code,
            )
        del at, reviewer_at, code, revision_column, reviewer_column, verdict_column
        members = np.zeros(len(units), dtype=bool)
        members[np.searchsorted(revisions, np.fromiter(table.units, dtype=np.int64, count=len(table.units)))] = True
        yield Scope(
            key=f"review:{key}",
            kind="review",
            label=labels.get(key, key),
            level="nominal",
            categories=list(categories),
            unit="revision",
            table=table,
            strata={name: RevisionPart(revisions, get, table.units, members) for name, get in strata_at.items()},
            links=RevisionPart(revisions, links_at, table.units, members),
        )
        del table, members  # the report holds the scope while it computes it, and lets it go after


def _revision_maps(
    project: Project, judged: QuerySet[Judgment], deleted: set[int]
) -> tuple[npt.NDArray[np.int64], Callable[[int], dict[str, int]], dict[str, Callable[[int], str]]]:
    """Every judged revision (sorted; those of `deleted` items left out), and by its number there its links
    (item, pair) and strata (topic, region, author, the kind's own), each stratum a column of numbers."""
    revision_column, item_column = array("q"), array("q")
    # Each judged revision once, in order: the database finds them, without a row per judgment here.
    for revision_id, item_id in (
        judged.values_list("revision_id", "item_id")
        .distinct()
        .order_by("revision_id")
        .iterator(chunk_size=ROWS_PER_FETCH)
    ):
        if item_id not in deleted:
            revision_column.append(revision_id)
            item_column.append(item_id)
    revisions = np.frombuffer(revision_column, dtype=np.int64)
    items = np.frombuffer(item_column, dtype=np.int64)
    if len(revisions) > 1 and not (revisions[1:] != revisions[:-1]).all():
        # A revision judged under two items (not made by the app): its first item, as for every other revision.
        first = np.r_[True, revisions[1:] != revisions[:-1]]
        revisions, items = revisions[first], items[first]
    known_items, known_pairs, author_codes = array("q"), array("q"), array("q")
    authors: dict[str, int] = {}  # each author's name once, not once per item
    for pk, pair_id, author in (
        QAItem.objects.filter(project=project)
        .order_by()
        .values_list("id", "pair_id", "author__username")
        .iterator(chunk_size=ROWS_PER_FETCH)
    ):
        known_items.append(pk)
        known_pairs.append(pair_id)
        author_codes.append(authors.setdefault(author or "(unknown)", len(authors)))
    item_keys = np.frombuffer(known_items, dtype=np.int64)
    order = np.argsort(item_keys, kind="stable")
    at = order[np.searchsorted(item_keys, items, sorter=order)] if len(items) else np.zeros(0, dtype=np.int64)
    pairs = np.frombuffer(known_pairs, dtype=np.int64)[at]
    finals = _final_labels(project, pairs)
    strata = {
        "topic": finals[LabelKind.TOPIC],
        "region": finals[LabelKind.REGION],
        "annotator": _coded(np.frombuffer(author_codes, dtype=np.int64)[at], list(authors)),
    }
    del known_items, known_pairs, author_codes, item_keys, order, at
    kind_strata = project_kinds.of(project).strata
    if kind_strata is not None:
        item_list = items.tolist()
        for name, by_item in kind_strata(project).items():
            texts: dict[str, int] = {}
            codes = [texts.setdefault(by_item.get(item, NO_STRATUM), len(texts)) for item in item_list]
            strata[name] = _coded(np.array(codes, dtype=np.int64), list(texts))

    def links_at(number: int) -> dict[str, int]:
        return {"item_id": int(items[number]), "pair_id": int(pairs[number])}

    return revisions, links_at, strata


def _final_labels(project: Project, pairs: npt.NDArray[np.int64]) -> dict[str, Callable[[int], str]]:
    """kind -> the final label (NO_STRATUM where none) of `pairs[number]`, by its number. Each kind's labelled
    pairs are a sorted column, bisected: a dict of every labelled pair was much of a big report's memory."""
    deleted = deleted_pairs(project)
    columns = {kind: (array("q"), array("q")) for kind in LabelKind.values}
    texts: dict[str, dict[str, int]] = {kind: {} for kind in LabelKind.values}
    for pair_id, kind, value in (
        FinalLabel.objects.filter(project=project)
        .order_by()
        .values_list("pair_id", "kind", "value")
        .iterator(chunk_size=ROWS_PER_FETCH)
    ):
        if pair_id not in deleted and kind in columns:
            columns[kind][0].append(pair_id)
            columns[kind][1].append(texts[kind].setdefault(value, len(texts[kind])))
    labels = {}
    for kind, (pair_column, code_column) in columns.items():
        labelled = np.frombuffer(pair_column, dtype=np.int64)
        none = len(texts[kind])  # the code of NO_STRATUM, after the labels' own
        codes = np.full(len(pairs), none, dtype=np.int64)
        if len(labelled):
            order = np.argsort(labelled)  # a pair has one final label of a kind (final_label_unique_kind)
            at = np.minimum(np.searchsorted(labelled, pairs, sorter=order), len(labelled) - 1)
            found = labelled[order[at]] == pairs
            codes[found] = np.frombuffer(code_column, dtype=np.int64)[order[at[found]]]
        labels[kind] = _coded(codes, [*texts[kind], NO_STRATUM])
    return labels


def _coded(codes: npt.NDArray[np.int64], texts: list[str]) -> Callable[[int], str]:
    """A stratum's label by a revision's number, from a column of numbers into `texts`: 4 bytes a revision
    rather than a reference each (and the labels' texts once)."""
    column = codes.astype(np.int32)
    return lambda number: texts[column[number]]


def _independent_labels(
    project: Project,
) -> dict[str, tuple[npt.NDArray[np.int64], npt.NDArray[np.int64], npt.NDArray[np.int64], list[str]]]:
    """kind -> (pairs, labellers, value numbers, value texts): each labeller's label as it stood when the pair's
    labelling was complete.

    Until `labellers_per_pair` labellers are done a labeller sees only their own
    labels; once the pair is complete everyone's are shown, so a relabel after
    that moment is no longer independent and is not what agreement measures.
    Pairs not complete yet count with their current labels; a labeller who came
    after completion counts with their first label.

    In order of the pairs' first label, then of the labellers' first label on the pair. The labels are kept as
    numbered columns and worked out with numpy: a Python object per label is many times the memory.
    """
    needed = project.labellers_per_pair
    deleted = deleted_pairs(project)
    pair_column, labeller_column, kind_column, value_column, time_column = (array("q") for _ in range(5))
    kinds: dict[str, int] = {}
    values: dict[str, int] = {}
    start: Any = None
    for kind, pair_id, labeller_id, value, created_at in (
        ArticleLabel.objects.filter(project=project)
        .order_by("created_at", "id")
        .values_list("kind", "pair_id", "labeller_id", "value", "created_at")
        .iterator(chunk_size=ROWS_PER_FETCH)
    ):
        if pair_id in deleted:
            continue
        if start is None:
            start = created_at
        pair_column.append(pair_id)
        labeller_column.append(labeller_id)
        kind_column.append(kinds.setdefault(kind, len(kinds)))
        value_column.append(values.setdefault(value, len(values)))
        time_column.append((created_at - start) // timedelta(microseconds=1))  # exact, and in the rows' order
    pair, labeller, kind_code, value_code, time = (
        np.frombuffer(column, dtype=np.int64)
        for column in (pair_column, labeller_column, kind_column, value_column, time_column)
    )
    n = len(pair)
    if n == 0:
        return {}
    # Rows by pair, labeller, kind, then time: each (pair, labeller, kind) a run, each pair a run of runs.
    order = np.lexsort((np.arange(n), kind_code, labeller, pair))
    pair, labeller, kind_code, time = pair[order], labeller[order], kind_code[order], time[order]
    del pair_column, labeller_column, kind_column, time_column  # sorted copies above; a project's labels are many
    new_pair = np.r_[True, pair[1:] != pair[:-1]]
    new_labeller = new_pair | np.r_[True, labeller[1:] != labeller[:-1]]
    new_kind = new_labeller | np.r_[True, kind_code[1:] != kind_code[:-1]]
    pair_of_row = np.cumsum(new_pair) - 1
    labeller_of_row = np.cumsum(new_labeller) - 1
    run_start = np.flatnonzero(new_kind)
    run_end = np.r_[run_start[1:], n]
    run_pair, run_labeller, run_kind = pair_of_row[run_start], labeller_of_row[run_start], kind_code[run_start]
    del kind_code, new_kind
    # A labeller is done once they gave every kind: at the latest of their first labels of each kind.
    known = np.isin(run_kind, [kinds[kind] for kind in LabelKind.values if kind in kinds])
    n_labellers = int(labeller_of_row[-1]) + 1
    done = np.full(n_labellers, np.iinfo(np.int64).min)
    np.maximum.at(done, run_labeller[known], time[run_start[known]])
    finished = np.bincount(run_labeller[known], minlength=n_labellers) == len(LabelKind.values)
    # A pair is complete when its `needed`-th labeller was done.
    labeller_pair = pair_of_row[np.flatnonzero(new_labeller)]
    ranked = np.flatnonzero(finished)
    ranked = ranked[np.lexsort((done[ranked], labeller_pair[ranked]))]
    ranked_pair = labeller_pair[ranked]
    rank = np.arange(len(ranked)) - np.searchsorted(ranked_pair, ranked_pair)
    n_pairs = int(pair_of_row[-1]) + 1
    complete = np.zeros(n_pairs, dtype=bool)
    complete_at = np.zeros(n_pairs, dtype=np.int64)
    if needed >= 1:
        at = rank == needed - 1
    else:  # the last done, as `done[needed - 1]` reads then
        at = np.r_[ranked_pair[1:] != ranked_pair[:-1], True] if len(ranked) else np.zeros(0, dtype=bool)
    complete[ranked_pair[at]] = True
    complete_at[ranked_pair[at]] = done[ranked[at]]
    # The label as it stood at completion (the last one up to then, else the first); the current one if none.
    up_to = np.add.reduceat(time <= complete_at[pair_of_row], run_start, dtype=np.int64)
    del time, complete_at  # from here on, what is no longer needed is let go: a project's labels are many
    chosen = np.where(complete[run_pair], np.where(up_to > 0, run_start + up_to - 1, run_start), run_end - 1)
    del up_to, run_end, complete
    run_value = value_code[order[chosen]]
    del chosen, value_code, value_column
    # Rows are numbered in time order: a pair's (a labeller's on it) first row is its smallest number.
    pair_seen = np.minimum.reduceat(order, np.flatnonzero(new_pair))
    labeller_seen = np.minimum.reduceat(order, np.flatnonzero(new_labeller))
    del order, new_pair, new_labeller, pair_of_row, labeller_of_row
    run_pair_id, run_labeller_id = pair[run_start], labeller[run_start]
    del pair, labeller, run_start
    value_texts = list(values)
    out = {}
    for kind, code in kinds.items():
        runs = np.flatnonzero(run_kind == code)
        runs = runs[np.lexsort((labeller_seen[run_labeller[runs]], pair_seen[run_pair[runs]]))]
        out[kind] = (run_pair_id[runs], run_labeller_id[runs], run_value[runs], value_texts)
    return out


def _label_scopes(project: Project) -> Iterator[Scope]:
    """One scope per kind of article label, a kind at a time: the next kind's table is made once the report let
    the one before go (its labels wait as three numbered columns)."""
    labels = _independent_labels(project)
    names = _usernames(labeller for _, labellers, _, _ in labels.values() for labeller in np.unique(labellers).tolist())
    declared: dict[str, list[str]] = {LabelKind.TOPIC: list(project.topics), LabelKind.REGION: list(project.regions)}
    none = np.zeros(0, dtype=np.int64)
    for kind in LabelKind.values:
        pairs, labellers, value_codes, value_texts = labels.pop(kind, (none, none, none, []))
        given = [value_texts[code] for code in np.unique(value_codes).tolist()]
        categories = declared[kind] + sorted(set(given) - set(declared[kind]))
        number = {category: at for at, category in enumerate(dict.fromkeys(categories))}
        # The value texts are both kinds': the other kind's are never this kind's values.
        category_of = np.array([number.get(value, -1) for value in value_texts] or [0], dtype=np.int64)
        units, unit_index = np.unique(pairs, return_inverse=True)
        labeller_ids, labeller_index = np.unique(labellers, return_inverse=True)
        table = rating_table_from_indices(
            "nominal",
            units=units.tolist(),
            raters=[names[labeller] for labeller in labeller_ids.tolist()],
            categories=categories,
            unit_index=unit_index,
            rater_index=labeller_index,
            code=category_of[value_codes],
        )
        del pairs, labellers, value_codes, unit_index, labeller_index
        yield Scope(
            key=f"label:{kind}",
            kind="label",
            label=f"Article label: {LabelKind(kind).label.lower()}",
            level="nominal",
            categories=categories,
            unit="pair",
            table=table,
            links=IdColumns(units, {"pair_id": units}),
            notes=[
                "Each labeller's label as it stood when the pair's labelling was complete, before anyone saw "
                "the others' labels and before adjudication; later relabels are not counted."
            ],
        )
        del table, units


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


SCOPE_GATHERERS: list[Callable[[Project], Iterable[Scope]]] = [
    _review_scopes,
    _label_scopes,
    _screening_scope,
    _kind_scopes,
]


def scopes_each(project: Project) -> Iterator[tuple[int, Scope]]:
    """Every kind of judgment of the project, in a handful of queries (no per-row queries), a scope at a time
    with the number of its gatherer in `SCOPE_GATHERERS` (for progress).

    Each scope is coded into its table as soon as its gatherer gives it, so only one gatherer's judgment
    tuples are held at a time; a caller that lets each scope go before taking the next holds one scope's table.
    """
    for number, gather in enumerate(SCOPE_GATHERERS):
        for scope in gather(project):
            scope.rating_table()
            yield number, scope
            del scope  # not held while the next gatherer reads its rows


def scopes_gather(project: Project) -> list[Scope]:
    """Every scope of the project at once (`scopes_each`)."""
    return [scope for _, scope in scopes_each(project)]


# Computing


DIGESTED_PER_STEP = 10_000


def _digest_strata(strata: Mapping[str, Mapping[Hashable, str]]) -> str:
    """sha256 over each stratification's name and the JSON text of its sorted [unit text, label] list.

    The text is fed a slice at a time, to the same bytes as one `json.dumps` of the whole list (its items
    joined by ", " between brackets), so the fingerprints stay what they were; a project's whole list and its
    text at once were a large part of a big report's memory."""
    digest = hashlib.sha256()
    for name in sorted(strata):
        digest.update(name.encode())
        mapping = strata[name]
        units = sorted(mapping, key=str)  # units are distinct: their texts alone give the order
        digest.update(b"[")
        for start in range(0, len(units), DIGESTED_PER_STEP):
            step = [[str(unit), mapping[unit]] for unit in units[start : start + DIGESTED_PER_STEP]]
            digest.update(((", " if start else "") + json.dumps(step)[1:-1]).encode())
        digest.update(b"]")
    return digest.hexdigest()


def _fingerprint_header(bootstrap: int, seed: int) -> bytes:
    return f"schema {SCHEMA_VERSION} bootstrap {bootstrap} seed {seed}\n".encode()


def _scope_fingerprint_text(scope: Scope) -> bytes:
    """What a scope adds to the report's fingerprint: its key, its judgments, its strata and its figures. A scope
    whose text is unchanged has the same statistics (the report's bootstrap and seed being the same)."""
    text = f"{scope.key}\t{scope.rating_table().fingerprint}\t{_digest_strata(scope.strata)}\n".encode()
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
            for number, scope in scopes_each(project):
                step(5 + 90 * number // len(SCOPE_GATHERERS), f"Computing {scope.key}")
                text = _scope_fingerprint_text(scope)
                digest.update(text)
                scope_fingerprint = "sha256:" + hashlib.sha256(text).hexdigest()
                before = reusable.get(scope.key)
                if before is not None and before.get("fingerprint") == scope_fingerprint:
                    # The same judgments and strata: the same statistics. What is written about the scope is current.
                    result_scopes[scope.key] = {**before, "label": scope.label, "notes": scope.notes}
                else:
                    computed = scope_compute(scope, scope.rating_table(), bootstrap=bootstrap, seed=seed)
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
