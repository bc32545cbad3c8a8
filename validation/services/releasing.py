"""What a validation release holds: which items are left out and why, and each item's split.

The release writer (`validation.release`) asks for the plan once, before the
first chunk: exact split sizes need every released item, and so does keeping a
set of duplicates in one split.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from annotation.models import Project
from exports.splits import ReleaseUnits, split_assign
from validation.models import QUESTION_BAD_REASONS, DomainLabel, LeaveOut, SourceDomain, ValidationItem
from validation.services.aggregates import judgments_aggregate
from validation.services.projects import validation_settings


def assign_splits(groups: Sequence[Sequence[int]], shares: Mapping[str, int], seed: int) -> dict[int, str]:
    """Each item's split: whole groups (an item and its duplicates) to one split, by the one split function of
    every kind (exports.splits), each group keyed by its first item."""
    units = ReleaseUnits.counted("item", ((min(group), len(group)) for group in groups if group))
    assigned = split_assign(units, shares, seed)
    return {item: split for group in groups if group and (split := assigned.get(min(group))) for item in group}


@dataclass
class ReleasePlan:
    """The items a release holds (by item id) with their split, and the ones left out with the reason."""

    split_of: dict[int, str | None] = field(default_factory=dict)
    groups: dict[int, int] = field(default_factory=dict)  # first item of a set of duplicates → its items
    group_of: dict[int, int] = field(default_factory=dict)  # item → the first item of its set (the group key)
    left_out: dict[int, str] = field(default_factory=dict)
    # Reason → how many; for bad questions also the validators' reason → how many.
    left_out_counts: dict[str, int] = field(default_factory=dict)
    bad_question_reasons: dict[str, int] = field(default_factory=dict)
    languages: list[str] = field(default_factory=list)


def leave_out_reason(
    *, aggregate: Mapping[str, object], domain_label: str | None, leave_out: Iterable[str]
) -> str | None:
    """Why an item stays out of a release under the project's setting (None: it is released)."""
    rules = set(leave_out)
    if LeaveOut.BAD_QUESTION in rules and aggregate.get("question") == "bad":
        return LeaveOut.BAD_QUESTION
    if LeaveOut.UNRELIABLE_DOMAIN in rules and domain_label == DomainLabel.COMPLETELY_UNRELIABLE:
        return LeaveOut.UNRELIABLE_DOMAIN
    return None


def validation_release_plan(
    *, project: Project, item_ids: Iterable[int], splits: Mapping[str, int], seed: int
) -> ReleasePlan:
    """Which of `item_ids` (the items the builder releases) are left out, and the split of the others."""
    settings = validation_settings(project)
    ids = set(item_ids)
    vitems = list(
        ValidationItem.objects.filter(project=project, item_id__in=ids)
        .prefetch_related("item__validation_judgments")
        .order_by("id")
    )
    labels = dict(SourceDomain.objects.filter(project=project).values_list("domain", "label"))
    plan = ReleasePlan()
    reasons: Counter[str] = Counter()
    bad: Counter[str] = Counter()
    kept: list[ValidationItem] = []
    for vitem in vitems:
        aggregate = judgments_aggregate(list(vitem.item.validation_judgments.all()), settings.likert_criteria)
        reason = leave_out_reason(
            aggregate=aggregate, domain_label=labels.get(vitem.domain), leave_out=settings.release_leave_out
        )
        if reason is None:
            kept.append(vitem)
            continue
        plan.left_out[vitem.item_id] = reason
        reasons[reason] += 1
        if reason == LeaveOut.BAD_QUESTION:
            bad[str(aggregate.get("question_reason") or "no majority reason")] += 1
    plan.left_out_counts = {reason: reasons[reason] for reason in LeaveOut.values if reasons[reason]}
    names = dict(QUESTION_BAD_REASONS)
    plan.bad_question_reasons = {names.get(key, key): count for key, count in sorted(bad.items())}
    plan.languages = sorted({vitem.language for vitem in kept if vitem.language}) or [project.standard_language]
    # Duplicates not merged yet share their first item's split: group by the root of `duplicate_of`.
    by_id = {vitem.pk: vitem for vitem in kept}
    groups: dict[int, list[int]] = defaultdict(list)
    for vitem in kept:
        root = vitem
        seen = {root.pk}
        while root.duplicate_of_id in by_id and root.duplicate_of_id not in seen:
            root = by_id[root.duplicate_of_id]
            seen.add(root.pk)
        groups[root.pk].append(vitem.item_id)
    plan.groups = {min(group): len(group) for group in groups.values()}
    plan.group_of = {item: min(group) for group in groups.values() for item in group}
    assigned = assign_splits(list(groups.values()), splits, seed) if splits else {}
    plan.split_of = {vitem.item_id: assigned.get(vitem.item_id) for vitem in kept}
    return plan


def validation_release_units(project: Project, statuses: list[str]) -> ReleaseUnits:
    """What a validation release splits (sets of duplicates) and leaves out, for the release's split plan."""
    from exports.records import release_items

    plan = validation_release_plan(
        project=project, item_ids=release_items(project, statuses).values_list("pk", flat=True), splits={}, seed=0
    )
    reasons = dict(LeaveOut.choices)
    left_out = {str(reasons.get(reason, reason)).lower(): n for reason, n in plan.left_out_counts.items()}
    return ReleaseUnits.counted("item", plan.groups.items(), left_out)
