"""Business rules of projects, page pairs, screening and QA authoring.

Views, the API, management commands and tasks all call these functions; none
of them carries a second copy of a rule.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from contextlib import nullcontext
from datetime import datetime, timedelta
from typing import Any

from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.core.validators import validate_slug
from django.db import IntegrityError, transaction
from django.db.models import F, Max, OuterRef, Q, QuerySet, Subquery
from django.utils import timezone
from django.utils.text import slugify

from annotation import lifecycle, wilova
from annotation.access import is_coordinator
from annotation.languages import VARIANT_RULE, WIKI_CODE_RULE, UnknownLanguage, get_language, is_variant, is_wiki_code
from annotation.lifecycle import (
    MAX_TEXT_FIELD,
    SpanInput,
    items_route,
    qa_item_text_check,
    qa_item_transition,
    qa_items_transition,
    spans_check,
)
from annotation.models import (
    DEFAULT_REGIONS,
    EvidenceSpan,
    Membership,
    PagePair,
    PairSkip,
    Project,
    QAItem,
    QAItemRevision,
    Role,
    Screening,
)
from annotation.queries import items_with_spans
from audit import services as audit
from audit.models import Action
from common.claims import queue_claim_next
from common.errors import InvalidInput, InvalidState, StaleEdit

MAX_ACTIVITY_SECONDS = 300  # one heartbeat never counts more than this (a sleeping laptop, a clock jump)

PROJECT_SETTINGS = (
    "name",
    "guidelines",
    "lead_qa_min",
    "lead_qa_max",
    "collect_document_qa",
    "verification_required",
    "reviewers_per_item",
    "claim_minutes",
    "standard_variant",
    "local_wiki",
    "standard_wiki",
    "region_vocabulary",
    "releases_public",
)
MAX_REGION_NAME = 200  # as long as a label's finer region may be


# Projects and members


def _check_language(code: str, field: str) -> None:
    try:
        get_language(code)
    except UnknownLanguage as error:
        raise InvalidInput(str(error), field=field, details={field: [str(error)]}) from None


def _check_project_settings(values: Mapping[str, Any]) -> None:
    errors: dict[str, list[str]] = {}
    lead_min, lead_max = values.get("lead_qa_min"), values.get("lead_qa_max")
    if lead_min is not None and lead_max is not None and lead_min > lead_max:
        errors["lead_qa_min"] = [f"must not exceed lead_qa_max ({lead_max})"]
    if lead_min is not None and not 1 <= lead_min <= 20:
        errors["lead_qa_min"] = ["must be between 1 and 20"]
    if lead_max is not None and not 1 <= lead_max <= 20:
        errors["lead_qa_max"] = ["must be between 1 and 20"]
    if values.get("reviewers_per_item") is not None and not 1 <= values["reviewers_per_item"] <= 10:
        errors["reviewers_per_item"] = ["must be between 1 and 10"]
    if values.get("claim_minutes") is not None and not 1 <= values["claim_minutes"] <= 24 * 60:
        errors["claim_minutes"] = ["must be between 1 and 1440 minutes"]
    if "name" in values and not str(values["name"]).strip():
        errors["name"] = ["must not be empty"]
    for field in ("local_wiki", "standard_wiki"):
        if values.get(field) is not None and not is_wiki_code(values[field]):
            errors[field] = [WIKI_CODE_RULE]
    if values.get("standard_variant") and not is_variant(values["standard_variant"]):
        errors["standard_variant"] = [VARIANT_RULE]
    if errors:
        first = next(iter(errors))
        raise InvalidInput(f"{first}: {errors[first][0]}", field=first, details=errors)


def region_vocabulary_clean(value: Any, *, regions: Iterable[str]) -> dict[str, str]:
    """A fine → coarse region table as given, checked: names as written (trimmed), each mapped to a project region."""
    regions = list(regions)
    field = "region_vocabulary"
    if not isinstance(value, Mapping):
        raise InvalidInput(f"{field}: must be an object of fine region → region", field=field)
    clean: dict[str, str] = {}
    for fine, coarse in value.items():
        name = fine.strip() if isinstance(fine, str) else ""
        if not name:
            raise InvalidInput(f"{field}: a fine region needs a name", field=field)
        if len(name) > MAX_REGION_NAME:
            raise InvalidInput(f"{field}: {name[:40]!r}… is longer than {MAX_REGION_NAME} characters", field=field)
        if coarse not in regions:
            raise InvalidInput(
                f"{field}: {name!r} must map to one of the project's regions ({', '.join(regions)}), not {coarse!r}",
                field=field,
            )
        clean[name] = coarse
    return clean


def project_region_vocabulary_map(
    *, project: Project, mapping: Mapping[str, str], actor: User | None = None
) -> Project:
    """Add fine regions to the project's vocabulary (or remap them), keeping the rest: what an import asks for."""
    clean = region_vocabulary_clean(mapping, regions=project.regions)
    if not clean:
        raise InvalidInput("Map at least one region.", field="region_vocabulary")
    project.refresh_from_db(fields=["region_vocabulary", "version"])
    return project_update(
        project=project, actor=actor, region_vocabulary={**(project.region_vocabulary or {}), **clean}
    )


SLUG_RULE = "letters, digits, hyphens and underscores only, e.g. doha-val"


def project_slug_check(slug: str) -> str:
    """The slug a project's URLs are made of: refused, with a field error, unless `reverse` can use it."""
    slug = (slug or "").strip()
    if not slug:
        raise InvalidInput(f"slug: the project needs a slug ({SLUG_RULE}).", field="slug")
    max_length = Project._meta.get_field("slug").max_length
    if max_length is not None and len(slug) > max_length:
        raise InvalidInput("slug: at most 60 characters.", field="slug")
    try:
        validate_slug(slug)
    except ValidationError:
        raise InvalidInput(f"slug: {slug!r} is not a slug: use {SLUG_RULE}.", field="slug") from None
    return slug


def project_slug_derive(name: str) -> str:
    """The slug of a project whose creator left it empty: the name's ASCII letters and digits, with -2, -3… when
    a project has it already. A name without any (粵語, الدوحة) needs a slug typed."""
    base = slugify(name)[:56].strip("-_")
    if not base:
        return project_slug_check("")
    taken = set(Project.all_objects.filter(slug__startswith=base).values_list("slug", flat=True))
    slug, n = base, 1
    while slug in taken:
        n += 1
        slug = f"{base}-{n}"
    return project_slug_check(slug)


def project_create(
    *,
    name: str,
    slug: str | None = None,
    local_language: str,
    standard_language: str,
    local_wiki: str | None = None,
    standard_wiki: str | None = None,
    created_by: User | None = None,
    **project_settings: Any,
) -> Project:
    """Create a project; the creator becomes its coordinator. Wiki codes are derived unless given."""
    _check_language(local_language, "local_language")
    _check_language(standard_language, "standard_language")
    slug = project_slug_check(slug) if slug else project_slug_derive(name)
    unknown = set(project_settings) - set(PROJECT_SETTINGS)
    if unknown:
        raise InvalidInput(f"Unknown project setting(s): {', '.join(sorted(unknown))}", field=sorted(unknown)[0])
    values = {
        "name": name,
        "local_wiki": local_wiki or get_language(local_language).wiki,
        "standard_wiki": standard_wiki or get_language(standard_language).wiki,
        **project_settings,
    }
    _check_project_settings(
        {"lead_qa_min": 2, "lead_qa_max": 3, **values}  # defaults of the model, for the range check
    )
    if "region_vocabulary" in values:
        values["region_vocabulary"] = region_vocabulary_clean(values["region_vocabulary"], regions=DEFAULT_REGIONS)
    else:  # the region table of the study in these languages, if localqa knows one
        values["region_vocabulary"] = wilova.region_vocabulary_seed(local_language)
    try:
        with transaction.atomic():
            project = Project.objects.create(
                slug=slug,
                local_language=local_language,
                standard_language=standard_language,
                created_by=created_by,
                **values,
            )
            if created_by is not None:
                Membership.objects.create(project=project, user=created_by, is_coordinator=True)
            audit.record(created_by, Action.PROJECT_CREATED, project, kind=project.kind)
    except IntegrityError:
        raise InvalidInput(f"A project with the slug {slug!r} already exists.", field="slug") from None
    return project


def project_update(
    *, project: Project, version: int | None = None, actor: User | None = None, **changes: Any
) -> Project:
    """Change project settings. With `version`, refuse if someone saved in between."""
    unknown = set(changes) - set(PROJECT_SETTINGS)
    if unknown:
        raise InvalidInput(f"Unknown project setting(s): {', '.join(sorted(unknown))}", field=sorted(unknown)[0])
    merged = {field: getattr(project, field) for field in PROJECT_SETTINGS} | changes
    _check_project_settings(merged)
    if "region_vocabulary" in changes:
        changes["region_vocabulary"] = region_vocabulary_clean(changes["region_vocabulary"], regions=project.regions)
    if "guidelines" in changes and changes["guidelines"] != project.guidelines:
        changes["guidelines_version"] = F("guidelines_version") + 1
    query = Project.objects.filter(pk=project.pk)
    if version is not None:
        query = query.filter(version=version)
    before = {field: getattr(project, field) for field in PROJECT_SETTINGS}
    with transaction.atomic():
        if not query.update(**changes, version=F("version") + 1, updated_at=timezone.now()):
            raise StaleEdit("The project settings were changed by someone else; reload them.", current=project)
        project.refresh_from_db()
        diff = audit.changes(before, {field: getattr(project, field) for field in PROJECT_SETTINGS})
        if diff["after"]:
            audit.record(actor, Action.PROJECT_SETTINGS, project, before=diff["before"], after=diff["after"])
    return project


LAST_COORDINATOR = "A project keeps at least one active coordinator: make someone else coordinator first."


def coordinator_is_last(*, project: Project, user: User) -> bool:
    """Whether `user` is the project's only coordinator who counts (an active membership of an active account).

    Call it inside the transaction of the change: it locks the coordinators' memberships until the end, so two
    coordinators stepping down at once cannot both succeed.
    """
    coordinators = list(
        Membership.objects.select_for_update(of=("self",))
        .filter(project=project, is_coordinator=True, user__is_active=True)
        .values_list("user_id", flat=True)
    )
    return coordinators == [user.pk]


def membership_set(*, project: Project, user: User, roles: Iterable[str], actor: User | None = None) -> Membership:
    roles = set(roles)
    unknown = roles - set(Role.values)
    if unknown:
        raise InvalidInput(f"Unknown role(s): {', '.join(sorted(unknown))}", field="roles")
    if not roles:
        raise InvalidInput("A member needs at least one role; remove the member instead.", field="roles")
    with transaction.atomic():
        # all_objects: a deactivated member keeps their row (and stays deactivated) when their roles change.
        existing = Membership.all_objects.select_for_update().filter(project=project, user=user).first()
        before = existing.roles if existing is not None else []
        if (
            Role.COORDINATOR in before
            and Role.COORDINATOR not in roles
            and coordinator_is_last(project=project, user=user)
        ):
            raise InvalidState(LAST_COORDINATOR, field="roles")
        membership, created = Membership.all_objects.update_or_create(
            project=project,
            user=user,
            defaults={f"is_{role}": role in roles for role in Role.values},
        )
        if created or set(before) != roles:
            action = Action.MEMBER_ADDED if created else Action.MEMBER_ROLES
            after = membership.roles
            audit.record(actor, action, membership, label=user.get_username(), before=before, after=after)
    return membership


def membership_remove(*, project: Project, user: User, actor: User | None = None) -> None:
    with transaction.atomic():
        if coordinator_is_last(project=project, user=user):
            raise InvalidState(LAST_COORDINATOR, field="user")
        membership = Membership.all_objects.filter(project=project, user=user).first()
        if membership is None:
            return
        audit.record(actor, Action.MEMBER_REMOVED, membership, label=user.get_username(), before=membership.roles)
        membership.delete()


# The annotator's queue


def pair_queue(*, project: Project, user: User, now: datetime) -> tuple[QuerySet[PagePair], list[Q]]:
    """The pairs this annotator may take, and the conditions under which one waits (`queue_claim_next`)."""
    candidates = PagePair.objects.filter(project=project).exclude(
        pk__in=PairSkip.objects.skipped_by(user.pk).values("pair_id")  # given back: not again (unless undone)
    )
    return candidates, [Q(status=PagePair.Status.NEW), Q(status=PagePair.Status.CLAIMED, claim_expires_at__lt=now)]


def pair_claim_next(*, project: Project, user: User, membership: Membership | None = None) -> PagePair | None:
    """Hand the user a pair nobody else holds, or the unscreened one they already hold.

    On PostgreSQL the candidate row is taken with FOR UPDATE SKIP LOCKED, so
    annotators asking at once each get a different pair without queueing behind
    one lock; the conditional update makes a second delivery harmless. A `membership` read with
    `project_access(held_pair=True)` says already whether the user holds one.
    """
    now = timezone.now()
    holds = getattr(membership, "held_pair_id", True) is not None  # unknown: ask
    mine = PagePair.objects.filter(project=project, assignee=user, status=PagePair.Status.CLAIMED)
    held = mine.order_by("claimed_at").first() if holds else None
    expires = now + timedelta(minutes=project.claim_minutes)
    if held is not None:
        PagePair.objects.filter(pk=held.pk).update(claim_expires_at=expires)
        held.claim_expires_at = expires
        held.project = project
        return held

    def claim(candidate: PagePair) -> bool:
        changes = {"status": PagePair.Status.CLAIMED, "claimed_at": now, "claim_expires_at": expires, "updated_at": now}
        # The candidate was read available and locked by this transaction: claimed only as it was read.
        taken = PagePair.objects.filter(pk=candidate.pk, version=candidate.version)
        if not taken.update(**changes, assignee=user, version=F("version") + 1):
            return False
        # The candidate row is locked (FOR UPDATE) until the claim commits: what it reads now is what was written.
        for name, value in changes.items():
            setattr(candidate, name, value)
        candidate.assignee = user
        candidate.version += 1
        return True

    candidates, waiting = pair_queue(project=project, user=user, now=now)
    claimed = queue_claim_next(candidates=candidates, waiting=waiting, claim=claim)
    if claimed is not None:
        claimed.project = project
    return claimed


def pair_give_back(*, pair: PagePair, user: User, reason: str = "") -> PairSkip:
    """Return a pair the user holds to the queue unfinished (skip it), with an optional reason, recorded.

    The queue does not hand that pair to the same annotator again. A pair with QA items is not given
    back: its items would be left behind under someone else's pair (delete them first, or finish it).
    """
    reason = (reason or "").strip()
    if len(reason) > MAX_TEXT_FIELD:
        raise InvalidInput(f"The reason is longer than {MAX_TEXT_FIELD} characters.", field="reason")
    _require_assignee(pair, user)
    open_statuses = {PagePair.Status.CLAIMED, PagePair.Status.ANNOTATING}
    if pair.status not in open_statuses:
        raise InvalidState(f"A {pair.get_status_display().lower()} pair cannot be given back.", field="pair")
    if pair.items.alive().exists():
        raise InvalidState(
            "This pair has QA items: delete them before giving the pair back, or finish and submit it.", field="pair"
        )
    now = timezone.now()
    with transaction.atomic():
        updated = PagePair.objects.filter(pk=pair.pk, assignee=user, status__in=open_statuses).update(
            status=PagePair.Status.NEW,
            assignee=None,
            claimed_at=None,
            claim_expires_at=None,
            screening_decision="",
            version=F("version") + 1,
            updated_at=now,
        )
        if not updated:
            raise InvalidState("This pair changed in the meantime; reload it.", field="pair")
        skip = PairSkip.objects.create(
            pair=pair, annotator=user, status_before=pair.status, reason=reason, created_at=now
        )
        audit.record(user, Action.PAIR_GIVEN_BACK, pair, project=pair.project, before=pair.status, reason=reason)
    pair.refresh_from_db(
        fields=["status", "assignee", "claimed_at", "claim_expires_at", "screening_decision", "version"]
    )
    return skip


def pair_skip_undo(*, skip: PairSkip, user: User) -> PagePair | None:
    """Take a skip back: the pair may come to this person again, and comes to them now if nobody took it.

    The skip stays in the record, marked undone. A pair handed to them after the skip and not screened yet goes
    back to the pool (no skip recorded: they never chose to pass it). Returns the pair when it is theirs again,
    None when someone else holds it (it waits for them in the queue once it is free).
    """
    if skip.annotator_id != user.pk:
        raise InvalidState("Only the person who skipped a pair can take the skip back.", field="skip")
    if skip.undone_at is not None:
        raise InvalidState("This skip was already taken back.", field="skip")
    now = timezone.now()
    project = skip.pair.project
    with transaction.atomic():
        if not PairSkip.objects.filter(pk=skip.pk, undone_at__isnull=True).update(undone_at=now):
            raise InvalidState("This skip was already taken back.", field="skip")
        audit.record(user, Action.PAIR_SKIP_UNDONE, skip.pair, project=project, skip=skip.pk)
        claimable = PagePair.objects.filter(pk=skip.pair_id, deleted_at__isnull=True).available(now)
        if not claimable.exists():
            return None
        # The untouched pair handed out after the skip goes back to the pool: one claimed pair at a time.
        PagePair.objects.filter(project=project, assignee=user, status=PagePair.Status.CLAIMED).exclude(
            pk=skip.pair_id
        ).update(
            status=PagePair.Status.NEW, assignee=None, claimed_at=None, claim_expires_at=None, version=F("version") + 1
        )
        expires = now + timedelta(minutes=project.claim_minutes)
        claimed = claimable.update(
            status=PagePair.Status.CLAIMED,
            assignee=user,
            claimed_at=now,
            claim_expires_at=expires,
            screening_decision="",
            version=F("version") + 1,
            updated_at=now,
        )
    if not claimed:
        return None
    pair = PagePair.objects.select_related("project").get(pk=skip.pair_id)
    return pair


def _require_assignee(pair: PagePair, user: User) -> None:
    if pair.assignee_id != user.pk:
        raise InvalidState("This pair is no longer assigned to you.", field="pair")


def pair_screen(*, pair: PagePair, user: User, decision: str, note: str = "") -> PagePair:
    """Record a screening decision: annotate (the pair opens for authoring) or exclude with a reason."""
    choices = {Screening.Decision.ANNOTATE, Screening.Decision.TRANSLATED, Screening.Decision.STRUCTURAL}
    choices.add(Screening.Decision.OTHER)
    if decision not in choices:
        raise InvalidInput(
            f"Unknown screening decision {decision!r}: use one of {', '.join(sorted(choices))}.", field="decision"
        )
    note = note or ""
    if decision == Screening.Decision.OTHER and not note.strip():
        raise InvalidInput("Excluding a pair for another reason needs a note saying why.", field="note")
    if len(note) > MAX_TEXT_FIELD:
        raise InvalidInput(f"The note is longer than {MAX_TEXT_FIELD} characters.", field="note")
    _require_assignee(pair, user)
    editable = {PagePair.Status.CLAIMED, PagePair.Status.ANNOTATING, PagePair.Status.EXCLUDED}
    if pair.status not in editable:
        raise InvalidState(f"A {pair.get_status_display().lower()} pair cannot be screened again.", field="decision")
    if decision != Screening.Decision.ANNOTATE and pair.items.alive().exists():
        raise InvalidState("This pair has QA items: delete them before excluding the pair.", field="decision")
    status = PagePair.Status.ANNOTATING if decision == Screening.Decision.ANNOTATE else PagePair.Status.EXCLUDED
    now = timezone.now()
    changes = {"status": status, "screening_decision": decision, "claim_expires_at": None, "updated_at": now}
    with transaction.atomic():
        known = _pair_update(pair, {"assignee_id": user.pk, "status__in": sorted(editable)}, changes)
        if known is None:
            raise InvalidState("This pair changed in the meantime; reload it.", field="decision")
        Screening.objects.create(pair=pair, annotator=user, decision=decision, note=note, created_at=now)
        audit.record(
            user, Action.PAIR_SCREENED, pair, project=pair.project, before=pair.status, decision=decision, note=note
        )
    _pair_updated(pair, changes, known)
    return pair


def _pair_update(pair: PagePair, where: dict[str, Any], changes: dict[str, Any]) -> bool | None:
    """Write `changes` (and the next version) to the live pair if it is still `where` and as the request read it,
    else if it is `where` as it is now: True when the first applied (the pair is then `changes` on what was read),
    False when only the second did, None when neither (the pair is no longer `where`)."""
    pairs = PagePair.objects.filter(pk=pair.pk, **where)  # live pairs only
    changes = {**changes, "version": F("version") + 1}
    if pairs.filter(version=pair.version).update(**changes):
        return True
    return False if pairs.update(**changes) else None


def _pair_updated(pair: PagePair, changes: dict[str, Any], known: bool | None) -> None:
    """The pair after `_pair_update`: changed in Python when its row was as read, else read again."""
    if not known:
        pair.refresh_from_db(fields=[*changes, "version"])
        return
    for name, value in changes.items():
        setattr(pair, name, value)
    pair.version += 1


def pair_record_activity(*, pair: PagePair, user: User, seconds: int, item: QAItem | None = None) -> None:
    """Add active (not idle) seconds measured in the browser to the pair and, if given, the item."""
    if not isinstance(seconds, int) or seconds < 0:
        raise InvalidInput("seconds must be a non-negative whole number.", field="seconds")
    _require_assignee(pair, user)
    seconds = min(seconds, MAX_ACTIVITY_SECONDS)
    if not seconds:
        return
    now = timezone.now()
    pair_changes: dict[str, Any] = {"active_seconds": F("active_seconds") + seconds}
    if pair.status == PagePair.Status.CLAIMED:  # someone reading a pair keeps their claim
        pair_changes["claim_expires_at"] = now + timedelta(minutes=pair.project.claim_minutes)
    PagePair.objects.filter(pk=pair.pk).update(**pair_changes)
    if item is not None:
        if item.pair_id != pair.pk:
            raise InvalidInput("The item does not belong to this pair.", field="item")
        QAItem.objects.filter(pk=item.pk).update(active_seconds=F("active_seconds") + seconds)


# QA items


def _require_authoring(pair: PagePair, user: User) -> None:
    _require_assignee(pair, user)
    if pair.status != PagePair.Status.ANNOTATING:
        raise InvalidState(
            f"The pair is {pair.get_status_display().lower()}; QA items can only change while it is being annotated.",
            field="pair",
        )


def qa_item_create(*, pair: PagePair, user: User, kind: str = QAItem.Kind.LEAD, **content: Any) -> QAItem:
    """Start a new draft item on a pair being annotated (optionally with content, as the API allows)."""
    _require_authoring(pair, user)
    project = pair.project
    # The pair funnel counts the pair's items when asked to (`item_counts=True`, the API's create does).
    counted: dict[str, int | None] = {
        QAItem.Kind.LEAD: getattr(pair, "live_lead_items", None),
        QAItem.Kind.DOCUMENT: getattr(pair, "live_document_items", None),
    }
    if kind == QAItem.Kind.LEAD:
        existing = counted[kind]
        if existing is None:
            existing = pair.items.alive().filter(kind=kind).count()
        if existing >= project.lead_qa_max:
            raise InvalidState(
                f"This project takes at most {project.lead_qa_max} lead-section QAs per pair.", field="kind"
            )
    elif kind == QAItem.Kind.DOCUMENT:
        if not project.collect_document_qa:
            raise InvalidState("This project does not collect document-level QAs.", field="kind")
        documents = counted[kind]
        if documents is None:
            documents = 1 if pair.items.alive().filter(kind=kind).exists() else 0
        if documents:
            raise InvalidState("A pair has at most one document-level QA.", field="kind")
    else:
        raise InvalidInput(f"Unknown item kind {kind!r}: use 'lead' or 'document'.", field="kind")
    # With content, the item is written as a save of the new draft would leave it: its second version.
    changes, document, spans = _content_checked(pair, kind, **content)
    item = QAItem(project=project, pair=pair, author=user, kind=kind, version=2 if content else 1, **changes)
    with transaction.atomic() if spans is not None else nullcontext():
        item.save(force_insert=True)
        if spans is not None:
            _spans_write(item, document, spans, replace=False)
    return item


def span_document_text(pair: PagePair, document: str) -> str:
    return pair.local_lead if document == EvidenceSpan.Document.LOCAL_LEAD else pair.local_text


def check_document_evidence(pair: PagePair, spans: Iterable[Any]) -> None:
    """A document-level QA needs a fact of its own: its evidence must not be a lead item's evidence.

    Where the local full text begins with the lead (as imported texts do), overlapping offsets count as reuse;
    the same evidence text counts everywhere.
    """
    lead_spans = list(
        EvidenceSpan.objects.filter(
            item__pair=pair, item__kind=QAItem.Kind.LEAD, item__deleted_at__isnull=True
        ).values_list("start", "end", "text")
    )
    offsets_comparable = bool(pair.local_lead) and pair.local_text.startswith(pair.local_lead)
    for index, span in enumerate(spans):
        for start, end, text in lead_spans:
            overlaps = offsets_comparable and start is not None and span.start < end and start < span.end
            if text == span.text or overlaps:
                raise InvalidInput(
                    f"spans[{index}]: this evidence is already used by a lead-section QA of this pair "
                    f"({text!r}); a document-level QA needs a fact of its own.",
                    field=f"spans[{index}]",
                )


def qa_item_update(
    *,
    item: QAItem,
    user: User,
    version: int,
    question: str | None = None,
    answer_standard: str | None = None,
    answer_local: str | None = None,
    spans: Iterable[Mapping[str, Any]] | None = None,
) -> QAItem:
    """Save a draft. Fields left as None keep their value; `spans` replaces all spans.

    The save applies only if the item is still at `version`; otherwise StaleEdit
    carries the newer item, and nothing the client sent is written over it.
    """
    pair = item.pair
    if item.author_id != user.pk:
        raise InvalidState("Only the item's author can edit it.", field="item")
    # A draft changes while its pair is being annotated; an item sent back by review changes on its own
    # (the pair stays submitted) until the author resubmits it (review.decisions.qa_item_resubmit).
    editable_status = QAItem.Status.NEEDS_REWRITE if item.status == QAItem.Status.NEEDS_REWRITE else QAItem.Status.DRAFT
    if editable_status == QAItem.Status.DRAFT:
        _require_authoring(pair, user)
    changes, document, checked_spans = _content_checked(
        pair, item.kind, question=question, answer_standard=answer_standard, answer_local=answer_local, spans=spans
    )
    now = timezone.now()
    # One statement needs no transaction of its own; the spans are replaced together with the text.
    with transaction.atomic() if checked_spans is not None else nullcontext():
        qa_item_transition(
            item=item,
            allowed=[editable_status],
            expected_version=version,
            changes={**changes, "updated_at": now},
            doing="edited here",
        )
        if checked_spans is not None:
            _spans_write(item, document, checked_spans, replace=True)
    # The update applied to the row at `version`: the item is what was read with these changes, as written.
    for name, value in changes.items():
        setattr(item, name, value)
    item.version = version + 1
    item.updated_at = now
    return item


TEXT_FIELD_LABELS = {
    "question": "the question",
    "answer_standard": "the answer in the standard language",
    "answer_local": "the answer in the local variety",
}


def qa_item_update_what_fits(
    *,
    item: QAItem,
    user: User,
    version: int,
    question: str | None = None,
    answer_standard: str | None = None,
    answer_local: str | None = None,
    spans: Iterable[Mapping[str, Any]] | None = None,
) -> tuple[QAItem, InvalidInput | None]:
    """The authoring screen's save: `qa_item_update` of everything sent except the text fields over the limit,
    which are left as they were and named in the returned error (per field, in `details`) for the screen to say
    at the field, where what was typed stays. Every other refusal is raised as `qa_item_update` raises it."""
    texts = {"question": question, "answer_standard": answer_standard, "answer_local": answer_local}
    over = {name: len(value) for name, value in texts.items() if isinstance(value, str) and len(value) > MAX_TEXT_FIELD}
    kept = {name: None if name in over else value for name, value in texts.items()}
    if not over or spans is not None or any(value is not None for value in kept.values()):
        item = qa_item_update(item=item, user=user, version=version, spans=spans, **kept)
    if not over:
        return item, None
    details = {
        name: [
            f"Not saved: {TEXT_FIELD_LABELS[name]} is {length} characters, {length - MAX_TEXT_FIELD} over the limit "
            f"of {MAX_TEXT_FIELD}. Shorten it here; the rest of the item is saved."
        ]
        for name, length in over.items()
    }
    first = next(iter(details))
    return item, InvalidInput(details[first][0], field=first, details=details)


def _content_checked(
    pair: PagePair,
    kind: str,
    *,
    question: str | None = None,
    answer_standard: str | None = None,
    answer_local: str | None = None,
    spans: Iterable[Mapping[str, Any]] | None = None,
) -> tuple[dict[str, Any], str, list[SpanInput] | None]:
    """An item's content as sent, checked: the text fields given, the spans' document, the spans (None: not sent)."""
    qa_item_text_check(question=question, answer_standard=answer_standard, answer_local=answer_local)
    document = EvidenceSpan.Document.LOCAL_LEAD if kind == QAItem.Kind.LEAD else EvidenceSpan.Document.LOCAL_TEXT
    checked_spans = None
    if spans is not None:
        checked_spans = spans_check(span_document_text(pair, document), spans, document=document)
        if kind == QAItem.Kind.DOCUMENT:
            check_document_evidence(pair, checked_spans)
    changes: dict[str, Any] = {
        name: value
        for name, value in (
            ("question", question),
            ("answer_standard", answer_standard),
            ("answer_local", answer_local),
        )
        if value is not None
    }
    return changes, document, checked_spans


def _spans_write(item: QAItem, document: str, spans: list[SpanInput], *, replace: bool) -> None:
    """Write the item's evidence spans (`replace`: instead of those it has)."""
    if replace:
        EvidenceSpan.objects.filter(item=item).delete()
    EvidenceSpan.objects.bulk_create(
        [
            EvidenceSpan(item=item, document=document, start=s.start, end=s.end, text=s.text, position=i)
            for i, s in enumerate(spans)
        ]
    )


def qa_item_delete(*, item: QAItem, user: User) -> None:
    """Delete an item softly: the row and its revisions stay, out of every list, queue, release and figure.

    An author deletes their own draft while the pair is being annotated; a coordinator deletes any item.
    A coordinator restores it from the project's Deleted list (`qa_item_restore`).
    """
    coordinator = is_coordinator(user, item.project)
    if not coordinator:
        if item.author_id != user.pk:
            raise InvalidState("Only the item's author or a coordinator can delete it.", field="item")
        _require_authoring(item.pair, user)
        if item.status != QAItem.Status.DRAFT:
            raise InvalidState("Only a draft can be deleted by its author; ask a coordinator.", field="item")
    with transaction.atomic():
        if not lifecycle.qa_items_delete(items=QAItem.objects.filter(pk=item.pk, version=item.version), user=user):
            raise InvalidState("This item changed in the meantime; reload it.", field="item")
        audit.record(user, Action.ITEM_DELETED, item, project=item.project, status=item.status)


def qa_item_restore(*, item: QAItem, user: User) -> QAItem:
    """Bring a deleted item back as it was (coordinator): same status, revisions, judgments and history."""
    if item.deleted_at is None:
        raise InvalidState("This item is not deleted.", field="item")
    pair = PagePair.all_objects.get(pk=item.pair_id)
    if pair.deleted_at is not None:
        raise InvalidState("The item's pair is deleted: restore the pair, which brings its items back.", field="item")
    if item.status == QAItem.Status.DRAFT:
        if pair.status != PagePair.Status.ANNOTATING:
            raise InvalidState(
                f"A draft comes back only while its pair is being annotated; the pair is "
                f"{pair.get_status_display().lower()}.",
                field="item",
            )
        limit = item.project.lead_qa_max if item.kind == QAItem.Kind.LEAD else 1
        if pair.items.alive().filter(kind=item.kind).count() >= limit:
            raise InvalidState(f"The pair already has {limit} {item.get_kind_display()} item(s).", field="item")
    with transaction.atomic():
        if not lifecycle.qa_items_restore(items=QAItem.objects.filter(pk=item.pk, deleted_at=item.deleted_at)):
            raise InvalidState("This item changed in the meantime; reload the list.", field="item")
        audit.record(user, Action.ITEM_RESTORED, item, project=item.project, deleted_at=item.deleted_at)
    item.refresh_from_db()
    return item


# Deleting and restoring pairs and projects (soft: nothing is removed; see docs/operations.md)


def pair_delete(*, pair: PagePair, user: User) -> PagePair:
    """Delete a pair softly (coordinator), with its live items: out of the queue, lists, releases and figures.

    The items deleted with the pair carry the pair's deletion time, which is how `pair_restore` brings back
    exactly those (and not items deleted on their own before).
    """
    if pair.project.kind in (Project.Kind.TRIVIA, Project.Kind.ENTITY_QA):
        # Their one pair only holds the project's items: deleting it would take every item with it.
        raise InvalidState(
            "A multiple-choice project's items are deleted one by one, not through a pair.", field="pair"
        )
    now = timezone.now()
    with transaction.atomic():
        if not PagePair.objects.filter(pk=pair.pk).update(
            deleted_at=now, deleted_by=user, version=F("version") + 1, updated_at=now
        ):
            raise InvalidState("This pair is deleted already.", field="pair")
        items = lifecycle.qa_items_delete(items=QAItem.objects.filter(pair=pair), user=user, at=now)
        audit.record(user, Action.PAIR_DELETED, pair, project=pair.project, status=pair.status, items=items)
    pair.refresh_from_db()
    return pair


def pair_restore(*, pair: PagePair, user: User) -> PagePair:
    """Bring a deleted pair back (coordinator) with the items deleted with it, as they were."""
    if pair.deleted_at is None:
        raise InvalidState("This pair is not deleted.", field="pair")
    now = timezone.now()
    with transaction.atomic():
        if not PagePair.all_objects.filter(pk=pair.pk, deleted_at=pair.deleted_at).update(
            deleted_at=None, deleted_by=None, version=F("version") + 1, updated_at=now
        ):
            raise InvalidState("This pair changed in the meantime; reload the list.", field="pair")
        items = lifecycle.qa_items_restore(items=QAItem.objects.filter(pair=pair, deleted_at=pair.deleted_at))
        audit.record(user, Action.PAIR_RESTORED, pair, project=pair.project, deleted_at=pair.deleted_at, items=items)
    pair.refresh_from_db()
    return pair


def project_delete(*, project: Project, user: User) -> Project:
    """Delete a project softly (coordinator): every page and endpoint of it answers 404 until it is restored.

    Its pairs, items and releases are left as they are (hidden with the project), so a restore brings all back.
    """
    now = timezone.now()
    with transaction.atomic():
        if not Project.objects.filter(pk=project.pk).update(
            deleted_at=now, deleted_by=user, version=F("version") + 1, updated_at=now
        ):
            raise InvalidState("This project is deleted already.", field="project")
        audit.record(user, Action.PROJECT_DELETED, project)
    project.refresh_from_db()
    return project


def project_restore(*, project: Project, user: User) -> Project:
    """Bring a deleted project back (its coordinators or a superuser)."""
    if project.deleted_at is None:
        raise InvalidState("This project is not deleted.", field="project")
    with transaction.atomic():
        if not Project.all_objects.filter(pk=project.pk, deleted_at=project.deleted_at).update(
            deleted_at=None, deleted_by=None, version=F("version") + 1, updated_at=timezone.now()
        ):
            raise InvalidState("This project changed in the meantime; reload the list.", field="project")
        audit.record(user, Action.PROJECT_RESTORED, project, deleted_at=project.deleted_at)
    project.refresh_from_db()
    return project


def deleted_in_project(project: Project) -> dict[str, Any]:
    """What a coordinator can restore in a project: deleted pairs, and items deleted on their own.

    Items deleted with their pair come back with the pair and are not listed apart; duplicates merged away by
    validation are not deletions (the merge keeps them) and are left out.
    """
    pairs = (
        PagePair.all_objects.filter(project=project, deleted_at__isnull=False)
        .select_related("deleted_by")
        .defer("local_lead", "standard_lead", "local_text", "standard_text", "metadata")
        .order_by("-deleted_at", "-id")
    )
    items = (
        QAItem.objects.filter(project=project, deleted_at__isnull=False, pair__deleted_at__isnull=True)
        .exclude(validation__merged_into__isnull=False)
        .select_related("pair", "author", "deleted_by")
        .order_by("-deleted_at", "-id")
    )
    return {"pairs": pairs, "items": items}


def deleted_projects_for(user: User) -> QuerySet[Project]:
    """Deleted projects the user may restore: those they coordinate (every one for a superuser)."""
    projects = Project.all_objects.filter(deleted_at__isnull=False).select_related("deleted_by")
    if not user.is_superuser:
        projects = projects.filter(
            memberships__user=user, memberships__is_coordinator=True, memberships__deactivated_at__isnull=True
        )
    return projects.order_by("-deleted_at", "slug")


def pair_submit(*, pair: PagePair, user: User) -> PagePair:
    """Send a pair's items on to review, once there are enough complete items."""
    _require_authoring(pair, user)
    project = pair.project
    # The items with their spans and the number of each one's last revision.
    last_revision = QAItemRevision.objects.filter(item=OuterRef("pk")).order_by("-number").values("number")[:1]
    items = items_with_spans(
        QAItem.objects.alive()
        .filter(pair=pair)
        .select_related("author")
        .annotate(last_revision=Subquery(last_revision))
    )
    lead_items = [item for item in items if item.kind == QAItem.Kind.LEAD]
    errors: dict[str, list[str]] = {}
    if len(lead_items) < project.lead_qa_min:
        errors["items"] = [
            f"this project takes {project.lead_qa_range} lead-section QAs per pair; this pair has {len(lead_items)}"
        ]
    for number, item in enumerate(items, start=1):
        where = f"items[{number}]"
        for field, label in (
            ("question", "question"),
            ("answer_standard", "answer in the standard language"),
            ("answer_local", "answer in the local variety"),
        ):
            if not getattr(item, field).strip():
                errors.setdefault(f"{where}.{field}", []).append(f"item {number}: the {label} is empty")
        if not item.spans.all():
            errors.setdefault(f"{where}.spans", []).append(f"item {number}: no evidence is highlighted")
        elif item.kind == QAItem.Kind.DOCUMENT:  # a lead item may have taken the same evidence since
            try:
                check_document_evidence(pair, item.spans.all())
            except InvalidInput as error:
                errors.setdefault(f"{where}.spans", []).append(f"item {number}: {error.message}")
    if project.verification_required:
        checked = _checked_answers([item.pk for item in lead_items])
        for number, item in enumerate(items, start=1):
            if item.kind != QAItem.Kind.LEAD:
                continue
            if item.pk not in checked:
                problem = "not verified on the standard page yet"
            elif checked[item.pk] not in (None, item.answer_standard):
                problem = "the answer changed after it was verified: check it again on the standard page"
            else:
                continue
            errors.setdefault(f"items[{number}].verification", []).append(f"item {number}: {problem}")
    if errors:
        first = next(iter(errors))
        raise InvalidInput(f"Cannot submit yet: {errors[first][0]}.", field=first, details=errors)
    now = timezone.now()
    changes = {"status": PagePair.Status.SUBMITTED, "submitted_at": now, "updated_at": now}
    drafts = [item for item in items if item.status == QAItem.Status.DRAFT]
    with transaction.atomic():
        known = _pair_update(pair, {"status": PagePair.Status.ANNOTATING, "assignee_id": user.pk}, changes)
        if known is None:
            raise InvalidState("This pair changed in the meantime; reload it.", field="pair")
        moved = qa_items_transition(
            where={"pair_id": pair.pk},
            allowed=[QAItem.Status.DRAFT],
            to=QAItem.Status.SUBMITTED,
            changes={"submitted_at": now, "updated_at": now},
        )
        known = known and moved == len(drafts)
        for item in items:
            item.project = project
        revisions = qa_item_revisions_create(
            items=items,
            author=user,
            reason=QAItemRevision.Reason.SUBMITTED,
            last={item.pk: item.last_revision or 0 for item in items},  # type: ignore[attr-defined]
        )
        items_route(items=items, actor=user, revisions=revisions)
        audit.record(user, Action.PAIR_SUBMITTED, pair, project=project, items=len(items))
    if known:  # the pair and items as submitted, for the caller to show (`live_items`, as PairDetailOutput reads)
        _pair_updated(pair, changes, known)
        for item in drafts:
            item.status, item.submitted_at, item.updated_at = QAItem.Status.SUBMITTED, now, now
            item.version += 1
        pair.live_items = items  # type: ignore[attr-defined]
    else:
        pair.refresh_from_db()
    return pair


def _checked_answers(item_ids: list[int]) -> dict[int, str | None]:
    """The answer text each item's latest full-document verification checked (None: any answer will do, as for
    "not possible" or a verification recorded before the checked text was kept); items never verified are absent."""
    latest: dict[int, tuple[int, str | None]] = {}
    rows = QAItem.objects.filter(pk__in=item_ids, verifications__isnull=False).values_list(
        "pk", "verifications__number", "verifications__result", "verifications__answer"
    )
    for pk, number, result, answer in rows:
        if pk not in latest or number > latest[pk][0]:
            latest[pk] = (number, None if result == "not_possible" else answer)
    return {pk: answer for pk, (_, answer) in latest.items()}


def qa_item_revisions_create(
    *, items: list[QAItem], author: User | None, reason: str, last: Mapping[int, int] | None = None
) -> list[QAItemRevision]:
    """`qa_item_revision_create` for many items at once (a pair's items on submit): two queries however many.

    `last`: each item's last revision number, when the caller read it with the items (then one query); a
    number taken twice is refused by the (item, number) constraint, never written twice."""
    if last is None:
        last = dict(
            QAItemRevision.objects.filter(item__in=items)
            .order_by()
            .values("item_id")
            .annotate(number=Max("number"))
            .values_list("item_id", "number")
        )
    return QAItemRevision.objects.bulk_create(
        [
            QAItemRevision(
                item=item,
                number=last.get(item.pk, 0) + 1,
                question=item.question,
                answer_standard=item.answer_standard,
                answer_local=item.answer_local,
                spans=_revision_spans(item),
                content={},
                author=author,
                reason=reason,
            )
            for item in items
        ]
    )


def _revision_spans(item: QAItem) -> list[dict[str, Any]]:
    return [
        {"document": s.document, "start": s.start, "end": s.end, "text": s.text, "match": s.match}
        for s in item.spans.all()
    ]


def qa_item_revision_create(
    *, item: QAItem, author: User | None, reason: str, content: dict[str, Any] | None = None
) -> QAItemRevision:
    """Snapshot the item's current content (and spans) as its next revision.

    `content`: what another project kind keeps beside question and answer (a multiple-choice item's candidates).
    """
    last = item.revisions.order_by("-number").values_list("number", flat=True).first() or 0
    return QAItemRevision.objects.create(
        item=item,
        number=last + 1,
        question=item.question,
        answer_standard=item.answer_standard,
        answer_local=item.answer_local,
        spans=_revision_spans(item),
        content=content or {},
        author=author,
        reason=reason,
    )
