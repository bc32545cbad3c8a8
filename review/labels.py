"""Article labels and their adjudication."""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from django.contrib.auth.models import User
from django.db import IntegrityError, transaction
from django.db.models import Count, F, Q, QuerySet
from django.utils import timezone

from annotation.models import PagePair, Project, Screening
from audit import services as audit
from audit.models import Action
from common.errors import InvalidInput, InvalidState, StaleEdit
from review.models import ArticleLabel, FinalLabel, LabelKind


def labelable_pairs(project: Project) -> QuerySet[PagePair]:
    """Kept pairs: screened for annotation (being annotated or submitted)."""
    return PagePair.objects.filter(project=project, screening_decision=Screening.Decision.ANNOTATE)


def pair_next_unlabelled(*, project: Project, user: User, after: PagePair) -> PagePair | None:
    """The next kept pair (by id, wrapping round) that `user` has not labelled in every kind, or None."""
    todo = (
        labelable_pairs(project)
        .exclude(pk=after.pk)
        .annotate(mine=Count("labels", filter=Q(labels__superseded_at__isnull=True, labels__labeller=user)))
        .filter(mine__lt=len(LabelKind.values))
        .only("id", "project_id")
    )
    return todo.filter(pk__gt=after.pk).order_by("pk").first() or todo.order_by("pk").first()


def _label_values(project: Project, kind: str) -> list[str]:
    return list(project.topics if kind == LabelKind.TOPIC else project.regions)


def labels_agree(labels: list[ArticleLabel]) -> bool:
    """Labellers agree on a kind when they chose the same value and no two of them named different finer regions:
    Hong Kong and Guangdong both fold into the local region, yet they are a disagreement to adjudicate."""
    return len({label.value for label in labels}) == 1 and len({label.detail for label in labels} - {""}) <= 1


def pair_label_state(pair: PagePair) -> dict[str, Any]:
    """Who has labelled what (current rows), whether the pair is complete, and its final labels."""
    labels = list(ArticleLabel.objects.current().filter(pair=pair).select_related("labeller"))
    by_labeller: dict[int, dict[str, ArticleLabel]] = defaultdict(dict)
    for label in labels:
        by_labeller[label.labeller_id][label.kind] = label
    done = [uid for uid, kinds in by_labeller.items() if len(kinds) == len(LabelKind.values)]
    needed = pair.project.labellers_per_pair
    finals = {final.kind: final for final in FinalLabel.objects.filter(pair=pair).select_related("adjudicator")}
    return {
        "labels": labels,
        "by_labeller": by_labeller,
        "done": done,
        "complete": len(done) >= needed,
        "needed": needed,
        "finals": finals,
    }


def label_set(*, pair: PagePair, user: User, kind: str, value: str, detail: str = "", version: int = 0) -> ArticleLabel:
    """Record (or change) this labeller's label of one kind. `version`: that of the label you saw, 0 for none.

    A change supersedes the earlier row; the raw rows stay for agreement statistics.
    """
    project = pair.project
    if kind not in LabelKind.values:
        raise InvalidInput(f"Unknown label kind {kind!r}: use topic or region.", field="kind")
    allowed = _label_values(project, kind)
    if value not in allowed:
        raise InvalidInput(
            f"{value!r} is not a {kind} of this project (use one of {', '.join(allowed)}).", field="value"
        )
    detail = (detail or "").strip()
    if len(detail) > 200:
        raise InvalidInput("The finer region is at most 200 characters.", field="detail")
    if detail and kind != LabelKind.REGION:
        raise InvalidInput("Only a region label has a finer region.", field="detail")
    if pair.screening_decision != Screening.Decision.ANNOTATE:
        raise InvalidState("Only kept pairs (screened for annotation) get article labels.", field="pair")
    now = timezone.now()
    with transaction.atomic():
        PagePair.objects.select_for_update().filter(pk=pair.pk).first()  # one labeller at a time per pair
        current = ArticleLabel.objects.current().filter(pair=pair, labeller=user, kind=kind).first()
        if (current.version if current else 0) != version:
            raise StaleEdit(
                f"Your {kind} label changed in the meantime (now version {current.version if current else 0}).",
                current=current,
            )
        if current is None:
            labellers = set(
                ArticleLabel.objects.current().filter(pair=pair).values_list("labeller_id", flat=True).distinct()
            )
            if user.pk not in labellers and len(labellers) >= project.labellers_per_pair:
                raise InvalidState(f"This pair already has its {project.labellers_per_pair} labellers.", field="pair")
        elif (current.value, current.detail) == (value, detail):
            return current
        else:
            ArticleLabel.objects.filter(pk=current.pk).update(superseded_at=now)
        label = ArticleLabel.objects.create(
            project_id=pair.project_id,
            pair=pair,
            labeller=user,
            kind=kind,
            value=value,
            detail=detail,
            version=(current.version + 1) if current else 1,
            created_at=now,
        )
        audit.record(
            user,
            Action.LABEL_SET,
            label,
            project=project,
            label=str(pair),
            pair=pair.pk,
            kind=kind,
            before=current.value if current else None,
            after=value,
            detail=detail,
        )
        _finalise_agreement(pair, actor=user)
    return label


def _finalise_agreement(pair: PagePair, *, actor: User | None = None) -> None:
    """When every labeller is done and agrees on a kind, that is the final label (unless adjudicated)."""
    state = pair_label_state(pair)
    if not state["complete"]:
        return
    for kind in LabelKind.values:
        labels = [state["by_labeller"][uid][kind] for uid in state["done"]]
        final = state["finals"].get(kind)
        if final is not None and final.method == FinalLabel.Method.ADJUDICATED:
            continue
        if labels_agree(labels):
            value = labels[0].value
            detail = next((label.detail for label in labels if label.detail), "")
            row, _ = FinalLabel.objects.update_or_create(
                pair=pair,
                kind=kind,
                defaults={
                    "project_id": pair.project_id,
                    "value": value,
                    "detail": detail,
                    "method": FinalLabel.Method.AGREEMENT,
                    "adjudicator": None,
                },
            )
            if final is None or (final.value, final.detail) != (value, detail):
                audit.record(
                    actor,
                    Action.LABEL_AGREED,
                    row,
                    project=pair.project,
                    label=str(pair),
                    pair=pair.pk,
                    kind=kind,
                    before=final.value if final else None,
                    after=value,
                )
        elif final is not None:  # a relabel broke an earlier agreement: back to adjudication
            audit.record(
                actor,
                Action.LABEL_AGREED,
                final,
                project=pair.project,
                label=str(pair),
                pair=pair.pk,
                kind=kind,
                before=final.value,
                after=None,
            )
            final.delete()


def labels_visible_to(state: dict[str, Any], user: User) -> list[ArticleLabel]:
    """A labeller sees only their own labels until the pair is complete; then everyone's."""
    if state["complete"]:
        return state["labels"]
    return [label for label in state["labels"] if label.labeller_id == user.pk]


def adjudication_list(project: Project) -> list[dict[str, Any]]:
    """Complete pairs where labellers disagree on a kind (a value, or a finer region: `labels_agree`) that has no
    final label yet (or has one, adjudicated)."""
    needed = project.labellers_per_pair
    rows = (
        ArticleLabel.objects.current()
        .filter(pair__project=project, pair__deleted_at__isnull=True)
        .select_related("labeller")
        .order_by("pair_id", "kind", "labeller__username")
    )
    per_pair: dict[int, dict[str, list[ArticleLabel]]] = defaultdict(lambda: defaultdict(list))
    for row in rows:
        per_pair[row.pair_id][row.kind].append(row)
    finals = {
        (f.pair_id, f.kind): f for f in FinalLabel.objects.filter(pair__project=project, pair_id__in=list(per_pair))
    }
    titles = dict(PagePair.objects.filter(pk__in=list(per_pair)).values_list("pk", "local_title"))
    result = []
    for pair_id, kinds in per_pair.items():
        labellers = [set(label.labeller_id for label in kinds.get(kind, [])) for kind in LabelKind.values]
        done = set.intersection(*labellers) if labellers else set()
        if len(done) < needed:
            continue
        for kind in LabelKind.values:
            if not labels_agree([label for label in kinds[kind] if label.labeller_id in done]):
                final = finals.get((pair_id, kind))
                result.append(
                    {
                        "pair_id": pair_id,
                        "title": titles.get(pair_id, ""),
                        "kind": kind,
                        "labels": [label for label in kinds[kind] if label.labeller_id in done],
                        "final": final,
                    }
                )
    return result


def label_adjudicate(
    *, pair: PagePair, user: User, kind: str, value: str, detail: str = "", version: int = 0
) -> FinalLabel:
    """Record the final label of a kind for a pair. `version`: of the final label you saw, 0 for none."""
    project = pair.project
    if kind not in LabelKind.values:
        raise InvalidInput(f"Unknown label kind {kind!r}: use topic or region.", field="kind")
    allowed = _label_values(project, kind)
    if value not in allowed:
        raise InvalidInput(
            f"{value!r} is not a {kind} of this project (use one of {', '.join(allowed)}).", field="value"
        )
    detail = (detail or "").strip()[:200]
    state = pair_label_state(pair)
    if not state["complete"]:
        raise InvalidState(
            f"Adjudication waits until {state['needed']} labellers have labelled this pair.", field="pair"
        )
    now = timezone.now()
    with transaction.atomic():
        current = FinalLabel.objects.select_for_update().filter(pair=pair, kind=kind).first()
        if (current.version if current else 0) != version:
            raise StaleEdit("The final label changed in the meantime; reload it.", current=current)
        values = {"value": value, "detail": detail, "method": FinalLabel.Method.ADJUDICATED, "adjudicator": user}
        if current is None:
            try:
                with transaction.atomic():
                    created = FinalLabel.objects.create(
                        project_id=pair.project_id, pair=pair, kind=kind, updated_at=now, **values
                    )
            except IntegrityError:
                raise StaleEdit("The final label was set at the same moment; reload it.", current=None) from None
            audit.record(
                user,
                Action.LABEL_ADJUDICATED,
                created,
                project=project,
                label=str(pair),
                pair=pair.pk,
                kind=kind,
                before=None,
                after=value,
                detail=detail,
            )
            return created
        FinalLabel.objects.filter(pk=current.pk).update(**values, version=F("version") + 1, updated_at=now)
        audit.record(
            user,
            Action.LABEL_ADJUDICATED,
            current,
            project=project,
            label=str(pair),
            pair=pair.pk,
            kind=kind,
            before=current.value,
            after=value,
            detail=detail,
        )
        current.refresh_from_db()
    return current
