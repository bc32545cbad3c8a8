"""Business rules of review, full-document verification, article labels and the coordinator's numbers.

Views, the API, commands and tasks call these functions. Every status change
of an item is a conditional update plus an ItemEvent (who, when); nothing is
overwritten in place: a rewrite is a new revision and a new review round.
"""

from __future__ import annotations

import difflib
import functools
import re
import statistics
from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

import opencc
from django.contrib.auth.models import AbstractBaseUser
from django.db import IntegrityError, transaction
from django.db.models import Count, F, OuterRef, Q, Subquery
from django.utils import timezone
from rapidfuzz import fuzz

from annotation.languages import UnknownLanguage, get_language
from annotation.models import (
    EvidenceSpan,
    Membership,
    PagePair,
    Project,
    QAItem,
    QAItemRevision,
    Screening,
)
from annotation.services import MAX_TEXT_FIELD, _check_item_text, check_document_evidence, qa_item_revision_create
from audit import services as audit
from audit.models import Action
from common import kinds as project_kinds
from common.errors import InvalidInput, InvalidState, StaleEdit
from review.models import (
    ArticleLabel,
    FinalLabel,
    ItemEvent,
    Judgment,
    LabelKind,
    ReviewerLanguages,
    ReviewSlot,
    Verification,
)
from review.reports import agreement_report_after_judgments

REVIEWABLE = QAItem.Status.SUBMITTED
Status = QAItem.Status


def _event(item: QAItem, actor: AbstractBaseUser | None, action: str, *, before: str = "", after: str = "", **kw: Any):
    return ItemEvent.objects.create(
        item=item, actor=actor, action=action, from_status=before, to_status=after, created_at=timezone.now(), **kw
    )


def _set_status(item: QAItem, *, before: Iterable[str], after: str, version: int | None = None) -> bool:
    """Move an item between statuses with a conditional update; False if it was not in `before` (or not at version)."""
    query = QAItem.objects.alive().filter(pk=item.pk, status__in=list(before))
    if version is not None:
        query = query.filter(version=version)
    return bool(query.update(status=after, version=F("version") + 1, updated_at=timezone.now()))


def _stale_or_state(item: QAItem, version: int, allowed: Iterable[str], doing: str) -> None:
    """After a refused conditional update: say whether the item moved on (409 state) or was saved elsewhere."""
    current = QAItem.objects.filter(pk=item.pk).first()
    if current is None or current.deleted_at is not None:
        raise InvalidState("This item was deleted.", field="item")
    if current.status not in allowed:
        raise InvalidState(f"The item is {current.get_status_display().lower()}; it cannot be {doing}.", field="item")
    raise StaleEdit(
        f"This item changed in the meantime (now version {current.version}, you had version {version}); reload it.",
        current=current,
    )


# Reviewers and the languages they read


def reader_languages(membership: Membership) -> list[str]:
    """The languages a member reads for review; by default just the project's standard language."""
    row = getattr(membership, "reader_languages", None) if membership.pk else None
    if row is None:
        return [membership.project.standard_language]
    return list(row.languages)


def reviewers_eligible(project: Project):  # type: ignore[no-untyped-def]
    """Members who may be routed items: the reviewer role, and the project's standard language read."""
    members = Membership.objects.filter(project=project, is_reviewer=True).select_related("user", "reader_languages")
    return [m for m in members if project.standard_language in reader_languages(m)]


def _require_reviewer(project: Project, user: AbstractBaseUser) -> None:
    if user.is_superuser:
        return
    membership = getattr(project, "membership", None)  # loaded by the access check of this request
    if membership is None or membership.user_id != user.pk or membership.pk is None:
        membership = Membership.objects.filter(project=project, user=user).select_related("reader_languages").first()
    if membership is None or not membership.is_reviewer:
        raise InvalidState("Only reviewers of the project review items.", field="reviewer")
    membership.project = project
    if project.standard_language not in reader_languages(membership):
        raise InvalidState(
            f"Your reviewer languages do not include {project.standard.name} ({project.standard_language}), "
            "the language items are reviewed in; ask a coordinator.",
            field="reviewer",
        )


def reviewer_languages_set(
    *,
    project: Project,
    user: AbstractBaseUser,
    languages: Iterable[str],
    version: int | None = None,
    actor: AbstractBaseUser | None = None,
) -> ReviewerLanguages:
    """Say which languages a member reads (ISO 639-3 codes); `version` guards against a concurrent change."""
    membership = Membership.objects.filter(project=project, user=user).first()
    if membership is None:
        raise InvalidInput(f"{user} is not a member of this project.", field="username")
    codes: list[str] = []
    for index, code in enumerate(languages):
        try:
            codes.append(get_language(str(code).strip()).code)
        except UnknownLanguage as error:
            raise InvalidInput(f"languages[{index}]: {error}", field=f"languages[{index}]") from None
    codes = list(dict.fromkeys(codes))
    now = timezone.now()
    row = ReviewerLanguages.objects.filter(membership=membership).first()
    if row is None:
        if version not in (None, 0):
            raise StaleEdit("These languages were never saved; reload the page.", current=None)
        try:
            with transaction.atomic():
                created = ReviewerLanguages.objects.create(membership=membership, languages=codes, updated_at=now)
                audit.record(
                    actor, Action.MEMBER_LANGUAGES, membership, label=user.get_username(), before=[], after=codes
                )
                return created
        except IntegrityError:
            row = ReviewerLanguages.objects.get(membership=membership)
            raise StaleEdit("Someone else saved these languages just now; reload them.", current=row) from None
    query = ReviewerLanguages.objects.filter(pk=row.pk)
    if version is not None:
        query = query.filter(version=version)
    with transaction.atomic():
        if not query.update(languages=codes, version=F("version") + 1, updated_at=now):
            row.refresh_from_db()
            raise StaleEdit(
                f"These languages were changed by someone else (now version {row.version}); reload them.", current=row
            )
        if row.languages != codes:
            audit.record(
                actor, Action.MEMBER_LANGUAGES, membership, label=user.get_username(), before=row.languages, after=codes
            )
    row.refresh_from_db()
    return row


# Routing


def items_route(*, items: Iterable[QAItem], actor: AbstractBaseUser | None) -> list[ReviewSlot]:
    """Open the review round of each item's latest revision: `reviewers_per_item` slots, claimed from the queue.

    Called inside the transaction that submits (or resubmits) the items. Who may
    fill a slot is decided at claim time: a reviewer reading the standard language
    who is neither the item's author nor the author of the revision.
    """
    items = list(items)
    # Portable (no DISTINCT ON): the embedded SQLite default routes items too.
    newest_number = QAItemRevision.objects.filter(item_id=OuterRef("item_id")).order_by("-number").values("number")[:1]
    # One query for the revisions and one for the projects, however many items: an import routes thousands.
    latest = {
        revision.item_id: revision
        for revision in QAItemRevision.objects.filter(
            item_id__in=[item.pk for item in items], number=Subquery(newest_number)
        ).only("id", "item_id", "number")
    }
    wanted_by_project = dict(
        Project.objects.filter(pk__in={item.project_id for item in items}).values_list("pk", "reviewers_per_item")
    )
    slots: list[ReviewSlot] = []
    events: list[ItemEvent] = []
    now = timezone.now()
    for item in items:
        revision = latest.get(item.pk)
        if revision is None:
            raise InvalidState(f"Item {item.pk} has no revision to review.", field="item")
        wanted = wanted_by_project[item.project_id]
        slots += [
            ReviewSlot(item=item, revision=revision, number=number, created_at=now) for number in range(1, wanted + 1)
        ]
        if revision.number == 1:
            events.append(
                ItemEvent(
                    item=item,
                    actor=actor,
                    action=ItemEvent.Action.SUBMITTED,
                    from_status=Status.DRAFT,
                    to_status=Status.SUBMITTED,
                    revision_number=1,
                    created_at=now,
                )
            )
    ItemEvent.objects.bulk_create(events)
    return ReviewSlot.objects.bulk_create(slots)


def _claimable(project: Project, user: AbstractBaseUser, now):  # type: ignore[no-untyped-def]
    mine = ReviewSlot.objects.filter(reviewer=user).values("revision_id")
    return (
        ReviewSlot.objects.filter(item__project=project, item__status=REVIEWABLE, item__deleted_at__isnull=True)
        .available(now)
        .exclude(item__author=user)
        .exclude(revision__author=user)
        .exclude(revision_id__in=mine)
    )


def review_waiting_count(*, project: Project, user: AbstractBaseUser) -> int:
    """How many items `review_claim_next` could still hand this reviewer (one slot each, not their own)."""
    return _claimable(project, user, timezone.now()).values("item_id").distinct().count()


def _claim(slot_id: int, item_id: int, project: Project, user: AbstractBaseUser, now) -> bool:  # type: ignore[no-untyped-def]
    expires = now + timedelta(minutes=project.claim_minutes)
    try:
        with transaction.atomic():
            claimed = (
                ReviewSlot.objects.filter(pk=slot_id)
                .available(now)
                .update(
                    status=ReviewSlot.Status.CLAIMED,
                    reviewer=user,
                    claimed_at=now,
                    claim_expires_at=expires,
                    version=F("version") + 1,
                )
            )
            if claimed:  # only slots of items in review are claimable
                _event(QAItem(pk=item_id), user, ItemEvent.Action.CLAIMED, before=REVIEWABLE, after=REVIEWABLE)
    except IntegrityError:  # the same reviewer took another slot of this round at the same moment
        return False
    return bool(claimed)


def require_flow(project: Project, *, validation: bool = False) -> None:
    """Items of a validation project are judged on the validation screens only (validation.services), every
    other item on the review screens only: a pass/flag verdict would accept a collected pair without its
    validation tasks, and a validation judgment says nothing about the review criteria."""
    if project.kind == Project.Kind.VALIDATION and not validation:
        raise InvalidState(
            "This is a validation project: its items are judged on the validation screens.", field="item"
        )
    if project.kind != Project.Kind.VALIDATION and validation:
        raise InvalidState("Only items of a validation project are validated.", field="item")


def review_claim_next(*, project: Project, user: AbstractBaseUser, validation: bool = False) -> ReviewSlot | None:
    """Hand a reviewer the slot they hold, else the oldest slot they may fill; None when there is none.

    On PostgreSQL the candidate is taken FOR UPDATE SKIP LOCKED, so reviewers asking
    at once get different slots; the conditional update (and the unique
    (revision, reviewer) constraint) make a second delivery harmless. `validation`
    says the caller is the validation flow (see `require_flow`).
    """
    require_flow(project, validation=validation)
    _require_reviewer(project, user)
    now = timezone.now()
    held = (
        ReviewSlot.objects.filter(
            item__project=project, item__deleted_at__isnull=True, reviewer=user, status=ReviewSlot.Status.CLAIMED
        )
        .order_by("claimed_at")
        .first()
    )
    if held is not None:
        ReviewSlot.objects.filter(pk=held.pk).update(claim_expires_at=now + timedelta(minutes=project.claim_minutes))
        held.refresh_from_db()
        return held
    for _attempt in range(5):
        candidate = None
        # Open slots first, then claims left past their time: two simple conditions the (status, id)
        # index serves in id order, where one OR of both would make PostgreSQL sort every candidate.
        for status, extra in ((ReviewSlot.Status.OPEN, {}), (ReviewSlot.Status.CLAIMED, {"claim_expires_at__lt": now})):
            with transaction.atomic():
                candidate = (
                    _claimable(project, user, now)
                    .filter(status=status, **extra)
                    .select_for_update(skip_locked=True, of=("self",))
                    .order_by("id")
                    .only("id", "item_id")
                    .first()
                )
                # Claimed while the row is still locked, so reviewers asking at the same moment skip it
                # rather than all racing for the first open slot (and some running out of attempts).
                if candidate is not None and _claim(candidate.pk, candidate.item_id, project, user, now):
                    return ReviewSlot.objects.select_related("item", "revision").get(pk=candidate.pk)
            if candidate is not None:
                break  # the claim failed (this reviewer took another slot of the round at once): ask again
        if candidate is None:
            return None
    return None


def review_claim(*, item: QAItem, user: AbstractBaseUser) -> ReviewSlot:
    """Claim a slot of a chosen item (from the filtered list), or return the one the reviewer holds on it."""
    project = item.project
    require_flow(project)
    _require_reviewer(project, user)
    if item.author_id == user.pk:
        raise InvalidState("You wrote this item: someone else reviews it.", field="item")
    if item.status != REVIEWABLE:
        raise InvalidState(
            f"The item is {item.get_status_display().lower()}; only items in review can be claimed.", field="item"
        )
    held = ReviewSlot.objects.filter(item=item, reviewer=user, status=ReviewSlot.Status.CLAIMED).first()
    if held is not None:
        return held
    now = timezone.now()
    for _attempt in range(5):
        candidate = _claimable(project, user, now).filter(item=item).order_by("number").only("id", "item_id").first()
        if candidate is None:
            latest = item.revisions.order_by("-number").first()
            own = ReviewSlot.objects.filter(item=item, reviewer=user, revision=latest).first()
            if own is not None and own.status == ReviewSlot.Status.CLAIMED:
                return own  # taken by this reviewer's other request a moment ago
            if own is not None:
                raise InvalidState("You have already reviewed this revision of the item.", field="item")
            raise InvalidState("Every review slot of this item is taken.", field="item")
        if _claim(candidate.pk, item.pk, project, user, now):
            return ReviewSlot.objects.select_related("item", "revision").get(pk=candidate.pk)
    raise InvalidState("Every review slot of this item is taken.", field="item")


def review_release(*, slot: ReviewSlot, user: AbstractBaseUser) -> None:
    """Give a claimed slot back to the queue."""
    updated = ReviewSlot.objects.filter(pk=slot.pk, reviewer=user, status=ReviewSlot.Status.CLAIMED).update(
        status=ReviewSlot.Status.OPEN, reviewer=None, claimed_at=None, claim_expires_at=None, version=F("version") + 1
    )
    if not updated:
        raise InvalidState("This review is not held by you.", field="slot")


def review_record_activity(*, slot: ReviewSlot, user: AbstractBaseUser, seconds: int) -> None:
    """Add active seconds measured on the review screen; reading keeps the claim alive."""
    from annotation.services import MAX_ACTIVITY_SECONDS

    if not isinstance(seconds, int) or isinstance(seconds, bool) or seconds < 0:
        raise InvalidInput("seconds must be a non-negative whole number.", field="seconds")
    if slot.reviewer_id != user.pk or slot.status != ReviewSlot.Status.CLAIMED:
        raise InvalidState("This review is not held by you.", field="slot")
    seconds = min(seconds, MAX_ACTIVITY_SECONDS)
    if not seconds:
        return
    expires = timezone.now() + timedelta(minutes=slot.item.project.claim_minutes)
    ReviewSlot.objects.filter(pk=slot.pk, reviewer=user, status=ReviewSlot.Status.CLAIMED).update(
        active_seconds=F("active_seconds") + seconds, claim_expires_at=expires
    )


@dataclass(frozen=True)
class JudgmentInput:
    criterion: str
    verdict: str
    comment: str = ""


def _check_judgments(project: Project, judgments: Mapping[str, Mapping[str, Any]]) -> list[JudgmentInput]:
    if not isinstance(judgments, Mapping):
        raise InvalidInput("judgments must map each criterion to {verdict, comment}.", field="judgments")
    keys = [criterion["key"] for criterion in project.review_criteria]
    errors: dict[str, list[str]] = {}
    unknown = sorted(set(judgments) - set(keys))
    for key in unknown:
        errors[f"judgments.{key}"] = [f"is not a criterion of this project (use {', '.join(keys)})"]
    checked: list[JudgmentInput] = []
    for key in keys:
        raw = judgments.get(key)
        where = f"judgments.{key}"
        if not isinstance(raw, Mapping) or raw.get("verdict") not in Judgment.Verdict.values:
            errors[f"{where}.verdict"] = ["choose pass or flag"]
            continue
        comment = raw.get("comment") or ""
        if not isinstance(comment, str) or len(comment) > MAX_TEXT_FIELD:
            errors[f"{where}.comment"] = [f"must be text of at most {MAX_TEXT_FIELD} characters"]
            continue
        if raw["verdict"] == Judgment.Verdict.FLAG and project.flag_needs_reason and not comment.strip():
            errors[f"{where}.comment"] = ["a flag needs a reason: say what is wrong, for the author"]
            continue
        checked.append(JudgmentInput(key, raw["verdict"], comment.strip()))
    if errors:
        first = next(iter(errors))
        raise InvalidInput(f"{first}: {errors[first][0]}", field=first, details=errors)
    return checked


def review_submit(
    *, slot: ReviewSlot, user: AbstractBaseUser, version: int, judgments: Mapping[str, Mapping[str, Any]]
) -> ReviewSlot:
    """Record a reviewer's verdicts on every criterion; when the round is complete, decide the item.

    All criteria pass from all reviewers: accepted. Any flag: needs rewrite.
    """
    item = slot.item
    project = item.project
    require_flow(project)
    checked = _check_judgments(project, judgments)
    if item.author_id == user.pk:
        raise InvalidState("You wrote this item: you cannot review it.", field="item")
    now = timezone.now()
    with transaction.atomic():
        locked = QAItem.objects.select_for_update().get(pk=item.pk)
        if locked.deleted_at is not None or locked.status != REVIEWABLE:
            raise InvalidState(
                f"The item is {locked.get_status_display().lower()}; only items in review can be judged.",
                field="item",
            )
        updated = ReviewSlot.objects.filter(
            pk=slot.pk, reviewer=user, status=ReviewSlot.Status.CLAIMED, version=version
        ).update(status=ReviewSlot.Status.DONE, completed_at=now, version=F("version") + 1)
        if not updated:
            current = ReviewSlot.objects.get(pk=slot.pk)
            if current.reviewer_id != user.pk:
                raise InvalidState("This review slot is no longer yours: your claim expired and was taken.")
            if current.status == ReviewSlot.Status.DONE:
                raise InvalidState("You have already reviewed this revision of the item.", field="slot")
            if current.status != ReviewSlot.Status.CLAIMED:
                raise InvalidState("This review slot was cancelled.", field="slot")
            raise StaleEdit("This review changed in the meantime; reload it.", current=current)
        Judgment.objects.bulk_create(
            Judgment(
                slot=slot,
                item=item,
                revision_id=slot.revision_id,
                reviewer=user,
                criterion=j.criterion,
                verdict=j.verdict,
                comment=j.comment,
                created_at=now,
            )
            for j in checked
        )
        flags = [j.criterion for j in checked if j.verdict == Judgment.Verdict.FLAG]
        note = f"flagged: {', '.join(flags)}" if flags else "all criteria pass"
        _event(item, user, ItemEvent.Action.REVIEWED, before=REVIEWABLE, after=REVIEWABLE, note=note)
        _round_decide(locked, slot.revision_id)
    slot.refresh_from_db()
    agreement_report_after_judgments(project=project)  # debounced: one report per burst of reviews
    return slot


def _round_decide(item: QAItem, revision_id: int) -> None:
    slots = ReviewSlot.objects.filter(revision_id=revision_id).exclude(status=ReviewSlot.Status.CANCELLED)
    if slots.exclude(status=ReviewSlot.Status.DONE).exists():
        return
    flagged = Judgment.objects.filter(revision_id=revision_id, verdict=Judgment.Verdict.FLAG).exists()
    after = Status.NEEDS_REWRITE if flagged else Status.ACCEPTED
    if _set_status(item, before=[REVIEWABLE], after=after):
        action = ItemEvent.Action.NEEDS_REWRITE if flagged else ItemEvent.Action.ACCEPTED
        _event(item, None, action, before=REVIEWABLE, after=after)


def qa_item_reject(*, item: QAItem, user: AbstractBaseUser, reason: str, version: int) -> QAItem:
    """A coordinator takes an item out of the dataset, saying why. Open review slots are cancelled."""
    reason = (reason or "").strip()
    if not reason:
        raise InvalidInput("Rejecting an item needs a reason.", field="reason")
    if len(reason) > MAX_TEXT_FIELD:
        raise InvalidInput(f"The reason is longer than {MAX_TEXT_FIELD} characters.", field="reason")
    allowed = [Status.SUBMITTED, Status.NEEDS_REWRITE, Status.ACCEPTED]
    before = item.status
    with transaction.atomic():
        if not _set_status(item, before=allowed, after=Status.REJECTED, version=version):
            _stale_or_state(item, version, allowed, "rejected")
        ReviewSlot.objects.filter(item=item, status__in=[ReviewSlot.Status.OPEN, ReviewSlot.Status.CLAIMED]).update(
            status=ReviewSlot.Status.CANCELLED, version=F("version") + 1
        )
        _event(item, user, ItemEvent.Action.REJECTED, before=before, after=Status.REJECTED, note=reason)
    item.refresh_from_db()
    return item


def _require_complete(item: QAItem) -> None:
    errors = {
        name: ["is empty"]
        for name in ("question", "answer_standard", "answer_local")
        if not getattr(item, name).strip()
    }
    if not item.spans.exists():
        errors["spans"] = ["no evidence is highlighted"]
    if errors:
        first = next(iter(errors))
        raise InvalidInput(f"Cannot resubmit yet: {first} {errors[first][0]}.", field=first, details=errors)


def _unchanged_since_last_revision(item: QAItem) -> bool:
    last = item.revisions.order_by("-number").first()
    if last is None:
        return False
    spans = [{"start": s.start, "end": s.end, "text": s.text} for s in item.spans.all()]
    old = [{"start": s["start"], "end": s["end"], "text": s["text"]} for s in last.spans]
    return (last.question, last.answer_standard, last.answer_local, old) == (
        item.question,
        item.answer_standard,
        item.answer_local,
        spans,
    )


def qa_item_resubmit(*, item: QAItem, user: AbstractBaseUser, version: int) -> QAItem:
    """The author sends a rewritten item back to review: a new revision (reason `rewrite`) and a new round."""
    if item.author_id != user.pk:
        raise InvalidState("Only the item's author can resubmit it.", field="item")
    item.refresh_from_db()
    if item.status != Status.NEEDS_REWRITE:
        raise InvalidState(
            f"The item is {item.get_status_display().lower()}; only items sent back can be resubmitted.", field="item"
        )
    _require_complete(item)
    if _unchanged_since_last_revision(item):
        raise InvalidInput(
            "Nothing changed since the reviewed revision: rewrite the flagged parts first.", field="item"
        )
    if item.kind == QAItem.Kind.DOCUMENT:
        check_document_evidence(item.pair, item.spans.all())
    with transaction.atomic():
        if not _set_status(item, before=[Status.NEEDS_REWRITE], after=Status.SUBMITTED, version=version):
            _stale_or_state(item, version, [Status.NEEDS_REWRITE], "resubmitted")
        revision = qa_item_revision_create(item=item, author=user, reason=QAItemRevision.Reason.REWRITE)
        items_route(items=[item], actor=user)
        _event(
            item,
            user,
            ItemEvent.Action.REWRITTEN,
            before=Status.NEEDS_REWRITE,
            after=Status.SUBMITTED,
            revision_number=revision.number,
        )
    item.refresh_from_db()
    return item


def qa_item_reviewer_rewrite(
    *,
    item: QAItem,
    user: AbstractBaseUser,
    version: int,
    question: str | None = None,
    answer_standard: str | None = None,
    answer_local: str | None = None,
) -> QAItem:
    """Where the project allows it, a reviewer rewrites a flagged item directly; it is reviewed again by others."""
    project = item.project
    require_flow(project)
    if not project.reviewer_may_rewrite:
        raise InvalidState("This project sends flagged items back to their authors; reviewers do not rewrite.")
    _require_reviewer(project, user)
    if item.author_id == user.pk:
        raise InvalidState("You wrote this item: rewrite it as its author.", field="item")
    _check_item_text(question=question, answer_standard=answer_standard, answer_local=answer_local)
    changes = {
        name: value
        for name, value in (
            ("question", question),
            ("answer_standard", answer_standard),
            ("answer_local", answer_local),
        )
        if value is not None
    }
    with transaction.atomic():
        updated = (
            QAItem.objects.alive()
            .filter(pk=item.pk, status=Status.NEEDS_REWRITE, version=version)
            .update(**changes, status=Status.SUBMITTED, version=F("version") + 1, updated_at=timezone.now())
        )
        if not updated:
            _stale_or_state(item, version, [Status.NEEDS_REWRITE], "rewritten")
        item.refresh_from_db()
        _require_complete(item)
        if _unchanged_since_last_revision(item):
            raise InvalidInput("Nothing changed: rewrite the flagged parts first.", field="question")
        revision = qa_item_revision_create(item=item, author=user, reason=QAItemRevision.Reason.REVIEWER_REWRITE)
        items_route(items=[item], actor=user)
        _event(
            item,
            user,
            ItemEvent.Action.REVIEWER_REWRITE,
            before=Status.NEEDS_REWRITE,
            after=Status.SUBMITTED,
            revision_number=revision.number,
        )
    return item


# History and diffs


@dataclass
class FieldDiff:
    field: str
    label: str
    ops: list[tuple[str, str]]  # (equal | insert | delete, text)

    @property
    def changed(self) -> bool:
        return any(op != "equal" for op, _ in self.ops)


@dataclass
class RevisionEntry:
    revision: QAItemRevision
    diffs: list[FieldDiff]
    reviews: list[dict[str, Any]] = field(default_factory=list)  # [{slot, reviewer, judgments}]


_TOKEN = re.compile(r"\w+|\s+|.", re.UNICODE)
_HAN = re.compile(r"[\u3400-\u9fff\U00020000-\U0003ffff]")


def _tokens(text: str) -> list[str]:
    """Words for alphabetic scripts, single characters for Han (which has no spaces between words)."""
    tokens: list[str] = []
    for token in _TOKEN.findall(text):
        tokens.extend(list(token) if _HAN.search(token) else [token])
    return tokens


def text_diff(old: str, new: str) -> list[tuple[str, str]]:
    """A readable word/character diff as (equal | insert | delete, text) pieces; templates escape the text."""
    a, b = _tokens(old), _tokens(new)
    ops: list[tuple[str, str]] = []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if tag == "equal":
            ops.append(("equal", "".join(a[i1:i2])))
            continue
        if i2 > i1:
            ops.append(("delete", "".join(a[i1:i2])))
        if j2 > j1:
            ops.append(("insert", "".join(b[j1:j2])))
    return ops


def _revision_text(revision: QAItemRevision | None, name: str) -> str:
    if revision is None:
        return ""
    if name == "evidence":
        return " | ".join(span["text"] for span in revision.spans)
    if name == "options":
        options = revision.content.get("candidates") or revision.content.get("options") or []
        correct = revision.content.get("answer")
        return " | ".join(f"✓ {text}" if index == correct else str(text) for index, text in enumerate(options))
    return getattr(revision, name)


def item_history(item: QAItem) -> tuple[list[RevisionEntry], list[ItemEvent]]:
    """Every revision (diffed against the one before) with the reviews it got, and every event. Four queries."""
    revisions = list(item.revisions.select_related("author").order_by("number"))
    judgments = Judgment.objects.filter(item=item).select_related("reviewer").order_by("slot_id", "id")
    by_slot: dict[int, dict[str, Any]] = {}
    for judgment in judgments:
        entry = by_slot.setdefault(
            judgment.slot_id,
            {"revision_id": judgment.revision_id, "reviewer": judgment.reviewer, "judgments": [], "at": None},
        )
        entry["judgments"].append(judgment)
        entry["at"] = judgment.created_at
        entry["flagged"] = entry.get("flagged", False) or judgment.verdict == Judgment.Verdict.FLAG
    entries: list[RevisionEntry] = []
    previous = None
    fields = project_kinds.of(item.project).history_fields  # each kind diffs its own fields
    for revision in revisions:
        diffs = [
            FieldDiff(name, label, text_diff(_revision_text(previous, name), _revision_text(revision, name)))
            for name, label in fields
        ]
        reviews = [review for review in by_slot.values() if review["revision_id"] == revision.pk]
        entries.append(RevisionEntry(revision, diffs, reviews))
        previous = revision
    events = list(item.events.select_related("actor").order_by("created_at", "id"))
    return entries, events


def latest_flags(item: QAItem) -> list[Judgment]:
    """The flags (with comments) of the item's latest reviewed revision: what the author is asked to fix."""
    revision_id = (
        Judgment.objects.filter(item=item).order_by("-revision__number").values_list("revision_id", flat=True).first()
    )
    if revision_id is None:
        return []
    return list(
        Judgment.objects.filter(revision_id=revision_id, verdict=Judgment.Verdict.FLAG).select_related("reviewer")
    )


def items_flags(item_ids: Iterable[int]) -> dict[int, list[Judgment]]:
    """The flags (criterion and reason) of each item's latest revision, for many items in one query."""
    latest = QAItemRevision.objects.filter(item=OuterRef("item_id")).order_by("-number").values("id")[:1]
    flags: dict[int, list[Judgment]] = defaultdict(list)
    for judgment in (
        Judgment.objects.filter(item_id__in=list(item_ids), verdict=Judgment.Verdict.FLAG)
        .annotate(latest=Subquery(latest))
        .filter(revision_id=F("latest"))
        .order_by("item_id", "id")
    ):
        flags[judgment.item_id].append(judgment)
    return flags


def author_items(*, project: Project, user: AbstractBaseUser, limit: int = 200) -> list[QAItem]:
    """An author's submitted items, sent back first, each with `flags`: what the review flagged and why."""
    order = {Status.NEEDS_REWRITE: 0, Status.SUBMITTED: 1}
    items = sorted(
        QAItem.objects.alive()
        .filter(project=project, author=user)
        .exclude(status=Status.DRAFT)
        .select_related("pair")
        .only(
            "id", "kind", "status", "question", "updated_at", "version", "project_id", "pair__id", "pair__local_title"
        )
        .order_by("-updated_at")[:limit],
        key=lambda item: order.get(item.status, 2),
    )
    flags = items_flags(item.pk for item in items if item.status == Status.NEEDS_REWRITE)
    for item in items:
        item.flags = flags.get(item.pk, [])  # type: ignore[attr-defined]
    return items


def show_reviewer_names(project: Project, membership: Membership | None, item: QAItem, user: Any) -> bool:
    """Blind review hides reviewers from authors; coordinators and reviewers always see names."""
    if not project.blind_review:
        return True
    if membership is not None and (membership.is_coordinator or membership.is_reviewer):
        return item.author_id != getattr(user, "pk", None) or membership.is_coordinator
    return False


# Full-document verification


@dataclass(frozen=True)
class Sentence:
    start: int
    end: int
    text: str

    @property
    def key(self) -> str:
        return f"{self.start}:{self.end}"


_SENTENCE = re.compile(r"[^\n]+?(?:[。！？!?；;]+[」』”’）)]*|\.(?=\s)|$)", re.MULTILINE)
_HEADING = re.compile(r"\s*(={2,6})[^=\n].*?\1\s*")  # a wiki section heading line: == 制作 ==


def sentences_of(text: str) -> list[Sentence]:
    """Split a text into sentences with code-point offsets (Python str indices), whitespace trimmed.

    Wiki section headings (`== 制作 ==`) are not sentences: nothing can be verified by them.
    """
    sentences: list[Sentence] = []
    for found in _SENTENCE.finditer(text):
        piece = found.group()
        if _HEADING.fullmatch(piece):
            continue
        start = found.start() + (len(piece) - len(piece.lstrip()))
        end = found.end() - (len(piece) - len(piece.rstrip()))
        if end > start:
            sentences.append(Sentence(start, end, text[start:end]))
    return sentences


@dataclass
class SentenceMatch:
    sentence: Sentence
    match: str  # exact | close | ""
    pieces: list[tuple[bool, str]]  # (highlighted, text)


CLOSE_SCORE = 75


def verification_search(text: str, query: str) -> list[SentenceMatch]:
    """Every sentence of the standard text, with exact occurrences of `query` (or its close match) marked."""
    query = (query or "").strip()
    results: list[SentenceMatch] = []
    for sentence in sentences_of(text):
        match, pieces = "", [(False, sentence.text)]
        if query:
            folded, target = _fold(sentence.text), _fold(query)
            if target in folded:
                match, pieces = "exact", _mark_all(sentence.text, folded, target)
            else:
                alignment = fuzz.partial_ratio_alignment(target, folded, score_cutoff=CLOSE_SCORE)
                if alignment is not None and alignment.dest_end > alignment.dest_start:
                    s, e = alignment.dest_start, alignment.dest_end
                    match = "close"
                    pieces = [
                        p
                        for p in [(False, sentence.text[:s]), (True, sentence.text[s:e]), (False, sentence.text[e:])]
                        if p[1]
                    ]
        results.append(SentenceMatch(sentence, match, pieces))
    return results


@functools.cache
def _simplified(char: str) -> str:
    """A Han character in simplified script (陳 → 陈), kept as it is when that is not one code point."""
    converted = _T2S.convert(char)
    return converted if len(converted) == 1 else char


_T2S = opencc.OpenCC("t2s")


def _fold(text: str) -> str:
    """Lower case and simplified Han, character by character so that every offset stays the same.

    A Mandarin answer in simplified script then finds a standard page written in traditional
    script (zh-hk, zh-tw) as an exact match.
    """
    lowered = text.lower()
    if len(lowered) != len(text):  # a few letters, such as İ, grow when lowered
        lowered = text
    return "".join(_simplified(char) if _HAN.match(char) else char for char in lowered)


def _mark_all(text: str, folded: str, target: str) -> list[tuple[bool, str]]:
    pieces: list[tuple[bool, str]] = []
    position = 0
    while (found := folded.find(target, position)) >= 0:
        if found > position:
            pieces.append((False, text[position:found]))
        pieces.append((True, text[found : found + len(target)]))
        position = found + len(target)
    if position < len(text):
        pieces.append((False, text[position:]))
    return pieces


def verification_current(item: QAItem) -> Verification | None:
    return item.verifications.order_by("-number").first()


def verification_record(
    *,
    item: QAItem,
    user: AbstractBaseUser,
    result: str,
    sentences: Iterable[Mapping[str, Any]] = (),
    query: str = "",
    note: str = "",
    version: int,
) -> Verification:
    """Record whether a lead item's answer is on the standard full text. `version` is the latest number seen (0: none).

    Found needs the supporting sentence(s), as code-point offsets into the
    standard full text that must match it exactly, like evidence spans. Without a
    standard full text the only possible result is `not_possible`.
    """
    from annotation.services import validate_spans

    if item.kind != QAItem.Kind.LEAD:
        raise InvalidState("Full-document verification is for lead-section items.", field="item")
    if item.status == Status.REJECTED:
        raise InvalidState("The item is rejected; it is no longer verified.", field="item")
    if result not in Verification.Result.values:
        raise InvalidInput(f"Unknown result {result!r}: use {', '.join(Verification.Result.values)}.", field="result")
    standard_text = item.pair.standard_text
    sentences = list(sentences or [])
    checked: list[dict[str, Any]] = []
    if not standard_text and result != Verification.Result.NOT_POSSIBLE:
        raise InvalidInput(
            "This pair was imported without the standard page's full text: verification is not possible.",
            field="result",
        )
    if standard_text and result == Verification.Result.NOT_POSSIBLE:
        raise InvalidInput("This pair has the standard full text: record found or not found.", field="result")
    if result == Verification.Result.FOUND:
        if not sentences:
            raise InvalidInput("Found needs the supporting sentence(s) from the standard text.", field="sentences")
        try:
            spans = validate_spans(standard_text, sentences, document="standard full text")
        except InvalidInput as error:
            raise InvalidInput(
                error.message.replace("spans[", "sentences["),
                field=(error.field or "").replace("spans[", "sentences["),
                details={k.replace("spans[", "sentences["): v for k, v in (error.details or {}).items()},
            ) from None
        checked = [{"start": s.start, "end": s.end, "text": s.text} for s in spans]
    elif sentences:
        raise InvalidInput("Only a found result carries supporting sentences.", field="sentences")
    if len(query) > MAX_TEXT_FIELD or len(note) > MAX_TEXT_FIELD:
        raise InvalidInput(f"The search text and the note are at most {MAX_TEXT_FIELD} characters.", field="note")
    latest = item.verifications.order_by("-number").values_list("number", flat=True).first() or 0
    if latest != version:
        raise StaleEdit(
            f"Someone recorded a verification in the meantime (now version {latest}, you had {version}).",
            current=verification_current(item),
        )
    try:
        with transaction.atomic():
            verification = Verification.objects.create(
                item=item,
                number=latest + 1,
                result=result,
                sentences=checked,
                query=query,
                note=note,
                verifier=user,
                created_at=timezone.now(),
            )
            _event(item, user, ItemEvent.Action.VERIFIED, before=item.status, after=item.status, note=result)
    except IntegrityError:
        raise StaleEdit(
            "Someone recorded a verification at the same moment; reload it.", current=verification_current(item)
        ) from None
    return verification


# Article labels and adjudication


def labelable_pairs(project: Project):  # type: ignore[no-untyped-def]
    """Kept pairs: screened for annotation (being annotated or submitted)."""
    return PagePair.objects.filter(project=project, screening_decision=Screening.Decision.ANNOTATE)


def _label_values(project: Project, kind: str) -> list[str]:
    return list(project.topics if kind == LabelKind.TOPIC else project.regions)


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


def label_set(
    *, pair: PagePair, user: AbstractBaseUser, kind: str, value: str, detail: str = "", version: int = 0
) -> ArticleLabel:
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


def _finalise_agreement(pair: PagePair, *, actor: AbstractBaseUser | None = None) -> None:
    """When every labeller is done and agrees on a kind, that is the final label (unless adjudicated)."""
    state = pair_label_state(pair)
    if not state["complete"]:
        return
    for kind in LabelKind.values:
        values = {state["by_labeller"][uid][kind].value for uid in state["done"]}
        final = state["finals"].get(kind)
        if final is not None and final.method == FinalLabel.Method.ADJUDICATED:
            continue
        if len(values) == 1:
            details = {state["by_labeller"][uid][kind].detail for uid in state["done"]} - {""}
            value = values.pop()
            detail = details.pop() if len(details) == 1 else ""
            row, _ = FinalLabel.objects.update_or_create(
                pair=pair,
                kind=kind,
                defaults={"value": value, "detail": detail, "method": FinalLabel.Method.AGREEMENT, "adjudicator": None},
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


def labels_visible_to(state: dict[str, Any], user: AbstractBaseUser) -> list[ArticleLabel]:
    """A labeller sees only their own labels until the pair is complete; then everyone's."""
    if state["complete"]:
        return state["labels"]
    return [label for label in state["labels"] if label.labeller_id == user.pk]


def adjudication_list(project: Project) -> list[dict[str, Any]]:
    """Complete pairs where labellers disagree on a kind that has no final label yet (or has one, adjudicated)."""
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
            values = {label.value for label in kinds[kind] if label.labeller_id in done}
            if len(values) > 1:
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
    *, pair: PagePair, user: AbstractBaseUser, kind: str, value: str, detail: str = "", version: int = 0
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
                    created = FinalLabel.objects.create(pair=pair, kind=kind, updated_at=now, **values)
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


# The coordinator's numbers


def _median(values: list[int]) -> float | None:
    return statistics.median(values) if values else None


def project_statistics(project: Project) -> dict[str, Any]:
    """The study's statistics table and the team's progress, straight from the database (a fixed number of queries)."""
    pairs = PagePair.objects.filter(project=project)
    longer_text = Q(local_text_length__isnull=True) | Q(standard_text_length__isnull=True)
    longer_text |= Q(local_text_length__gt=F("standard_text_length"))
    counts = pairs.aggregate(
        collected=Count("id"),
        local_heavy=Count("id", filter=Q(local_lead_length__gt=F("standard_lead_length")) & longer_text),
        inspected=Count("id", filter=~Q(screening_decision="")),
        excluded=Count("id", filter=Q(status=PagePair.Status.EXCLUDED)),
        with_qas=Count("id", filter=Q(status=PagePair.Status.SUBMITTED)),
    )
    excluded_by_reason = dict(
        pairs.filter(status=PagePair.Status.EXCLUDED)
        .values_list("screening_decision")
        .annotate(n=Count("id"))
        .order_by()
    )
    items = QAItem.objects.alive().filter(project=project).exclude(status=Status.DRAFT)
    by_kind_status: dict[tuple[str, str], int] = {
        (kind, status): n for kind, status, n in items.values_list("kind", "status").annotate(n=Count("id")).order_by()
    }
    item_counts = {
        "lead": sum(n for (kind, _), n in by_kind_status.items() if kind == QAItem.Kind.LEAD),
        "document": sum(n for (kind, _), n in by_kind_status.items() if kind == QAItem.Kind.DOCUMENT),
        **{status: sum(n for (_, s), n in by_kind_status.items() if s == status) for status in Status.values},
    }
    week_ago = timezone.now() - timedelta(days=7)
    per_author: dict[str, dict[str, Any]] = defaultdict(lambda: {"items": 0, "week": 0, "item_seconds": []})
    all_item_seconds: list[int] = []
    for username, seconds, submitted_at in items.values_list("author__username", "active_seconds", "submitted_at"):
        row = per_author[username or "—"]
        row["items"] += 1
        row["week"] += bool(submitted_at and submitted_at >= week_ago)
        if seconds:
            row["item_seconds"].append(seconds)
            all_item_seconds.append(seconds)
    pair_seconds: dict[str, list[int]] = defaultdict(list)
    pairs_submitted: dict[str, int] = defaultdict(int)
    for username, seconds in pairs.filter(status=PagePair.Status.SUBMITTED).values_list(
        "assignee__username", "active_seconds"
    ):
        pairs_submitted[username or "—"] += 1
        if seconds:
            pair_seconds[username or "—"].append(seconds)
    people = [
        {
            "username": username,
            "items": row["items"],
            "week": row["week"],
            "pairs": pairs_submitted.get(username, 0),
            "median_item_seconds": _median(row["item_seconds"]),
            "median_pair_seconds": _median(pair_seconds.get(username, [])),
        }
        for username, row in sorted(per_author.items())
    ]
    slots = ReviewSlot.objects.filter(item__project=project, item__deleted_at__isnull=True)
    workload: dict[str, dict[str, Any]] = defaultdict(
        lambda: {"claimed": 0, "done": 0, "week": 0, "durations": [], "active": []}
    )
    for username, status, claimed_at, completed_at, active in slots.filter(reviewer__isnull=False).values_list(
        "reviewer__username", "status", "claimed_at", "completed_at", "active_seconds"
    ):
        row = workload[username]
        if status == ReviewSlot.Status.CLAIMED:
            row["claimed"] += 1
        elif status == ReviewSlot.Status.DONE:
            row["done"] += 1
            row["week"] += bool(completed_at and completed_at >= week_ago)
            if claimed_at and completed_at:
                row["durations"].append(int((completed_at - claimed_at).total_seconds()))
            if active:
                row["active"].append(active)
    reviewers = [
        {
            "username": username,
            "claimed": row["claimed"],
            "done": row["done"],
            "week": row["week"],
            "median_review_seconds": _median(row["durations"]),
            "median_active_seconds": _median(row["active"]),
        }
        for username, row in sorted(workload.items())
    ]
    waiting = slots.filter(status=ReviewSlot.Status.OPEN, item__status=REVIEWABLE).count()
    finals = (
        FinalLabel.objects.filter(pair__project=project, pair__deleted_at__isnull=True)
        .values_list("kind", "value")
        .annotate(n=Count("id"))
    )
    charts: dict[str, dict[str, int]] = {LabelKind.TOPIC: {}, LabelKind.REGION: {}}
    for kind, value, n in finals.order_by():
        charts[kind][value] = n
    return {
        "pairs": counts,
        "excluded_by_reason": excluded_by_reason,
        "items": item_counts,
        "median_item_seconds": _median(all_item_seconds),
        "people": people,
        "reviewers": reviewers,
        "slots_waiting": waiting,
        "topics": _bars(project.topics, charts[LabelKind.TOPIC]),
        "regions": _bars(project.regions, charts[LabelKind.REGION]),
    }


def _bars(order: list[str], counts: dict[str, int]) -> list[dict[str, Any]]:
    """Rows for a server-side bar chart: value, count, and width as a percentage of the largest bar."""
    values = list(order) + [value for value in counts if value not in order]
    top = max(counts.values(), default=0)
    return [
        {
            "value": value,
            "count": counts.get(value, 0),
            "percent": round(100 * counts.get(value, 0) / top) if top else 0,
        }
        for value in values
    ]


# Time box of a document-level QA


def time_box(item: QAItem) -> dict[str, Any]:
    minutes = item.project.document_qa_minutes
    deadline = item.created_at + timedelta(minutes=minutes)
    return {"minutes": minutes, "deadline": deadline, "overdue": timezone.now() > deadline}


def spans_document(item: QAItem) -> str:
    return EvidenceSpan.Document.LOCAL_LEAD if item.kind == QAItem.Kind.LEAD else EvidenceSpan.Document.LOCAL_TEXT


# Review and label settings of a project

REVIEW_SETTINGS = (
    "review_criteria",
    "reviewer_may_rewrite",
    "blind_review",
    "flag_needs_reason",
    "topics",
    "regions",
    "labellers_per_pair",
    "document_qa_minutes",
)
_KEY = re.compile(r"^[a-z][a-z0-9_-]{0,39}$")


def _check_review_settings(changes: Mapping[str, Any]) -> dict[str, Any]:
    errors: dict[str, list[str]] = {}
    clean: dict[str, Any] = {}
    for name, value in changes.items():
        if name == "review_criteria":
            criteria, keys = [], set()
            if not isinstance(value, list) or not value:
                errors[name] = ["must be a non-empty list of {key, label, help}"]
                continue
            for index, raw in enumerate(value):
                where = f"review_criteria[{index}]"
                if not isinstance(raw, Mapping):
                    errors[where] = ["must be an object with key, label and help"]
                    continue
                key, label, help_text = raw.get("key"), raw.get("label"), raw.get("help", "")
                if not isinstance(key, str) or not _KEY.match(key):
                    errors[f"{where}.key"] = ["must be lower-case letters, digits, - or _ (at most 40), e.g. fluency"]
                elif key in keys:
                    errors[f"{where}.key"] = [f"{key!r} appears twice"]
                elif not isinstance(label, str) or not label.strip():
                    errors[f"{where}.label"] = ["must not be empty"]
                else:
                    keys.add(key)
                    criteria.append({"key": key, "label": label.strip(), "help": str(help_text or "").strip()})
            clean[name] = criteria
        elif name in ("topics", "regions"):
            if not isinstance(value, list) or not value or not all(isinstance(v, str) and v.strip() for v in value):
                errors[name] = ["must be a non-empty list of names"]
                continue
            values = list(dict.fromkeys(v.strip() for v in value))
            too_long = [v for v in values if len(v) > 64]
            if too_long:
                errors[name] = [f"{too_long[0]!r} is longer than 64 characters"]
            clean[name] = values
        elif name in ("reviewer_may_rewrite", "blind_review", "flag_needs_reason"):
            if not isinstance(value, bool):
                errors[name] = ["must be true or false"]
            clean[name] = value
        elif name == "labellers_per_pair":
            if not isinstance(value, int) or isinstance(value, bool) or not 1 <= value <= 10:
                errors[name] = ["must be between 1 and 10"]
            clean[name] = value
        elif name == "document_qa_minutes":
            if not isinstance(value, int) or isinstance(value, bool) or not 1 <= value <= 240:
                errors[name] = ["must be between 1 and 240 minutes"]
            clean[name] = value
        else:
            errors[name] = ["is not a review setting"]
    if errors:
        first = next(iter(errors))
        raise InvalidInput(f"{first}: {errors[first][0]}", field=first, details=errors)
    return clean


def project_review_settings_update(
    *, project: Project, version: int | None = None, actor: AbstractBaseUser | None = None, **changes: Any
) -> Project:
    """Change the review, label and document-QA settings. With `version`, refuse if someone saved in between."""
    clean = _check_review_settings(changes)
    query = Project.objects.filter(pk=project.pk)
    if version is not None:
        query = query.filter(version=version)
    before = {name: getattr(project, name) for name in clean}
    with transaction.atomic():
        if not query.update(**clean, version=F("version") + 1, updated_at=timezone.now()):
            project.refresh_from_db()
            raise StaleEdit(
                f"The project settings were changed by someone else (now version {project.version}); reload them.",
                current=project,
            )
        project.refresh_from_db()
        diff = audit.changes(before, {name: getattr(project, name) for name in clean})
        if diff["after"]:
            audit.record(actor, Action.PROJECT_REVIEW_SETTINGS, project, **diff)
    return project
