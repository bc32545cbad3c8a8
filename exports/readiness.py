"""Release readiness: what is unfinished in a project before (and when) a release is built.

Each check counts one kind of unfinished work and links to where it is done.
Only the checks that make sense for the project's kind are made: labels and
full-document verification are steps of Wikipedia QA projects; review, rewrites,
rejections, splits and agreement apply to every kind whose items are reviewed.
A coordinator may build anyway; the build records the checks it found (in the
release row, the dataset card and the manifest).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from django.db.models import Count, Exists, Max, OuterRef, Q
from django.urls import reverse

from annotation.models import PagePair, Project, QAItem, deleted_pairs
from annotation.queries import ItemFilter, items_by_verification
from exports.records import release_items
from exports.splits import SPLIT_NAMES, SplitPlan, release_split_plan

TINY_SPLIT = 10  # a split with fewer items than this gives figures with no meaning


@dataclass(frozen=True)
class Check:
    code: str
    label: str  # what is unfinished, for a person: "Pairs with released items not labelled"
    count: int
    url: str = ""  # where the work is done
    detail: str = ""

    def as_record(self) -> dict[str, Any]:
        """What a release file keeps of the check (no links: they point into this installation)."""
        return {"check": self.code, "label": self.label, "count": self.count, "detail": self.detail}


@dataclass
class Readiness:
    checked: list[str] = field(default_factory=list)  # the checks made, unfinished or not
    unfinished: list[Check] = field(default_factory=list)
    # The split plan of the release as chosen (sizes per split, groups, items left out, its description).
    splits: dict[str, Any] = field(default_factory=dict)

    @property
    def ready(self) -> bool:
        return not self.unfinished

    def as_dict(self) -> dict[str, Any]:
        return {
            "ready": self.ready,
            "checked": self.checked,
            "unfinished": [asdict(c) for c in self.unfinished],
            "splits": self.splits,
        }

    def as_record(self) -> dict[str, Any]:
        return {
            "ready": self.ready,
            "checked": self.checked,
            "unfinished": [c.as_record() for c in self.unfinished],
            "splits": self.splits,
        }


def _count(readiness: Readiness, code: str, label: str, count: int, url: str = "", detail: str = "") -> None:
    readiness.checked.append(code)
    if count:
        readiness.unfinished.append(Check(code, label, count, url, detail))


def _items_url(project: Project, status: str, *, verification: str = "") -> str:
    flt = ItemFilter(status=status, verification=verification)
    return reverse("item_list", args=[project.slug]) + "?" + flt.as_query()


def _review_app() -> bool:
    try:
        import review.models  # noqa: F401
    except ImportError:
        return False
    return True


def release_readiness(
    project: Project,
    *,
    statuses: list[str],
    splits: dict[str, int],
    seed: int | None,
    plan: SplitPlan | None = None,
) -> Readiness:
    """Every applicable check of `project` for a release of items with `statuses`, split by `splits` from `seed`.

    Splits are judged by the plan the release will be built with (exports.splits); without a seed, by the
    sizes its shares ask for. A build passes the `plan` it was made with (the same one, not drawn twice).
    """
    readiness = Readiness()
    released = release_items(project, statuses)
    # Not a join on every project's pairs (`deleted_pairs`; tests/test_coordinator_plans.py).
    alive = QAItem.objects.alive().filter(project=project).exclude(pair_id__in=deleted_pairs(project))
    wikipedia = project.kind == Project.Kind.WIKIPEDIA_QA
    review_app = _review_app()

    if wikipedia and review_app:
        from review.models import FinalLabel, LabelKind

        kinds = [
            kind for kind, values in ((LabelKind.TOPIC, project.topics), (LabelKind.REGION, project.regions)) if values
        ]
        if kinds:
            pairs = PagePair.objects.filter(project=project, pk__in=released.values("pair_id"))
            labelled = Q()
            for kind in kinds:
                labelled &= Q(Exists(FinalLabel.objects.filter(project=project, pair=OuterRef("pk"), kind=kind)))
            # Imported projects bring labels in metadata; a positive filter (a missing key is NULL on PostgreSQL).
            with_labels = PagePair.objects.filter(project=project, metadata__wilova__has_key="labels")
            imported = Q(pk__in=with_labels.values("pk"))
            _count(
                readiness,
                "pairs_not_labelled",
                "Pairs with released items and no final " + " or ".join(str(LabelKind(k).label).lower() for k in kinds),
                pairs.exclude(labelled | imported).count(),
                reverse("label_list", args=[project.slug]) + "?todo=1",
            )
        # Counted as the item list filters them (annotation.queries.items_by_verification), so each link opens
        # the very items counted. A verification speaks for the answer text it checked
        # (Verification.is_current_for): the latest one of an answer changed since needs a new check.
        _count(
            readiness,
            "items_not_verified",
            "Lead QAs not checked against the full standard page",
            items_by_verification(released, "none").count(),
            _items_url(project, QAItem.Status.ACCEPTED, verification="none"),
        )
        _count(
            readiness,
            "items_verification_outdated",
            "Lead QAs whose answer changed after it was checked against the full standard page",
            items_by_verification(released, "outdated").count(),
            _items_url(project, QAItem.Status.ACCEPTED, verification="outdated"),
        )

    waiting = dict(
        alive.filter(status__in=[QAItem.Status.SUBMITTED, QAItem.Status.NEEDS_REWRITE, QAItem.Status.REJECTED])
        .values_list("status")
        .annotate(n=Count("id"))
        .order_by()
    )
    for status, code, label in (
        (QAItem.Status.SUBMITTED, "items_in_review", "Items still in review"),
        (QAItem.Status.NEEDS_REWRITE, "items_needing_rewrite", "Items waiting for a rewrite"),
        (QAItem.Status.REJECTED, "items_rejected", "Rejected items (left out unless included)"),
    ):
        _count(readiness, code, label, waiting.get(status, 0), _items_url(project, status))

    _check_splits(readiness, project, statuses, splits, seed, plan)

    if review_app:
        _check_agreement(readiness, project)
    return readiness


def _check_splits(
    readiness: Readiness,
    project: Project,
    statuses: list[str],
    splits: dict[str, int],
    seed: int | None,
    plan: SplitPlan | None,
) -> None:
    """The split plan the release will be built with (exports.splits, the build's own function and seed);
    splits with no items, or too few to mean anything (fewer than TINY_SPLIT), are unfinished."""
    shares = {name: splits[name] for name in SPLIT_NAMES if splits.get(name)}
    readiness.checked.append("splits_small")
    if plan is None:
        plan = release_split_plan(project, statuses=statuses, shares=shares, seed=seed)
    readiness.splits = plan.as_record() | {"description": plan.describe()}
    if not shares:
        return
    sizes = plan.sizes
    small = [name for name in shares if sizes.get(name, 0) < TINY_SPLIT]
    if small:
        readiness.unfinished.append(
            Check(
                "splits_small",
                f"Splits that are empty or tiny (fewer than {TINY_SPLIT} items)",
                len(small),
                reverse("release_list", args=[project.slug]) + "#release-form",
                plan.describe(),
            )
        )


def _check_agreement(readiness: Readiness, project: Project) -> None:
    """No finished agreement report, or judgments or labels made since the latest."""
    from review.models import AgreementReport, ArticleLabel, Judgment

    judgments = Judgment.objects.filter(project=project)
    labels = ArticleLabel.objects.filter(project=project)
    # The newest of each through the project's index, not `exists()`: its LIMIT 1 lets the planner hope to meet
    # one of the project's rows early in a scan of every project's.
    newest = judgments.aggregate(top=Max("id"))["top"], labels.aggregate(last=Max("created_at"))["last"]
    if newest == (None, None):
        return  # nothing to agree on (yet): no report is missing
    latest = AgreementReport.objects.filter(project=project).done().order_by("-finished_at", "-id").first()
    url = reverse("agreement", args=[project.slug])
    if latest is None:
        _count(readiness, "agreement_not_computed", "Agreement not computed (no finished report)", 1, url)
        return
    newer = judgments.filter(id__gt=latest.judgment_watermark).count()
    newer += labels.filter(created_at__gt=latest.finished_at).count() if latest.finished_at else 0
    _count(
        readiness,
        "agreement_not_computed",
        "Judgments and labels made since the latest agreement report",
        newer,
        url,
        f"report #{latest.pk}",
    )
