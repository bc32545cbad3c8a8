"""Business rules of entity-question projects: entities with attributes and groupings, normalisation a
coordinator can see and correct, generated inductive/deductive question pairs with similar distractors,
a verification queue, and the four context conditions of a release.

Projects, members, roles and the access rule are annotation's. A generated question is an
`annotation.QAItem` (revision 1 `generated`, every fixed wording or swapped distractor a later
revision with the options in its `content`) in review: verifiers are members with the reviewer
role who take questions through the review app's slots (`review_claim_next`: FOR UPDATE SKIP
LOCKED and expiring claims, so no question is handed to two verifiers), and accept or reject with
the review app's judgments (`review_submit`) on the project's review criterion.
"""

from __future__ import annotations

import csv
import io
import random
import re
from collections.abc import Mapping, Sequence
from typing import Any

import orjson
from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.db.models import Count, QuerySet
from django.utils import timezone
from rapidfuzz import fuzz

from annotation import lifecycle
from annotation import services as annotation_services
from annotation.models import ItemEvent, Project, QAItem, QAItemRevision
from annotation.services import qa_item_revision_create
from audit import services as audit
from audit.models import Action
from common.errors import InvalidInput, InvalidState, StaleEdit
from multichoice.models import AttributeKind, Entity, EntityQuestion, EntitySettings
from multichoice.services import items_pair
from review import decisions as review_decisions
from review import judging as review_judging
from review import queue as review_queue
from review.models import Judgment, ReviewSlot

DISTRACTORS = 3
CONTEXTS = ("none", "perfect", "misleading", "distraction")
_YEAR = re.compile(r"\b(\d{4})\b")
_KEY = re.compile(r"^[a-z][a-z0-9_]{0,39}$")
# What a verifier judges; a project's review criteria (changeable in the review settings like any project's).
ENTITY_CRITERIA = [
    {
        "key": "correct",
        "label": "Question and options are right",
        "help": "Fluent wording, exactly one correct option, three wrong but plausible distractors.",
    }
]


# Projects and settings


def entity_settings(project: Project) -> EntitySettings:
    settings, _ = EntitySettings.objects.get_or_create(project=project)
    return settings


def _check_attributes(value: Any) -> list[dict[str, str]]:
    if not isinstance(value, list) or not value:
        raise InvalidInput("attributes: give at least one attribute.", field="attributes")
    checked, keys = [], set()
    for index, raw in enumerate(value):
        where = f"attributes[{index}]"
        if not isinstance(raw, Mapping):
            raise InvalidInput(f"{where}: must be an object.", field=where)
        key = str(raw.get("key") or "").strip()
        if not _KEY.match(key) or key in keys or key in ("name", "description"):
            raise InvalidInput(
                f"{where}.key: lower-case letters, digits, _; unique; not name/description.", field=f"{where}.key"
            )
        kind = str(raw.get("kind") or "text")
        if kind not in AttributeKind.values:
            raise InvalidInput(f"{where}.kind: one of {', '.join(AttributeKind.values)}.", field=f"{where}.kind")
        inductive, deductive = str(raw.get("inductive") or ""), str(raw.get("deductive") or "")
        if "{entity}" not in inductive:
            raise InvalidInput(f"{where}.inductive: the template needs {{entity}}.", field=f"{where}.inductive")
        if "{value}" not in deductive:
            raise InvalidInput(f"{where}.deductive: the template needs {{value}}.", field=f"{where}.deductive")
        keys.add(key)
        label = str(raw.get("label") or key).strip()
        checked.append({"key": key, "label": label, "kind": kind, "inductive": inductive, "deductive": deductive})
    return checked


def entity_project_create(
    *,
    name: str,
    slug: str | None = None,
    language: str,
    attributes: Any,
    grouping_fields: Sequence[str] = (),
    entity_label: str = "company",
    seed: int = 0,
    created_by: AbstractBaseUser | None = None,
) -> Project:
    """A project of kind `entity_qa`: questions generated from entities, verified by reviewers."""
    checked = _check_attributes(attributes)
    groupings = [str(g).strip() for g in grouping_fields if str(g).strip()]
    with transaction.atomic():
        project = annotation_services.project_create(
            name=name, slug=slug, local_language=language, standard_language=language, created_by=created_by
        )
        Project.objects.filter(pk=project.pk).update(
            kind=Project.Kind.ENTITY_QA, review_criteria=[dict(c) for c in ENTITY_CRITERIA]
        )
        EntitySettings.objects.create(
            project=project, attributes=checked, grouping_fields=groupings, entity_label=entity_label[:60], seed=seed
        )
    project.refresh_from_db()
    return project


# Normalisation


def normalise(kind: str, value: Any, *, country: str = "") -> str:
    """A year as four digits, a city as "City, Country", a list sorted and joined by "; ", text without extra spaces."""
    parts = value if isinstance(value, list) else ([] if value is None else [value])
    text = " ".join("; ".join(str(v) for v in parts).split())
    if not text:
        return ""
    if kind == AttributeKind.YEAR:
        match = _YEAR.search(text)
        if match is None:
            raise ValueError(f"no four-digit year in {text!r}")
        return match.group(1)
    if kind == AttributeKind.CITY:
        parts = [p.strip() for p in text.split(",") if p.strip()]
        if len(parts) == 1 and country:
            parts.append(country)
        return ", ".join([parts[0], parts[-1]]) if len(parts) > 1 else parts[0]
    if kind == AttributeKind.LIST:
        items = {p.strip() for p in re.split(r"[;|]", text) if p.strip()}
        return "; ".join(sorted(items, key=str.casefold))
    return text


# Import and correction


def _records(data: bytes, name: str) -> list[tuple[str, dict[str, Any]]]:
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise InvalidInput(f"{name}: the file is not UTF-8 text.", field="file") from None
    if name.endswith(".jsonl"):
        records = []
        for line, raw in enumerate(text.splitlines(), start=1):
            if raw.strip():
                try:
                    record = orjson.loads(raw)
                except orjson.JSONDecodeError:
                    raise InvalidInput(f"{name} line {line}: not valid JSON.", field="file") from None
                if not isinstance(record, dict):
                    raise InvalidInput(f"{name} line {line}: must be a JSON object.", field="file")
                records.append((f"{name} line {line}", record))
        return records
    return [(f"{name} line {line}", dict(row)) for line, row in enumerate(csv.DictReader(io.StringIO(text)), start=2)]


def entities_import(
    *, project: Project, data: bytes, name: str = "entities.csv", user: AbstractBaseUser | None = None
) -> dict[str, Any]:
    """CSV or JSONL with `name`, `description`, one column per attribute and per grouping field; all or nothing.
    Values are normalised; what changed is reported so the coordinator can check it."""
    settings = entity_settings(project)
    records = _records(data, name)
    if not records:
        raise InvalidInput(f"{name}: the file has no records.", field="file")
    existing = set(Entity.objects.filter(project=project).values_list("name", flat=True))
    rows, changed = [], []
    for where, record in records:
        entity_name = " ".join(str(record.get("name") or "").split())
        if not entity_name:
            raise InvalidInput(f"{where}: name: must not be empty.", field="name")
        if entity_name in existing:
            raise InvalidInput(f"{where}: name: {entity_name!r} is there already.", field="name")
        existing.add(entity_name)
        groupings = {g: " ".join(str(record.get(g) or "").split()) for g in settings.grouping_fields}
        raw, values = {}, {}
        for attribute in settings.attributes:
            key = attribute["key"]
            raw[key] = record.get(key)
            try:
                values[key] = normalise(attribute["kind"], raw[key], country=groupings.get("country", ""))
            except ValueError as error:
                raise InvalidInput(f"{where} ({entity_name}): {key}: {error}.", field=key) from None
            if values[key] and values[key] != str(raw[key] or "").strip():
                changed.append({"entity": entity_name, "attribute": key, "raw": raw[key], "normalised": values[key]})
        description = str(record.get("description") or "").strip()
        rows.append(
            Entity(
                project=project,
                name=entity_name[:300],
                description=description,
                raw=raw,
                values=values,
                groupings=groupings,
            )
        )
    with transaction.atomic():
        Entity.objects.bulk_create(rows)
        audit.record(user, Action.IMPORT_FINISHED, project, kind="entities", created=len(rows), normalised=len(changed))
    return {"created": len(rows), "normalised": changed}


def entity_correct(*, entity: Entity, attribute: str, value: str, user: AbstractBaseUser | None = None) -> Entity:
    """A coordinator's correction of a normalised value (kept as typed, marked corrected; the value before is in
    the audit log, the imported one in `raw`)."""
    keys = [a["key"] for a in entity_settings(entity.project).attributes]
    if attribute not in keys:
        raise InvalidInput(f"attribute: {attribute!r} is not an attribute of this project.", field="attribute")
    before = entity.values.get(attribute, "")
    entity.values = {**entity.values, attribute: " ".join(value.split())}
    entity.corrected = sorted({*entity.corrected, attribute})
    with transaction.atomic():
        entity.save(update_fields=["values", "corrected"])
        audit.record(
            user, Action.ENTITY_CORRECTED, entity, attribute=attribute, before=before, after=entity.values[attribute]
        )
    return entity


# Generation


def _similarity(a: Entity, b: Entity) -> float:
    return fuzz.token_set_ratio(a.name, b.name) + fuzz.token_set_ratio(a.description, b.description) / 2


def pick_distractors(entity: Entity, others: Sequence[Entity], attribute: str, *, seed: int) -> list[Entity]:
    """Up to three other entities with a different (non-empty) value, and different values from each other,
    most similar by name and description first; ties broken by a generator seeded with `seed`."""
    value = entity.values.get(attribute, "")
    rng = random.Random(f"{seed}:{entity.name}:{attribute}")
    candidates = [o for o in others if o.pk != entity.pk and o.values.get(attribute) and o.values[attribute] != value]
    keyed = [(-_similarity(entity, o), rng.random(), o.name, o) for o in sorted(candidates, key=lambda o: o.name)]
    chosen: list[Entity] = []
    seen = {value}
    for *_, other in sorted(keyed, key=lambda k: k[:3]):
        if other.values[attribute] not in seen:
            chosen.append(other)
            seen.add(other.values[attribute])
        if len(chosen) == DISTRACTORS:
            break
    return chosen


def _question(entity: Entity, attribute: Mapping[str, str], direction: str, distractors: list[Entity], seed: int):
    value = entity.values[attribute["key"]]
    if direction == EntityQuestion.Direction.INDUCTIVE:
        text = attribute["inductive"].replace("{entity}", entity.name)
        options = [value, *[d.values[attribute["key"]] for d in distractors]]
    else:
        text = attribute["deductive"].replace("{value}", value)
        options = [entity.name, *[d.name for d in distractors]]
    order = list(range(len(options)))
    random.Random(f"{seed}:{entity.name}:{attribute['key']}:{direction}").shuffle(order)
    return text, [options[i] for i in order], order.index(0), value


def entity_questions(project: Project) -> QuerySet[EntityQuestion]:
    """The project's live questions with their QA items and entities loaded."""
    return (
        EntityQuestion.objects.filter(project=project, item__deleted_at__isnull=True)
        .select_related("item", "entity")
        .order_by("item_id")
    )


def questions_generate(
    *, project: Project, seed: int | None = None, user: AbstractBaseUser | None = None
) -> dict[str, int]:
    """For every (entity, attribute) with a value, an inductive and a deductive question with three distractors;
    pairs already generated are kept. Deterministic given the seed (the project's, unless given).

    Each question is a QA item in review (revision 1, reason `generated`) with the project's review slots open.
    """
    settings = entity_settings(project)
    seed = settings.seed if seed is None else seed
    entities = list(Entity.objects.filter(project=project).order_by("name"))
    done = set(EntityQuestion.objects.filter(project=project).values_list("entity_id", "attribute", "direction"))
    new: list[tuple[str, EntityQuestion]] = []
    skipped = 0
    for attribute in settings.attributes:
        key = attribute["key"]
        for entity in entities:
            if not entity.values.get(key):
                continue
            distractors = pick_distractors(entity, entities, key, seed=seed)
            if len(distractors) < DISTRACTORS:
                skipped += 1
                continue
            for direction in EntityQuestion.Direction.values:
                if (entity.pk, key, direction) in done:
                    continue
                text, options, answer, value = _question(entity, attribute, direction, distractors, seed)
                question = EntityQuestion(
                    project=project,
                    entity=entity,
                    attribute=key,
                    direction=direction,
                    options=options,
                    answer=answer,
                    correct_value=value,
                    distractors=[d.pk for d in distractors],
                )
                new.append((text, question))
    if not new:
        return {"created": 0, "skipped_without_distractors": skipped}
    now = timezone.now()
    with transaction.atomic():
        pair = items_pair(project)
        items = QAItem.objects.bulk_create(
            QAItem(
                project=project,
                pair=pair,
                author=None,
                question=text,
                answer_standard=question.options[question.answer],
                status=QAItem.Status.SUBMITTED,
                submitted_at=now,
                created_at=now,
            )
            for text, question in new
        )
        for item, (_, question) in zip(items, new, strict=True):
            question.item = item
        EntityQuestion.objects.bulk_create([question for _, question in new])
        QAItemRevision.objects.bulk_create(
            QAItemRevision(
                item=item,
                number=1,
                question=item.question,
                answer_standard=item.answer_standard,
                content=question.content(),
                reason=QAItemRevision.Reason.GENERATED,
                created_at=now,
            )
            for item, (_, question) in zip(items, new, strict=True)
        )
        lifecycle.items_route(items=items, actor=None)
        report = {"created": len(new), "skipped_without_distractors": skipped}
        audit.record(user, Action.ENTITY_QUESTIONS_GENERATED, project, seed=seed, **report)
    return report


def question_counts(project: Project) -> dict[str, int]:
    """Questions waiting for verification, verified and rejected (the shared items' statuses)."""
    counts = dict(
        QAItem.objects.alive()
        .filter(project=project, entity_question__isnull=False)
        .values_list("status")
        .annotate(n=Count("id"))
        .order_by()
    )
    return {
        "generated": counts.get(QAItem.Status.SUBMITTED, 0),
        "accepted": counts.get(QAItem.Status.ACCEPTED, 0),
        "rejected": counts.get(QAItem.Status.REJECTED, 0) + counts.get(QAItem.Status.NEEDS_REWRITE, 0),
    }


# Verification


def verification_next(*, project: Project, user: AbstractBaseUser) -> EntityQuestion | None:
    """Claim the next question for a verifier: the review app's queue (the one they hold, else the oldest open
    slot, FOR UPDATE SKIP LOCKED with an expiring claim), so two verifiers never get the same question."""
    slot = review_queue.review_claim_next(project=project, user=user)
    if slot is None:
        return None
    return entity_questions(project).get(item_id=slot.item_id)


def entity_review_strata(project: Project) -> dict[str, dict[int, str]]:
    """Agreement strata of verifications (multichoice/kind.py): each question's attribute and direction."""
    strata: dict[str, dict[int, str]] = {"attribute": {}, "direction": {}}
    for item_id, attribute, direction in EntityQuestion.objects.filter(project=project).values_list(
        "item_id", "attribute", "direction"
    ):
        strata["attribute"][item_id] = attribute
        strata["direction"][item_id] = direction
    return strata


def held_slot(question: EntityQuestion, user: AbstractBaseUser) -> ReviewSlot | None:
    """The verifier's claimed slot on this question, if any."""
    return ReviewSlot.objects.filter(item_id=question.item_id, reviewer=user, status=ReviewSlot.Status.CLAIMED).first()


def question_verify(
    *,
    question: EntityQuestion,
    user: AbstractBaseUser,
    version: int,
    decision: str,
    text: str | None = None,
    swap: int | None = None,
) -> EntityQuestion:
    """Accept (optionally with fixed wording) or reject a generated question, or swap one distractor (the option at
    index `swap` is replaced by the next most similar entity that qualifies; the question stays waiting).

    The verifier works on the review slot they hold (claimed here if a slot is free: one that another
    verifier holds is refused). A fixed wording or a swap is a new revision of the QA item; accept and
    reject are judgments on the project's criteria, and a flag rejects the question when the round is done.
    `version` is the QA item's.
    """
    if decision not in ("accept", "reject", "swap"):
        raise InvalidInput("decision: accept, reject or swap.", field="decision")
    item = question.item
    if item.status != QAItem.Status.SUBMITTED:
        raise InvalidState("This question was verified already.", field="status")
    changes: dict[str, Any] = {}
    wording = text.strip() if text is not None and text.strip() and text.strip() != item.question else None
    if decision == "swap":
        changes = _swapped(question, swap)
    slot = held_slot(question, user) or review_queue.review_claim(item=item, user=user)
    with transaction.atomic():
        if wording is not None or changes:
            qa_changes: dict[str, Any] = {"question": wording} if wording is not None else {}
            if "options" in changes:
                qa_changes["answer_standard"] = changes["options"][question.answer]
            if not lifecycle.qa_item_transition(
                item=item, allowed=[QAItem.Status.SUBMITTED], expected_version=version, changes=qa_changes
            ):
                item.refresh_from_db()
                raise StaleEdit("Someone else changed this question; reload it.", current=question)
            EntityQuestion.objects.filter(pk=question.pk).update(**changes, edited=True)
            question = entity_questions(question.project).get(pk=question.pk)
            revision = qa_item_revision_create(
                item=question.item,
                author=user,
                reason=QAItemRevision.Reason.REVIEWER_REWRITE,
                content=question.content(),
            )
            lifecycle.item_event_record(
                item=question.item,
                actor=user,
                action=ItemEvent.Action.REVIEWER_REWRITE,
                before=QAItem.Status.SUBMITTED,
                after=QAItem.Status.SUBMITTED,
                revision_number=revision.number,
                note="distractor swapped" if decision == "swap" else "wording fixed",
            )
        elif item.version != version:
            raise StaleEdit("Someone else changed this question; reload it.", current=question)
        if decision != "swap":
            verdict = Judgment.Verdict.PASS if decision == "accept" else Judgment.Verdict.FLAG
            # A rejection is the verifier's whole reason (the flag needs one; a generated question has no author).
            comment = "" if verdict == Judgment.Verdict.PASS else "Rejected at verification."
            judgments = {
                criterion["key"]: {"verdict": verdict, "comment": comment}
                for criterion in question.project.review_criteria
            }
            slot.refresh_from_db()
            review_judging.review_submit(slot=slot, user=user, version=slot.version, judgments=judgments)
            qa = QAItem.objects.get(pk=question.item_id)
            if qa.status == QAItem.Status.NEEDS_REWRITE:  # generated questions have no author to rewrite them
                review_decisions.qa_item_reject(
                    item=qa, user=user, reason="Rejected in verification.", version=qa.version
                )
    return entity_questions(question.project).get(pk=question.pk)


def _swapped(question: EntityQuestion, swap: int | None) -> dict[str, Any]:
    """The options and distractors after replacing the distractor at option index `swap`."""
    if swap is None or not 0 <= swap < len(question.options) or swap == question.answer:
        raise InvalidInput("swap: the index of a distractor option.", field="swap")
    entity = question.entity
    key = question.attribute
    others = list(Entity.objects.filter(project=question.project).exclude(pk__in=question.distractors))
    seed = entity_settings(question.project).seed
    used = set(question.options)
    pool = pick_distractors_all(entity, others, key, seed=seed)
    replacement = next(
        (o for o in pool if (o.values[key] if question.direction == "inductive" else o.name) not in used), None
    )
    if replacement is None:
        raise InvalidState("No other entity qualifies as a distractor.", field="swap")
    options = list(question.options)
    old = options[swap]
    options[swap] = replacement.values[key] if question.direction == "inductive" else replacement.name
    distractors = [pk for pk in question.distractors if _option_of(pk, key, question.direction) != old]
    return {"options": options, "distractors": [*distractors, replacement.pk]}


def _option_of(entity_pk: int, key: str, direction: str) -> str:
    entity = Entity.objects.get(pk=entity_pk)
    return entity.values.get(key, "") if direction == "inductive" else entity.name


def pick_distractors_all(entity: Entity, others: Sequence[Entity], attribute: str, *, seed: int) -> list[Entity]:
    """Every qualifying other entity, in the order `pick_distractors` prefers them."""
    value = entity.values.get(attribute, "")
    rng = random.Random(f"{seed}:{entity.name}:{attribute}:swap")
    candidates = [o for o in others if o.pk != entity.pk and o.values.get(attribute) and o.values[attribute] != value]
    return [
        k[-1]
        for k in sorted(((-_similarity(entity, o), rng.random(), o.name, o) for o in candidates), key=lambda k: k[:3])
    ]


# Release records


def _misleading(description: str, entity: Entity, key: str, replacement: str, label: str) -> str:
    for old in (entity.values.get(key, ""), str(entity.raw.get(key) or "")):
        if old and old in description:
            return description.replace(old, replacement)
    return f"{description} {label}: {replacement}.".strip()


def question_record(
    question: EntityQuestion, entities: Mapping[int, Entity], labels: Mapping[str, str]
) -> dict[str, Any]:
    """One released question with its four context conditions and the entity's grouping fields."""
    entity = entities[question.entity_id]
    distractors = [entities[pk] for pk in question.distractors if pk in entities]
    first = distractors[0] if distractors else None
    key = question.attribute
    return {
        "id": f"{question.project_id}-e{question.item_id}",
        "entity": entity.name,
        "attribute": key,
        "direction": question.direction,
        "question": question.question,
        "options": question.options,
        "answer": question.answer,
        "correct_value": question.correct_value,
        "distractor_entities": [d.name for d in distractors],
        "contexts": {
            "none": "",
            "perfect": entity.description,
            "misleading": _misleading(
                entity.description, entity, key, first.values.get(key, "") if first else "", labels.get(key, key)
            ),
            "distraction": first.description if first else "",
        },
        "groupings": entity.groupings,
        "edited": question.edited,
    }
