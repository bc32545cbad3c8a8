"""Business rules of entity-question projects: entities with attributes and groupings, normalisation a
coordinator can see and correct, generated inductive/deductive question pairs with similar distractors,
a verification queue, and the four context conditions of a release.

Projects, members, roles and the access rule are annotation's; verifiers are members with the reviewer role.
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
from django.db.models import F
from rapidfuzz import fuzz

from annotation import services as annotation_services
from annotation.errors import InvalidInput, InvalidState, StaleEdit
from annotation.models import Project
from multichoice.models import KIND_ENTITY, AttributeKind, Entity, EntityQuestion, EntitySettings

DISTRACTORS = 3
CONTEXTS = ("none", "perfect", "misleading", "distraction")
_YEAR = re.compile(r"\b(\d{4})\b")
_KEY = re.compile(r"^[a-z][a-z0-9_]{0,39}$")


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
        Project.objects.filter(pk=project.pk).update(kind=KIND_ENTITY, review_criteria=[])
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


def entities_import(*, project: Project, data: bytes, name: str = "entities.csv") -> dict[str, Any]:
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
    Entity.objects.bulk_create(rows)
    return {"created": len(rows), "normalised": changed}


def entity_correct(*, entity: Entity, attribute: str, value: str) -> Entity:
    """A coordinator's correction of a normalised value (kept as typed, marked corrected)."""
    keys = [a["key"] for a in entity_settings(entity.project).attributes]
    if attribute not in keys:
        raise InvalidInput(f"attribute: {attribute!r} is not an attribute of this project.", field="attribute")
    entity.values = {**entity.values, attribute: " ".join(value.split())}
    entity.corrected = sorted({*entity.corrected, attribute})
    entity.save(update_fields=["values", "corrected"])
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


def questions_generate(*, project: Project, seed: int | None = None) -> dict[str, int]:
    """For every (entity, attribute) with a value, an inductive and a deductive question with three distractors;
    pairs already generated are kept. Deterministic given the seed (the project's, unless given)."""
    settings = entity_settings(project)
    seed = settings.seed if seed is None else seed
    entities = list(Entity.objects.filter(project=project).order_by("name"))
    done = set(EntityQuestion.objects.filter(project=project).values_list("entity_id", "attribute", "direction"))
    new, skipped = [], 0
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
                new.append(
                    EntityQuestion(
                        project=project,
                        entity=entity,
                        attribute=key,
                        direction=direction,
                        question=text,
                        options=options,
                        answer=answer,
                        correct_value=value,
                        distractors=[d.pk for d in distractors],
                    )
                )
    EntityQuestion.objects.bulk_create(new)
    return {"created": len(new), "skipped_without_distractors": skipped}


# Verification


def verification_next(*, project: Project) -> EntityQuestion | None:
    return EntityQuestion.objects.filter(project=project, status=EntityQuestion.Status.GENERATED).order_by("id").first()


def question_verify(
    *,
    question: EntityQuestion,
    user: AbstractBaseUser,
    version: int,
    decision: str,
    text: str | None = None,
    swap: int | None = None,
) -> EntityQuestion:
    """Accept (optionally with fixed wording) or reject a generated question. `swap` replaces the distractor at that
    option index by the next most similar entity that qualifies; the question stays waiting."""
    if decision not in ("accept", "reject", "swap"):
        raise InvalidInput("decision: accept, reject or swap.", field="decision")
    if question.status != EntityQuestion.Status.GENERATED:
        raise InvalidState("This question was verified already.", field="status")
    changes: dict[str, Any] = {}
    if text is not None and text.strip() and text.strip() != question.question:
        changes |= {"question": text.strip(), "edited": True}
    if decision == "swap":
        if swap is None or not 0 <= swap < len(question.options) or swap == question.answer:
            raise InvalidInput("swap: the index of a distractor option.", field="swap")
        entity = question.entity
        others = list(Entity.objects.filter(project=question.project).exclude(pk__in=question.distractors))
        seed = entity_settings(question.project).seed
        used = set(question.options)
        pool = pick_distractors_all(entity, others, question.attribute, seed=seed)
        key = question.attribute
        replacement = next(
            (o for o in pool if (o.values[key] if question.direction == "inductive" else o.name) not in used), None
        )
        if replacement is None:
            raise InvalidState("No other entity qualifies as a distractor.", field="swap")
        options = list(question.options)
        old = options[swap]
        options[swap] = replacement.values[key] if question.direction == "inductive" else replacement.name
        distractors = [pk for pk in question.distractors if _option_of(pk, key, question.direction) != old]
        changes |= {"options": options, "distractors": [*distractors, replacement.pk], "edited": True}
    else:
        accepted = decision == "accept"
        changes["status"] = EntityQuestion.Status.ACCEPTED if accepted else EntityQuestion.Status.REJECTED
        changes["verifier"] = user
    with transaction.atomic():
        if not EntityQuestion.objects.filter(
            pk=question.pk, version=version, status=EntityQuestion.Status.GENERATED
        ).update(**changes, version=F("version") + 1):
            question.refresh_from_db()
            raise StaleEdit("Someone else changed this question; reload it.", current=question)
    question.refresh_from_db()
    return question


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
        "id": f"{question.project_id}-e{question.pk}",
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
