"""What a trivia project's release holds: `trivia.jsonl` (and one file per split) with both languages side by
side and the local/global label, one CSV per language in the simple layout
(`id, category, difficulty, question, candidate0..n, answer, subset`), a dataset card and the manifest.
Registered with the trivia and entity kinds (multichoice/kind.py).

The builder streams the project's released QA items for the generic writers; this writer reads the
multiple-choice side rows itself, in `finish`, in QA item id order and in chunks (one query per chunk for
the revision numbers). Options are shuffled at release, the same way in both languages, by a permutation
drawn from the release seed and the item (`option_order` records it, `original_answer` the written index):
writers put the correct option first. An item is released when its QA item was accepted in review and its translation is
done (translated without a problem tag, or resolved with fix or accept); a dropped item's QA item is rejected.
"""

from __future__ import annotations

import hashlib
import io
from collections import Counter
from pathlib import Path
from typing import Any

from django.db.models import Count, Max

from annotation.models import QAItem, QAItemRevision
from common.csv_safety import csv_writer
from exports.formats.base import FileEntry, HashedFile, dumps
from exports.formats.card import CardText, DatasetCardWriter, _md
from exports.formats.manifest import ManifestWriter
from exports.formats.schema import Schema
from exports.formats.writer import BuildState, ReleaseWriter, SplitFiles
from exports.splits import ReleaseUnits
from multichoice.models import TriviaItem
from multichoice.services.items import trivia_items
from multichoice.services.projects import trivia_settings

NAME = "trivia"
CHUNK = 2000


def released_items(project: Any) -> Any:
    return trivia_items(project).filter(
        item__status=QAItem.Status.ACCEPTED, translation_status=TriviaItem.Translation.DONE
    )


def trivia_release_units(project: Any, statuses: list[str]) -> ReleaseUnits:
    """A trivia release's groups (each item its own) and the items it leaves out (not accepted or translated).

    The item statuses of a release do not apply: a trivia item is released once accepted and translated."""
    released = released_items(project).values_list("item_id", flat=True).iterator()
    units = ReleaseUnits.counted("item", ((pk, 1) for pk in released))
    left = trivia_items(project).count() - units.items
    units.left_out = {"not accepted and translated yet": left} if left else {}
    return units


def option_order(seed: int, item_id: int, n: int) -> list[int]:
    """The release's order of an item's `n` options, as their written indexes: a permutation drawn from the
    seed and the item alone (the same in every release with that seed)."""
    return sorted(range(n), key=lambda i: hashlib.blake2b(f"{seed}:{item_id}:{i}".encode(), digest_size=8).digest())


def trivia_release_record(
    item: TriviaItem, *, split: str | None, source: str, target: str, revision: int, order: list[int]
) -> dict[str, Any]:
    """One released item with its options in the release's `order` (both languages the same way)."""
    return {
        "id": item.external_id or str(item.item_id),
        "split": split,
        "category": item.category,
        "subset": item.subset,
        "difficulty": item.difficulty,
        "answer": order.index(item.answer) if item.answer in order else item.answer,
        "original_answer": item.answer,
        "option_order": order,
        source: {"question": item.question, "candidates": _ordered(item.candidates, order)},
        target: {"question": item.target_question, "candidates": _ordered(item.target_candidates, order)},
        "languages": [source, target],
        "revision": revision,
        "problem_tags": item.problem_tags,
        "resolution": item.resolution or None,
    }


def _ordered(candidates: list[str], order: list[int]) -> list[str]:
    """`candidates` in `order`; a list of another length (a translation not done) is kept as written."""
    if len(candidates) != len(order):
        return list(candidates)
    return [candidates[i] for i in order]


def trivia_schema(source: str, target: str) -> Schema:
    """One line of `trivia.jsonl` (exports.formats.schema): the two language keys are the project's."""
    side = {"question": "string", "candidates": ["string"]}
    return {
        "id": "string",
        "split": "string",
        "category": "string",
        "subset": "string",
        "difficulty": "string",
        "answer": "int64",
        "original_answer": "int64",
        "option_order": ["int64"],
        source: side,
        target: side,
        "languages": ["string"],
        "revision": "int64",
        "problem_tags": ["string"],
        "resolution": "string",
    }


class TriviaWriter(ReleaseWriter):
    def open(self, root: Path, state: BuildState) -> None:
        super().open(root, state)
        settings = trivia_settings(state.project)
        self.source, self.target = settings.source_language, settings.target_language
        self.files = SplitFiles(root, NAME, state.splits)
        self.csv = {lang: HashedFile(root, f"{NAME}_{lang}.csv") for lang in (self.source, self.target)}
        self.width = 0

    def _csv_rows(self, records: list[dict[str, Any]], *, target: bool, header: bool) -> bytes:
        out = io.StringIO()
        writer = csv_writer(out, lineterminator="\n")
        if header:
            writer.writerow(
                [
                    "id",
                    "category",
                    "difficulty",
                    "question",
                    *[f"candidate{i}" for i in range(self.width)],
                    "answer",
                    "subset",
                ]
            )
        for record in records:
            side = record[self.target if target else self.source]
            candidates = side["candidates"] + [""] * (self.width - len(side["candidates"]))
            writer.writerow(
                [
                    record["id"],
                    record["category"],
                    record["difficulty_number"],
                    side["question"],
                    *candidates,
                    record["answer"],
                    record["subset"],
                ]
            )
        return out.getvalue().encode()

    def finish(self) -> list[FileEntry]:
        state = self.state
        items = released_items(state.project)
        self.width = max((len(c) for c in items.values_list("candidates", flat=True)), default=3)
        seed = state.release.seed or 0
        positions: Counter[int] = Counter()
        first, last_id = True, 0
        while True:
            chunk = list(items.filter(item_id__gt=last_id)[:CHUNK])
            if not chunk:
                break
            last_id = chunk[-1].item_id
            revisions = dict(
                QAItemRevision.objects.filter(item_id__in=[item.item_id for item in chunk])
                .values_list("item_id")
                .annotate(last=Max("number"))
                .order_by()
            )
            records = []
            for item in chunk:
                record = trivia_release_record(
                    item,
                    split=state.plan.split_of(item.item_id) if state.plan is not None else None,
                    source=self.source,
                    target=self.target,
                    revision=revisions.get(item.item_id, 0),
                    order=option_order(seed, item.item_id, len(item.candidates)),
                )
                positions[record["answer"]] += 1
                records.append(record)
            self.files.write([(record["split"], dumps(record)) for record in records])
            numbered = [
                record | {"difficulty_number": item.difficulty_number}
                for record, item in zip(records, chunk, strict=True)
            ]
            self.csv[self.source].write(self._csv_rows(numbered, target=False, header=first))
            self.csv[self.target].write(self._csv_rows(numbered, target=True, header=first))
            first = False
        if first:  # no item: the CSVs still get their header
            for lang, handle in self.csv.items():
                handle.write(self._csv_rows([], target=lang == self.target, header=True))
        entries = self.files.finish(state, trivia_schema(self.source, self.target))
        entries += [handle.close(count_lines=False) for handle in self.csv.values()]
        by_subset = dict(items.order_by().values_list("subset").annotate(n=Count("item_id")))
        state.counts["trivia_by_subset"] = {subset: by_subset.get(subset, 0) for subset in ("local", "global")}
        state.counts["trivia_not_released"] = trivia_items(state.project).count() - (entries[0].lines or 0)
        # Where the correct option sits after the shuffle: written index 0 everywhere must not survive into a
        # benchmark (a model that always answers A would score 100%).
        state.counts["trivia_answer_positions"] = {str(k): positions[k] for k in sorted(positions)}
        return entries

    def abort(self) -> None:
        for handle in self.csv.values():
            handle.abort()
        self.files.abort()


class TriviaCardWriter(DatasetCardWriter):
    def text(self) -> CardText:
        state = self.state
        settings = trivia_settings(state.project)
        positions: dict[str, int] = state.counts.get("trivia_answer_positions") or {}
        spread = ", ".join(f"option {k}: {n}" for k, n in positions.items()) or "no items"
        return CardText(
            languages=[settings.source_language, settings.target_language],
            task="multiple-choice",
            items=state.counts.get(NAME) or 0,
            summary=(
                f"Multiple-choice trivia written in `{_md(settings.source_language)}` and translated into "
                f"`{_md(settings.target_language)}`: each line holds both versions side by side (same candidate "
                "order, so one `answer` index), the category, the difficulty and whether the item is about local "
                "or global knowledge (`subset`)."
            ),
            sections=[
                "## Answer positions",
                "",
                f"Options are shuffled at release from seed {state.release.seed} (the same order in both languages): "
                "`option_order` lists the written index of each option as released and `original_answer` the "
                "written index of the correct one. Where the correct option is in this release: "
                f"{spread}.",
            ],
            multilingual=True,
        )


def release_writers() -> list[ReleaseWriter]:
    return [TriviaWriter(), TriviaCardWriter(), ManifestWriter()]


# Entity-question projects

ENTITY_NAME = "entity_questions"


ENTITY_SCHEMA: Schema = {
    "split": "string",
    "id": "string",
    "entity": "string",
    "attribute": "string",
    "direction": "string",
    "question": "string",
    "options": ["string"],
    "answer": "int64",
    "correct_value": "string",
    "distractor_entities": ["string"],
    "contexts": {"none": "string", "perfect": "string", "misleading": "string", "distraction": "string"},
    "misleading_option": "int64",
    "entity_description": "string",
    "groupings": "json",  # the entity's grouping fields: the project's own keys
    "edited": "bool",
    "value_corrected": "bool",
}


def entity_release_units(project: Any, statuses: list[str]) -> ReleaseUnits:
    """An entity-question release's groups: its entities (an entity's questions share a split); questions not
    accepted are left out. The item statuses of a release do not apply: accepted questions are released."""
    from multichoice import entities

    questions = entities.entity_questions(project).order_by()
    accepted = questions.filter(item__status=QAItem.Status.ACCEPTED)
    units = ReleaseUnits.counted(
        "entity", accepted.values_list("entity_id").annotate(n=Count("item_id")).values_list("entity_id", "n")
    )
    left = questions.count() - units.items
    units.left_out = {"questions not accepted": left} if left else {}
    return units


class EntityQuestionsWriter(ReleaseWriter):
    """Every verified question with its four context conditions and the entity's grouping fields; with splits,
    also one file per split (the split plan of every kind, drawn per entity: an entity's inductive and
    deductive questions share a split)."""

    def finish(self) -> list[FileEntry]:
        from multichoice import entities
        from multichoice.models import Entity

        project = self.state.project
        plan = self.state.plan
        settings = entities.entity_settings(project)
        attributes = {a["key"]: a for a in settings.attributes}
        known = {e.pk: e for e in Entity.objects.filter(project=project)}
        files = SplitFiles(self.root, ENTITY_NAME, self.state.splits)
        questions = entities.entity_questions(project).filter(item__status=QAItem.Status.ACCEPTED)
        try:
            lines: list[tuple[str | None, bytes]] = []
            for question in questions.iterator(chunk_size=2000):
                split = plan.split_of(question.entity_id) if plan is not None else None
                lines.append((split, dumps({"split": split} | entities.question_record(question, known, attributes))))
                if len(lines) >= 2000:
                    files.write(lines)
                    lines = []
            files.write(lines)
        except BaseException:
            files.abort()
            raise
        entries = files.finish(self.state, ENTITY_SCHEMA)
        self.state.counts["entity_contexts"] = list(entities.CONTEXTS)
        return entries


class EntityCardWriter(DatasetCardWriter):
    def text(self) -> CardText:
        state = self.state
        return CardText(
            languages=[state.project.standard_language],
            task="multiple-choice",
            items=state.counts.get(ENTITY_NAME) or 0,
            summary=(
                "Questions generated from entities and verified by people: for every (entity, attribute) an "
                "inductive question (entity → attribute) and a deductive one (attribute → entity), one correct "
                "option and three distractors from similar entities with a different value. Every question carries "
                "four context conditions built from the attribute's statement — `none`, `perfect` (states the fact "
                "asked about), `misleading` (states the most similar distractor's option as the fact; "
                "`misleading_option` is its index) and `distraction` (a true fact about that distractor, which "
                "answers nothing) — and the entity's grouping fields for stratified results. A list attribute (key "
                "people) gives one question per element. `split` names the question's split (`null` without "
                "splits)."
            ),
            method="entity",
        )


def entity_release_writers() -> list[ReleaseWriter]:
    return [EntityQuestionsWriter(), EntityCardWriter(), ManifestWriter()]
