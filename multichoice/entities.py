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

import random
import re
from collections.abc import Callable, Collection, Mapping, Sequence
from typing import Any

import orjson
from django.contrib.auth.models import User
from django.db import transaction
from django.db.models import Count, QuerySet
from django.utils import timezone
from rapidfuzz import fuzz

from annotation import lifecycle
from annotation.models import ItemEvent, Project, QAItem, QAItemRevision
from annotation.services.projects import project_create
from annotation.services.revisions import qa_item_revision_create
from audit import services as audit
from audit.models import Action
from common import csvfile
from common.errors import InvalidInput, InvalidState, StaleEdit
from common.text import first_unstorable
from multichoice.models import AttributeKind, Entity, EntityQuestion, EntitySettings
from multichoice.services.items import items_pair
from review import decisions as review_decisions
from review import judging as review_judging
from review import queue as review_queue
from review.models import Judgment, ReviewSlot

DISTRACTORS = 3
MAX_ENTITIES = 10_000  # per project: generation ranks every other entity for each fact
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
    """The attribute definitions; an error names the attribute's position (1-based, as the form shows it) and
    the field, e.g. `attributes[2].deductive`."""
    if not isinstance(value, list) or not value:
        raise InvalidInput("attributes: give at least one attribute.", field="attributes")
    checked, keys = [], set()
    for index, raw in enumerate(value):
        where = f"attributes[{index + 1}]"
        if not isinstance(raw, Mapping):
            raise InvalidInput(f"{where}: must be an object.", field=where)
        label = " ".join(str(raw.get("label") or "").split())
        key = str(raw.get("key") or "").strip() or _key_of(label)
        if not _KEY.match(key) or key in keys or key in ("name", "description"):
            raise InvalidInput(
                f"{where}.key: {key!r}: lower-case letters, digits and _, starting with a letter; unique; "
                "not name or description.",
                field=f"{where}.key",
            )
        kind = str(raw.get("kind") or "text")
        if kind not in AttributeKind.values:
            raise InvalidInput(f"{where}.kind: one of {', '.join(AttributeKind.values)}.", field=f"{where}.kind")
        inductive, deductive = str(raw.get("inductive") or "").strip(), str(raw.get("deductive") or "").strip()
        statement = str(raw.get("statement") or "").strip()
        if "{entity}" not in inductive:
            raise InvalidInput(f"{where}.inductive: the template needs {{entity}}.", field=f"{where}.inductive")
        if "{value}" not in deductive:
            raise InvalidInput(f"{where}.deductive: the template needs {{value}}.", field=f"{where}.deductive")
        if statement and ("{entity}" not in statement or "{value}" not in statement):
            raise InvalidInput(
                f"{where}.statement: the sentence needs {{entity}} and {{value}}.", field=f"{where}.statement"
            )
        keys.add(key)
        checked.append(
            {
                "key": key,
                "label": label or key,
                "kind": kind,
                "inductive": inductive,
                "deductive": deductive,
                "statement": statement or f"{label or key} of {{entity}}: {{value}}.",
            }
        )
    return checked


def _key_of(label: str) -> str:
    """A key made from a label ("Key people" → `key_people`), for attributes defined in the form."""
    return re.sub(r"[^a-z0-9]+", "_", label.casefold()).strip("_")[:40]


def entity_project_create(
    *,
    name: str,
    slug: str | None = None,
    language: str,
    attributes: Any,
    grouping_fields: Sequence[str] = (),
    entity_label: str = "company",
    seed: int = 0,
    created_by: User | None = None,
) -> Project:
    """A project of kind `entity_qa`: questions generated from entities, verified by reviewers."""
    checked = _check_attributes(attributes)
    groupings = [str(g).strip() for g in grouping_fields if str(g).strip()]
    with transaction.atomic():
        project = project_create(
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


def normalise(kind: str, value: Any, *, country: str = "") -> str | list[str]:
    """A year as four digits, a city as "City, Country", text without extra spaces; a list as its elements
    (split on `;` or `|`), each without extra spaces, duplicates dropped, in the order of the source."""
    if kind == AttributeKind.LIST:
        raw = value if isinstance(value, list) else ([] if value is None else re.split(r"[;|]", str(value)))
        elements: list[str] = []
        for part in raw:
            text = " ".join(str(part).split())
            if text and text not in elements:
                elements.append(text)
        return elements
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
    return text


def facts(entity: Entity, key: str) -> list[str]:
    """The entity's values of an attribute: a list attribute's elements in source order, else the one value."""
    value = entity.values.get(key)
    if isinstance(value, list):
        return [str(v) for v in value]
    return [str(value)] if value else []


def shown(value: Any) -> str:
    """A normalised value as people read it (a list's elements joined by "; ")."""
    return "; ".join(str(v) for v in value) if isinstance(value, list) else str(value or "")


# Import and correction


def _records(data: bytes, name: str, fmt: str = "auto") -> list[tuple[str, dict[str, Any]]]:
    try:
        text = csvfile.decode(data)
    except csvfile.CsvProblem as problem:
        raise InvalidInput(f"{name}: {problem.message}.", field="file") from None
    if fmt == "jsonl" or (fmt == "auto" and name.endswith(".jsonl")):
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
    try:
        _, rows = csvfile.dict_rows(text, needed=("name",))
        return [(f"{name} line {line}", {k: v for k, v in row.items() if k is not None}) for line, row in rows]
    except csvfile.CsvProblem as problem:
        where = f"{name} line {problem.line}" if problem.line else name
        raise InvalidInput(f"{where}: {problem.message}.", field=problem.column or "file") from None


def _check_columns(
    settings: EntitySettings, records: list[tuple[str, dict[str, Any]]], name: str
) -> tuple[list[str], list[str]]:
    """The file's columns against the project's: an attribute no column feeds refuses the file (every value of it
    would be empty, and an update would erase them); the columns that match nothing and the grouping fields no
    column feeds are returned, to be reported."""
    columns: dict[str, None] = {}
    for _, record in records:
        columns |= dict.fromkeys(str(key) for key in record)
    keys = [a["key"] for a in settings.attributes]
    known = {"name", "description", *keys, *settings.grouping_fields}
    ignored = [column for column in columns if column not in known]
    missing = [a for a in settings.attributes if a["key"] not in columns]
    if missing:
        wanted = ", ".join(f"{a['key']} ({a['label']})" for a in missing)
        unmatched = f"; its columns that match no attribute: {', '.join(ignored)}" if ignored else ""
        raise InvalidInput(
            f"{name}: no column for the attribute{'s' if len(missing) > 1 else ''} {wanted}{unmatched}. "
            f"The project's columns are name, description, {', '.join(keys)}"
            f"{', ' + ', '.join(settings.grouping_fields) if settings.grouping_fields else ''}; nothing was imported.",
            field=missing[0]["key"],
        )
    return ignored, [g for g in settings.grouping_fields if g not in columns]


def entities_import(
    *, project: Project, data: bytes, name: str = "entities.csv", fmt: str = "auto", user: User | None = None
) -> dict[str, Any]:
    """CSV or JSONL with `name`, `description`, one column per attribute and per grouping field; all or nothing.
    Values are normalised; what changed is reported so the coordinator can check it.

    An entity already in the project (same name) is updated: its description, groupings and values are the
    file's, except values a coordinator corrected by hand (kept, and reported). Questions generated from a value
    the update removes are flagged, as a correction flags them. A name twice in one file refuses the file.
    """
    settings = entity_settings(project)
    records = _records(data, name, fmt)
    if not records:
        raise InvalidInput(f"{name}: the file has no records.", field="file")
    ignored, unfed_groupings = _check_columns(settings, records, name)
    existing = {e.name: e for e in Entity.objects.filter(project=project)}
    # Generation compares every fact's entity with every other entity: the project's size is capped.
    new_names = {" ".join(str(record.get("name") or "").split())[:300] for _, record in records}
    total = len(existing) + len(new_names - set(existing))
    if total > MAX_ENTITIES:
        raise InvalidInput(
            f"{name}: the project would hold {total:,} entities, more than the limit of {MAX_ENTITIES:,}; "
            "split the entities into several projects.",
            field="file",
        )
    seen: dict[str, str] = {}
    rows, changed, updates, kept = [], [], [], []
    for where, record in records:
        if found := first_unstorable(record):
            raise InvalidInput(f"{where}: {found[0]}: {found[1]}.", field=found[0])
        entity_name = " ".join(str(record.get("name") or "").split())[:300]
        if not entity_name:
            raise InvalidInput(f"{where}: name: must not be empty.", field="name")
        if entity_name in seen:
            raise InvalidInput(f"{where}: name: {entity_name!r} is also on {seen[entity_name]}.", field="name")
        seen[entity_name] = where
        groupings = {g: " ".join(str(record.get(g) or "").split()) for g in settings.grouping_fields}
        raw, values = {}, {}
        for attribute in settings.attributes:
            key = attribute["key"]
            raw[key] = record.get(key)
            try:
                values[key] = normalise(attribute["kind"], raw[key], country=groupings.get("country", ""))
            except ValueError as error:
                raise InvalidInput(f"{where} ({entity_name}): {key}: {error}.", field=key) from None
            if values[key] and shown(values[key]) != str(raw[key] or "").strip():
                changed.append(
                    {"entity": entity_name, "attribute": key, "raw": raw[key], "normalised": shown(values[key])}
                )
        description = str(record.get("description") or "").strip()
        old = existing.get(entity_name)
        if old is None:
            rows.append(
                Entity(
                    project=project,
                    name=entity_name,
                    description=description,
                    raw=raw,
                    values=values,
                    groupings=groupings,
                )
            )
            continue
        for key in old.corrected:
            if key in values and values[key] != old.values.get(key):
                kept.append(
                    {
                        "entity": entity_name,
                        "attribute": key,
                        "file": shown(values[key]),
                        "kept": shown(old.values[key]),
                    }
                )
                values[key] = old.values.get(key, "")
        differs = [k for k in values if values[k] != old.values.get(k)]
        if differs or description != old.description or groupings != old.groupings:
            updates.append((old, description, raw, values, groupings, differs))
    now = timezone.now()
    flagged = 0
    with transaction.atomic():
        Entity.objects.bulk_create(rows)
        for old, description, raw, values, groupings, differs in updates:
            Entity.objects.filter(pk=old.pk).update(
                description=description, raw=raw, values=values, groupings=groupings
            )
            previous, old.values = old.values, values
            for key in differs:
                flagged += _flag_outdated(old, key, now=now, before=previous.get(key))
        report = {
            "created": len(rows),
            "updated": [{"entity": old.name, "attributes": differs} for old, _, _, _, _, differs in updates],
            "kept_corrected": kept,
            "questions_flagged": flagged,
            "normalised": changed,
            "ignored_columns": ignored,
            "empty_groupings": unfed_groupings,
        }
        audit.record(
            user, Action.IMPORT_FINISHED, project, kind="entities", file=name, created=len(rows),
            updated=len(updates), questions_flagged=flagged, normalised=len(changed),
        )  # fmt: skip
    return report


def _flag_outdated(entity: Entity, attribute: str, *, now: Any, before: Any = None) -> int:
    """Flag every question on `attribute` built from a value the entity no longer has (released or not): its own
    questions whose correct value it lost, and questions it is a distractor of — an inductive one whose options
    hold a value it lost (the option it brought), a deductive one whose value it now has (its name would be a
    second right answer) or whose distraction context stated the value it lost."""
    after = facts(entity, attribute)
    lost = set(_as_facts(before)) - set(after)
    said = shown(entity.values.get(attribute))
    own = (
        EntityQuestion.objects.filter(entity=entity, attribute=attribute, value_corrected_at__isnull=True)
        .exclude(correct_value__in=after)
        .update(value_corrected_at=now, value_corrected_to=said)
    )
    first_lost = bool(before) and _as_facts(before)[:1] != after[:1]
    outdated = []
    # The distractors are a JSON list of ids: looked through here, as SQLite cannot search inside JSON lists.
    rows = EntityQuestion.objects.filter(
        project_id=entity.project_id, attribute=attribute, value_corrected_at__isnull=True
    ).values_list("pk", "distractors", "direction", "options", "correct_value")
    for pk, distractors, direction, options, correct_value in rows.iterator():
        if entity.pk not in (distractors or []):
            continue
        if direction == EntityQuestion.Direction.INDUCTIVE:
            stale = bool(lost & set(options))
        else:
            stale = correct_value in after or first_lost
        if stale:
            outdated.append(pk)
    as_distractor = EntityQuestion.objects.filter(pk__in=outdated).update(
        value_corrected_at=now, value_corrected_to=f"{said} (of the distractor {entity.name})"
    )
    return own + as_distractor


def _as_facts(value: Any) -> list[str]:
    if isinstance(value, list):
        return [str(v) for v in value]
    return [str(value)] if value else []


def entity_correct(*, entity: Entity, attribute: str, value: str, user: User | None = None) -> Entity:
    """A coordinator's correction of a value. It passes the checks of an import: normalised the same way (a year
    to its four digits, a city with the entity's country, a list split on `;` or `|`), and a value that is empty
    or that the attribute's kind refuses is refused — a correction never erases a value. Marked corrected; the
    value before is in the audit log, the imported one in `raw`.

    Every question built from a value the correction removes is flagged (`value_corrected_at`), released or
    not — the entity's own and those it is a distractor of (`_flag_outdated`): the coordinator sees them on the
    question pages and the next release marks them `value_corrected`.
    """
    kinds = {a["key"]: a["kind"] for a in entity_settings(entity.project).attributes}
    if attribute not in kinds:
        raise InvalidInput(f"attribute: {attribute!r} is not an attribute of this project.", field="attribute")
    blank = InvalidInput(
        f"value: give the corrected value of {attribute} for {entity.name}; a correction cannot erase a value.",
        field="value",
    )
    if not str(value or "").strip():
        raise blank
    try:
        after = normalise(kinds[attribute], value, country=(entity.groupings or {}).get("country", ""))
    except ValueError as error:
        raise InvalidInput(f"value: {error}; nothing was changed.", field="value") from None
    if not after:
        raise blank
    before = entity.values.get(attribute, "")
    entity.values = {**entity.values, attribute: after}
    entity.corrected = sorted({*entity.corrected, attribute})
    with transaction.atomic():
        entity.save(update_fields=["values", "corrected"])
        flagged = _flag_outdated(entity, attribute, now=timezone.now(), before=before)
        audit.record(
            user,
            Action.ENTITY_CORRECTED,
            entity,
            attribute=attribute,
            before=shown(before),
            after=shown(after),
            questions_flagged=flagged,
        )
    return entity


# Generation


def _similarity(a: Entity, b: Entity) -> float:
    return fuzz.token_set_ratio(a.name, b.name) + fuzz.token_set_ratio(a.description, b.description) / 2


def _stand_in(other: Entity, key: str, taken: set[str]) -> str | None:
    """The value `other` brings as an inductive option: its first (in source order) not already taken."""
    return next((value for value in facts(other, key) if value not in taken), None)


def _ranked(entity: Entity, others: Sequence[Entity], key: str, value: str, rng: random.Random) -> list[Entity]:
    """Other entities for which `value` is not true and that have a value of their own, most similar first."""
    candidates = [o for o in others if o.pk != entity.pk and facts(o, key) and value not in facts(o, key)]
    keyed = [(-_similarity(entity, o), rng.random(), o.name, o) for o in sorted(candidates, key=lambda o: o.name)]
    return [k[-1] for k in sorted(keyed, key=lambda k: k[:3])]


def pick_distractors(
    entity: Entity, others: Sequence[Entity], attribute: str, *, seed: int, value: str | None = None
) -> list[Entity]:
    """Up to three other entities for which `value` (the entity's first value unless given) is not true, each
    bringing a value that is not one of the entity's and differs from the others' — so no option is also right
    and every option has the shape of one value; most similar by name and description first, ties broken by a
    generator seeded with `seed`."""
    mine = facts(entity, attribute)
    value = mine[0] if value is None and mine else (value or "")
    salt = "" if len(mine) < 2 else f":{value}"
    rng = random.Random(f"{seed}:{entity.name}:{attribute}{salt}")
    chosen: list[Entity] = []
    taken = set(mine)
    for other in _ranked(entity, others, attribute, value, rng):
        stand_in = _stand_in(other, attribute, taken)
        if stand_in is not None:
            chosen.append(other)
            taken.add(stand_in)
        if len(chosen) == DISTRACTORS:
            break
    return chosen


def _options_of(entity: Entity, key: str, distractors: Sequence[Entity]) -> list[str]:
    """The inductive options the distractors bring (what `pick_distractors` counted on)."""
    taken, options = set(facts(entity, key)), []
    for other in distractors:
        stand_in = _stand_in(other, key, taken) or ""
        options.append(stand_in)
        taken.add(stand_in)
    return options


def _question(
    entity: Entity, attribute: Mapping[str, str], direction: str, value: str, distractors: list[Entity], seed: int
) -> tuple[str, list[str], int]:
    """The question about one fact (`value`: one element of a list attribute), its options and correct index."""
    if direction == EntityQuestion.Direction.INDUCTIVE:
        text = attribute["inductive"].replace("{entity}", entity.name)
        options = [value, *_options_of(entity, attribute["key"], distractors)]
    else:
        text = attribute["deductive"].replace("{value}", value)
        options = [entity.name, *[d.name for d in distractors]]
    order = list(range(len(options)))
    salt = "" if len(facts(entity, attribute["key"])) < 2 else f":{value}"
    random.Random(f"{seed}:{entity.name}:{attribute['key']}:{direction}{salt}").shuffle(order)
    return text, [options[i] for i in order], order.index(0)


def entity_questions(project: Project) -> QuerySet[EntityQuestion]:
    """The project's live questions with their QA items and entities loaded."""
    return (
        EntityQuestion.objects.filter(project=project, item__deleted_at__isnull=True)
        .select_related("item", "entity")
        .order_by("item_id")
    )


def fact_count(project: Project) -> int:
    """How many facts generation works through (the progress of its job)."""
    keys = [a["key"] for a in entity_settings(project).attributes]
    return sum(len(facts(entity, key)) for entity in Entity.objects.filter(project=project) for key in keys)


def questions_generate(
    *,
    project: Project,
    seed: int | None = None,
    user: User | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> dict[str, int]:
    """For every fact — (entity, attribute, value), one per element of a list attribute — an inductive and a
    deductive question with three distractors; pairs already generated are kept. Deterministic given the seed
    (the project's, unless given). Pages and the API run it as a job (`multichoice.jobs`); `progress(facts
    done, questions so far)` is told how far it got.

    Each question is a QA item in review (revision 1, reason `generated`) with the project's review slots open.
    """
    settings = entity_settings(project)
    seed = settings.seed if seed is None else seed
    tell = progress or (lambda done, made: None)
    entities = list(Entity.objects.filter(project=project).order_by("name"))
    done = set(
        EntityQuestion.objects.filter(project=project).values_list(
            "entity_id", "attribute", "direction", "correct_value"
        )
    )
    new: list[tuple[str, EntityQuestion]] = []
    skipped = seen = 0
    for attribute in settings.attributes:
        key = attribute["key"]
        for entity, value in ((e, v) for e in entities for v in facts(e, key)):
            seen += 1
            tell(seen, len(new))
            distractors = pick_distractors(entity, entities, key, seed=seed, value=value)
            if len(distractors) < DISTRACTORS:
                skipped += 1
                continue
            for direction in EntityQuestion.Direction.values:
                if (entity.pk, key, direction, value) in done:
                    continue
                text, options, answer = _question(entity, attribute, direction, value, distractors, seed)
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
        audit.record(
            user,
            Action.ENTITY_QUESTIONS_GENERATED,
            project,
            seed=seed,
            created=report["created"],
            skipped_without_distractors=report["skipped_without_distractors"],
        )
    return report


def question_counts(project: Project, *, reuse: bool = False) -> dict[str, int]:
    """Questions waiting for verification, verified and rejected (the shared items' statuses).

    With `reuse`, counts already taken on this project instance are given again: a page that shows them and its
    next steps (both on the request's own instance) counts once. Leave it off after a change."""
    if reuse and hasattr(project, "_question_counts"):
        return dict(project._question_counts)
    counts = dict(
        QAItem.objects.alive()
        .filter(project=project, entity_question__isnull=False)
        .values_list("status")
        .annotate(n=Count("id"))
        .order_by()
    )
    result = {
        "generated": counts.get(QAItem.Status.SUBMITTED, 0),
        "accepted": counts.get(QAItem.Status.ACCEPTED, 0),
        "rejected": counts.get(QAItem.Status.REJECTED, 0) + counts.get(QAItem.Status.NEEDS_REWRITE, 0),
        "value_corrected": entity_questions(project).filter(value_corrected_at__isnull=False).count(),
    }
    project._question_counts = dict(result)  # type: ignore[attr-defined]
    return result


# Verification


def verification_next(*, project: Project, user: User) -> EntityQuestion | None:
    """Claim the next question for a verifier: the review app's queue (the one they hold, else the oldest open
    slot, FOR UPDATE SKIP LOCKED with an expiring claim), so two verifiers never get the same question."""
    slot = review_queue.review_claim_next(project=project, user=user)
    if slot is None:
        return None
    return entity_questions(project).get(item_id=slot.item_id)


def entity_review_strata(project: Project, items: Collection[int]) -> dict[str, dict[int, str]]:
    """Agreement strata of verifications (multichoice/kind.py): each of `items`' attribute and direction."""
    strata: dict[str, dict[int, str]] = {"attribute": {}, "direction": {}}
    for item_id, attribute, direction in EntityQuestion.objects.filter(project=project, item_id__in=items).values_list(
        "item_id", "attribute", "direction"
    ):
        strata["attribute"][item_id] = attribute
        strata["direction"][item_id] = direction
    return strata


def held_slot(question: EntityQuestion, user: User) -> ReviewSlot | None:
    """The verifier's claimed slot on this question, if any."""
    return ReviewSlot.objects.filter(item_id=question.item_id, reviewer=user, status=ReviewSlot.Status.CLAIMED).first()


def question_verify(
    *,
    question: EntityQuestion,
    user: User,
    version: int,
    decision: str,
    text: str | None = None,
    swap: int | None = None,
    reason: str = "",
) -> EntityQuestion:
    """Accept (optionally with fixed wording) or reject a generated question, or swap one distractor (the option at
    index `swap` is replaced by the next most similar entity that qualifies; the question stays waiting).

    The verifier works on the review slot they hold (claimed here if a slot is free: one that another
    verifier holds is refused). A fixed wording or a swap is a new revision of the QA item; accept and
    reject are judgments on the project's criteria, and a flag rejects the question when the round is done.
    A rejection takes the verifier's `reason` (it is the flag's comment and the rejection's reason).
    `version` is the QA item's.
    """
    if decision not in ("accept", "reject", "swap"):
        raise InvalidInput("decision: accept, reject or swap.", field="decision")
    reason = " ".join((reason or "").split())[:2000]
    if decision == "reject" and not reason:
        raise InvalidInput("reason: say why the question is rejected.", field="reason")
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
            comment = "" if verdict == Judgment.Verdict.PASS else reason
            judgments = {
                criterion["key"]: {"verdict": verdict, "comment": comment}
                for criterion in question.project.review_criteria
            }
            slot.refresh_from_db()
            review_judging.review_submit(slot=slot, user=user, version=slot.version, judgments=judgments)
            qa = QAItem.objects.get(pk=question.item_id)
            if qa.status == QAItem.Status.NEEDS_REWRITE:  # generated questions have no author to rewrite them
                review_decisions.qa_item_reject(item=qa, user=user, reason=reason, version=qa.version)
    return entity_questions(question.project).get(pk=question.pk)


def _swapped(question: EntityQuestion, swap: int | None) -> dict[str, Any]:
    """The options and distractors after replacing the distractor at option index `swap`."""
    if swap is None or not 0 <= swap < len(question.options) or swap == question.answer:
        raise InvalidInput("swap: the index of a distractor option.", field="swap")
    entity = question.entity
    key = question.attribute
    inductive = question.direction == EntityQuestion.Direction.INDUCTIVE
    others = list(Entity.objects.filter(project=question.project).exclude(pk__in=question.distractors))
    rng = random.Random(f"{entity_settings(question.project).seed}:{entity.name}:{key}:swap")
    taken = {*facts(entity, key), *question.options}
    replacement, stand_in = None, None
    for other in _ranked(entity, others, key, question.correct_value, rng):
        stand_in = _stand_in(other, key, taken) if inductive else other.name
        if stand_in is not None and stand_in not in taken:
            replacement = other
            break
    if replacement is None or stand_in is None:
        raise InvalidState("No other entity qualifies as a distractor.", field="swap")
    options = list(question.options)
    old = options[swap]
    options[swap] = stand_in
    kept = Entity.objects.filter(pk__in=question.distractors).in_bulk()
    distractors = [pk for pk in question.distractors if pk in kept and not _brings(kept[pk], old, question)]
    return {"options": options, "distractors": [*distractors, replacement.pk]}


def _brings(other: Entity, option: str, question: EntityQuestion) -> bool:
    """Whether the distractor entity is the one behind this option."""
    if question.direction == EntityQuestion.Direction.DEDUCTIVE:
        return other.name == option
    return option in facts(other, question.attribute)


# Release records


def _say(attribute: Mapping[str, str], entity: str, value: str) -> str:
    label = str(attribute.get("label") or attribute.get("key") or "value").lower()
    template = attribute.get("statement") or f"The {label} of {{entity}} is {{value}}."
    return template.replace("{entity}", entity).replace("{value}", value)


def _misleading_target(question: EntityQuestion, distractors: Sequence[Entity]) -> int | None:
    """The option index of the most similar distractor (the one the misleading context points to)."""
    for other in distractors:
        for index, option in enumerate(question.options):
            if index != question.answer and _brings(other, option, question):
                return index
    return None


def question_preview(question: EntityQuestion) -> dict[str, Any]:
    """The question's release record as it would be written now (for its page)."""
    ids = [question.entity_id, *question.distractors]
    known = Entity.objects.filter(project=question.project, pk__in=ids).in_bulk()
    attributes = {a["key"]: a for a in entity_settings(question.project).attributes}
    return question_record(question, known, attributes)


def question_record(
    question: EntityQuestion, entities: Mapping[int, Entity], attributes: Mapping[str, Mapping[str, str]]
) -> dict[str, Any]:
    """One released question with its four context conditions and the entity's grouping fields.

    Contexts are made of the attribute's statement: `perfect` states the fact asked about; `misleading` states
    the most similar distractor's option as the fact (inductive: the entity has the distractor's value;
    deductive: the distractor entity has the value asked about) and `misleading_option` is that option's index;
    `distraction` states a true fact about that distractor, which answers nothing.
    """
    entity = entities[question.entity_id]
    distractors = [entities[pk] for pk in question.distractors if pk in entities]
    key = question.attribute
    attribute = attributes.get(key) or {"key": key}
    value = question.correct_value
    target = _misleading_target(question, distractors)
    first = next(
        (d for d in distractors if target is not None and _brings(d, question.options[target], question)), None
    )
    if first is None or target is None:
        misleading = distraction = ""
    elif question.direction == EntityQuestion.Direction.INDUCTIVE:
        misleading = _say(attribute, entity.name, question.options[target])
        distraction = _say(attribute, first.name, question.options[target])
    else:
        misleading = _say(attribute, first.name, value)
        distraction = _say(attribute, first.name, next(iter(facts(first, key)), ""))
    return {
        "id": f"{question.project_id}-e{question.item_id}",
        "entity": entity.name,
        "attribute": key,
        "direction": question.direction,
        "question": question.question,
        "options": question.options,
        "answer": question.answer,
        "correct_value": value,
        "distractor_entities": [d.name for d in distractors],
        "contexts": {
            "none": "",
            "perfect": _say(attribute, entity.name, value),
            "misleading": misleading,
            "distraction": distraction,
        },
        "misleading_option": target,
        "entity_description": entity.description,
        "groupings": entity.groupings,
        "edited": question.edited,
        "value_corrected": question.value_corrected_at is not None,
    }
