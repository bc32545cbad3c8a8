"""What a trivia project's release holds: `trivia.jsonl` (and one file per split) with both languages side by
side and the local/global label, one CSV per language in the simple layout
(`id, category, difficulty, question, candidate0..n, answer, subset`), a dataset card and the manifest.
Registered with the trivia and entity kinds (multichoice/kind.py).

The builder streams the project's released QA items for the generic writers; this writer reads the
multiple-choice side rows itself, in `finish`, in QA item id order and in chunks (one query per chunk for
the revision numbers). An item is released when its QA item was accepted in review and its translation is
done (translated without a problem tag, or resolved with fix or accept); a dropped item's QA item is rejected.
"""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

from django.db.models import Max

from annotation.models import QAItem, QAItemRevision
from common.csv_safety import csv_writer
from exports.formats.base import FileEntry, HashedFile, dumps
from exports.formats.card import DatasetCardWriter, _md, _q, _size_category
from exports.formats.manifest import ManifestWriter
from exports.formats.writer import BuildState, ReleaseWriter
from exports.records import Splitter
from multichoice import services
from multichoice.models import TriviaItem

NAME = "trivia"
CHUNK = 2000


def released_items(project: Any) -> Any:
    return services.trivia_items(project).filter(
        item__status=QAItem.Status.ACCEPTED, translation_status=TriviaItem.Translation.DONE
    )


def trivia_release_record(
    item: TriviaItem, *, split: str | None, source: str, target: str, revision: int
) -> dict[str, Any]:
    return {
        "id": item.external_id or str(item.item_id),
        "split": split,
        "category": item.category,
        "subset": item.subset,
        "difficulty": item.difficulty,
        "answer": item.answer,
        source: {"question": item.question, "candidates": item.candidates},
        target: {"question": item.target_question, "candidates": item.target_candidates},
        "languages": [source, target],
        "revision": revision,
        "problem_tags": item.problem_tags,
        "resolution": item.resolution or None,
    }


class TriviaWriter(ReleaseWriter):
    def open(self, root: Path, state: BuildState) -> None:
        super().open(root, state)
        settings = services.trivia_settings(state.project)
        self.source, self.target = settings.source_language, settings.target_language
        self.splitter = Splitter(state.splits, state.release.seed or 0)
        self.all = HashedFile(root, f"{NAME}.jsonl")
        self.by_split = {split: HashedFile(root, f"{NAME}/{split}.jsonl") for split in state.splits}
        self.csv = {lang: HashedFile(root, f"{NAME}_{lang}.csv") for lang in (self.source, self.target)}
        self.width = 0

    def _csv_rows(self, items: list[TriviaItem], *, target: bool, header: bool) -> bytes:
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
        for item in items:
            question = item.target_question if target else item.question
            candidates = item.target_candidates if target else item.candidates
            candidates = candidates + [""] * (self.width - len(candidates))
            writer.writerow(
                [
                    item.external_id or item.item_id,
                    item.category,
                    item.difficulty_number,
                    question,
                    *candidates,
                    item.answer,
                    item.subset,
                ]
            )
        return out.getvalue().encode()

    def finish(self) -> list[FileEntry]:
        items = released_items(self.state.project)
        self.width = max((len(c) for c in items.values_list("candidates", flat=True)), default=3)
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
            lines: list[bytes] = []
            split_lines: dict[str, list[bytes]] = {split: [] for split in self.by_split}
            for item in chunk:
                split = self.splitter(item.item_id)
                record = trivia_release_record(
                    item, split=split, source=self.source, target=self.target, revision=revisions.get(item.item_id, 0)
                )
                line = dumps(record)
                lines.append(line)
                if split is not None:
                    split_lines[split].append(line)
            self.all.write_lines(lines)
            for split, handle in self.by_split.items():
                handle.write_lines(split_lines[split])
            self.csv[self.source].write(self._csv_rows(chunk, target=False, header=first))
            self.csv[self.target].write(self._csv_rows(chunk, target=True, header=first))
            first = False
        if first:  # no item: the CSVs still get their header
            for lang, handle in self.csv.items():
                handle.write(self._csv_rows([], target=lang == self.target, header=True))
        entries = [self.all.close()] + [handle.close() for handle in self.by_split.values()]
        entries += [handle.close(count_lines=False) for handle in self.csv.values()]
        self.state.counts[NAME] = entries[0].lines
        self.state.counts[f"{NAME}_by_split"] = {
            split: entry.lines for split, entry in zip(self.by_split, entries[1 : 1 + len(self.by_split)], strict=True)
        }
        self.state.counts["trivia_by_subset"] = {
            subset: items.filter(subset=subset).count() for subset in ("local", "global")
        }
        self.state.counts["trivia_not_released"] = services.trivia_items(self.state.project).count() - self.all.lines
        return entries

    def abort(self) -> None:
        for handle in [self.all, *self.by_split.values(), *self.csv.values()]:
            handle.abort()


class TriviaCardWriter(DatasetCardWriter):
    def render(self) -> str:
        state = self.state
        release, project = state.release, state.project
        settings = services.trivia_settings(project)
        lines = {entry.name: entry.lines for entry in state.entries}
        if state.splits:
            files = [(split, f"{NAME}/{split}.jsonl") for split in state.splits]
        else:
            files = [("train", f"{NAME}.jsonl")]
        files = [(split, path) for split, path in files if lines.get(path)]
        header = [
            "---",
            "language:",
            f"- {_q(settings.source_language)}",
            f"- {_q(settings.target_language)}",
            f"license: {_q(release.license)}",
            f"pretty_name: {_q(f'{project.name} (localqa release v{release.version})')}",
            "task_categories:",
            "- multiple-choice",
            "size_categories:",
            f"- {_q(_size_category(state.counts.get(NAME) or 0))}",
        ]
        if files:
            header += ["configs:", f"- config_name: {NAME}", "  default: true", "  data_files:"]
            for split, path in files:
                header += [f"  - split: {split}", f"    path: {_q(path)}"]
        header.append("---")
        body = [
            f"# {_md(project.name)} — release v{release.version}",
            "",
            f"Multiple-choice trivia written in `{_md(settings.source_language)}` and translated into "
            f"`{_md(settings.target_language)}`: each line holds both versions side by side (same candidate order, "
            "so one `answer` index), the category, the difficulty and whether the item is about local or global "
            "knowledge (`subset`).",
            "",
            "| file | lines | bytes | sha256 |",
            "|---|---:|---:|---|",
        ]
        for entry in state.entries:
            count = "" if entry.lines is None else str(entry.lines)
            body.append(f"| `{entry.name}` | {count} | {entry.size} | `{entry.sha256}` |")
        return "\n".join(header) + "\n\n" + "\n".join(body) + "\n"


def release_writers() -> list[ReleaseWriter]:
    return [TriviaWriter(), TriviaCardWriter(), ManifestWriter()]


# Entity-question projects

ENTITY_NAME = "entity_questions"


class EntityQuestionsWriter(ReleaseWriter):
    """Every verified question with its four context conditions and the entity's grouping fields; with splits,
    also one file per split (the same `Splitter` as every kind, drawn per entity: an entity's inductive and
    deductive questions share a split, and the seed keeps them there in the next release)."""

    def finish(self) -> list[FileEntry]:
        from multichoice import entities
        from multichoice.models import Entity

        project = self.state.project
        settings = entities.entity_settings(project)
        attributes = {a["key"]: a for a in settings.attributes}
        known = {e.pk: e for e in Entity.objects.filter(project=project)}
        splitter = Splitter(self.state.splits, self.state.release.seed or 0)
        handle = HashedFile(self.root, f"{ENTITY_NAME}.jsonl")
        by_split = {split: HashedFile(self.root, f"{ENTITY_NAME}/{split}.jsonl") for split in self.state.splits}
        questions = entities.entity_questions(project).filter(item__status=QAItem.Status.ACCEPTED)
        try:
            lines: list[bytes] = []
            split_lines: dict[str, list[bytes]] = {split: [] for split in by_split}
            for question in questions.iterator(chunk_size=2000):
                split = splitter(question.entity_id)  # an entity's questions share a split (no fact leaks)
                line = dumps({"split": split} | entities.question_record(question, known, attributes))
                lines.append(line)
                if split is not None:
                    split_lines[split].append(line)
            handle.write_lines(lines)
            for split, split_handle in by_split.items():
                split_handle.write_lines(split_lines[split])
        except BaseException:
            for open_handle in [handle, *by_split.values()]:
                open_handle.abort()
            raise
        entries = [handle.close()] + [split_handle.close() for split_handle in by_split.values()]
        self.state.counts[ENTITY_NAME] = entries[0].lines
        self.state.counts[f"{ENTITY_NAME}_by_split"] = {
            split: entry.lines for split, entry in zip(by_split, entries[1:], strict=True)
        }
        self.state.counts["entity_contexts"] = list(entities.CONTEXTS)
        return entries


class EntityCardWriter(DatasetCardWriter):
    def render(self) -> str:
        state = self.state
        release, project = state.release, state.project
        header = [
            "---",
            "language:",
            f"- {_q(project.standard_language)}",
            f"license: {_q(release.license)}",
            f"pretty_name: {_q(f'{project.name} (localqa release v{release.version})')}",
            "task_categories:",
            "- multiple-choice",
            "size_categories:",
            f"- {_q(_size_category(state.counts.get(ENTITY_NAME) or 0))}",
        ]
        lines = {entry.name: entry.lines for entry in state.entries}
        files = [(split, f"{ENTITY_NAME}/{split}.jsonl") for split in state.splits] or [
            ("train", f"{ENTITY_NAME}.jsonl")
        ]
        files = [(split, path) for split, path in files if lines.get(path)]
        if files:
            header += ["configs:", f"- config_name: {ENTITY_NAME}", "  default: true", "  data_files:"]
            for split, path in files:
                header += [f"  - split: {split}", f"    path: {_q(path)}"]
        header.append("---")
        body = [
            f"# {_md(project.name)} — release v{release.version}",
            "",
            "Questions generated from entities and verified by people: for every (entity, attribute) an inductive "
            "question (entity → attribute) and a deductive one (attribute → entity), one correct option and three "
            "distractors from similar entities with a different value. Every question carries four context "
            "conditions built from the attribute's statement — `none`, `perfect` (states the fact asked about), "
            "`misleading` (states the most similar distractor's option as the fact; `misleading_option` is its "
            "index) and `distraction` (a true fact about that distractor, which answers nothing) — and the "
            "entity's grouping fields for stratified results. A list attribute (key people) gives one question "
            "per element. `split` names the question's split (`null` without splits).",
            "",
            "| file | lines | bytes | sha256 |",
            "|---|---:|---:|---|",
        ]
        for entry in state.entries:
            count = "" if entry.lines is None else str(entry.lines)
            body.append(f"| `{entry.name}` | {count} | {entry.size} | `{entry.sha256}` |")
        return "\n".join(header) + "\n\n" + "\n".join(body) + "\n"


def entity_release_writers() -> list[ReleaseWriter]:
    return [EntityQuestionsWriter(), EntityCardWriter(), ManifestWriter()]
