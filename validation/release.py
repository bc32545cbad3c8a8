"""What a validation project's release holds: `validation_qa.jsonl` (and one file per split),
`seed_queries.csv`, a dataset card and the manifest. Registered with the validation kind (validation/kind.py).

The builder (exports.services) streams the project's released items in chunks of
its own QA records; this writer takes their ids from those records and adds, per
chunk, one query each for the validation data, the judgments and the domain
labels. Which items are left out (and why) and each item's split come from the
plan it reads once when it opens (`validation.services.validation_release_plan`):
sizes exact up to rounding, a set of duplicates in one split.
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path
from typing import Any

from exports.formats.base import FileEntry, dumps, write_file
from exports.formats.card import CardText, DatasetCardWriter, _md
from exports.formats.manifest import ManifestWriter
from exports.formats.schema import Schema
from exports.formats.writer import BuildState, ReleaseWriter, SplitFiles
from exports.records import release_items
from validation import services
from validation.models import LeaveOut, SourceDomain, ValidationItem, ValidationJudgment

NAME = "validation_qa"
SEEDS = "seed_queries.csv"

S, N, B = "string", "int64", "bool"
# One line of `validation_qa.jsonl` (exports.formats.schema); judgments, their aggregate and the item's metadata
# depend on the project's criteria and imports, so they are free-form JSON.
SCHEMA: Schema = {
    "id": S,
    "split": S,
    "data_id": S,
    "language": S,
    "location": S,
    "topic": S,
    "input_query": S,
    "question_type": S,
    "question": S,
    "answer": S,
    "original_answer": S,
    "answer_edited": B,
    "final_answer_revision": N,
    "final_answer_chosen": B,
    "alternative_answer": S,
    "source_urls": [S],
    "domain": S,
    "domain_label": S,
    "location_relevant": B,
    "aggregate": "json",
    "judgments": ["json"],
    "revisions": N,
    "status": S,
    "metadata": "json",
}


def _pk(record_id: str) -> int:
    return int(record_id.rsplit("-q", 1)[1])


class ValidationQAWriter(ReleaseWriter):
    def open(self, root: Path, state: BuildState) -> None:
        super().open(root, state)
        self.files = SplitFiles(root, NAME, state.splits)
        self.validators: dict[int, str] = {}  # validator → "v1", "v2" … in order of first judgment, one per release
        self.criteria = services.validation_settings(state.project).likert_criteria
        # Each collected pair is a unit of its own (with its unmerged duplicates), not the builder's page pair:
        # every pair without a source URL shares one page pair.
        released = release_items(state.project, state.release.item_statuses).values_list("pk", flat=True)
        self.plan = services.validation_release_plan(
            project=state.project, item_ids=released, splits=state.splits, seed=state.release.seed
        )

    def _validator(self, user_id: int | None) -> str | None:
        if user_id is None:
            return None
        return self.validators.setdefault(user_id, f"v{len(self.validators) + 1}")

    def add_items(self, records: list[dict[str, Any]]) -> None:
        pks = [_pk(record["id"]) for record in records]
        vitems = {v.item_id: v for v in ValidationItem.objects.filter(item_id__in=pks)}
        judgments: dict[int, list[ValidationJudgment]] = defaultdict(list)
        for judgment in (
            ValidationJudgment.objects.filter(item_id__in=pks).select_related("edit_revision").order_by("id")
        ):
            judgments[judgment.item_id].append(judgment)
        finals = services.final_answers(pks)
        labels = dict(
            SourceDomain.objects.filter(
                project=self.state.project, domain__in={v.domain for v in vitems.values()}
            ).values_list("domain", "label")
        )
        lines: list[tuple[str | None, bytes]] = []
        for record, pk in zip(records, pks, strict=True):
            vitem = vitems.get(pk)
            if vitem is None or pk in self.plan.left_out:
                continue
            own = judgments.get(pk, [])
            aggregate = services.judgments_aggregate(own, self.criteria)
            judged = []
            for judgment in own:
                row = services.judgment_record(judgment)
                row["validator"] = self._validator(judgment.validator_id)
                judged.append(row)
            final = finals.get(pk)
            answer = final.revision.answer_standard if final else record["answer_standard"]
            # The release's split plan (exports.splits: the preview's, keeping the previous release's splits).
            plan = self.state.plan
            split = plan.split_of(self.plan.group_of[pk]) if plan is not None else self.plan.split_of.get(pk)
            line = dumps(
                {
                    "id": record["id"],
                    "split": split,
                    "data_id": vitem.data_id or None,
                    "language": vitem.language,
                    "location": vitem.location or None,
                    "topic": vitem.topic or None,
                    "input_query": vitem.input_query or None,
                    "question_type": vitem.question_type or None,
                    "question": record["question"],
                    "answer": answer,
                    "original_answer": vitem.original_answer,
                    "answer_edited": answer != vitem.original_answer,
                    # Which revision the final answer is, and whether a coordinator chose it (else: the latest).
                    "final_answer_revision": final.revision.number if final else record["revisions"] or None,
                    "final_answer_chosen": final is not None,
                    "alternative_answer": vitem.alternative_answer or None,
                    "source_urls": vitem.source_urls,
                    "domain": vitem.domain or None,
                    "domain_label": labels.get(vitem.domain),
                    "location_relevant": aggregate["location_relevant"],
                    "aggregate": aggregate,
                    "judgments": judged,
                    "revisions": record["revisions"],
                    "status": record["review_outcome"],
                    "metadata": vitem.metadata,
                }
            )
            lines.append((split, line))
        self.files.write(lines)

    def finish(self) -> list[FileEntry]:
        entries = self.files.finish(self.state, SCHEMA)
        self.state.counts[f"{NAME}_left_out"] = dict(self.plan.left_out_counts)
        self.state.counts[f"{NAME}_left_out_bad_questions"] = dict(self.plan.bad_question_reasons)
        self.state.counts[f"{NAME}_languages"] = list(self.plan.languages)
        return entries

    def abort(self) -> None:
        self.files.abort()


class SeedQueriesWriter(ReleaseWriter):
    def finish(self) -> list[FileEntry]:
        data = services.seed_queries_csv(self.state.project)
        self.state.counts["seed_queries"] = data.count(b"\n") - 1
        return [write_file(self.root, SEEDS, data)]


class ValidationCardWriter(DatasetCardWriter):
    def text(self) -> CardText:
        state = self.state
        languages = state.counts.get(f"{NAME}_languages") or [state.project.standard_language]
        return CardText(
            languages=list(languages),
            task="question-answering",
            items=state.counts.get(NAME) or 0,
            summary=(
                "Question-answer pairs collected elsewhere and validated by native speakers: each line holds the "
                "question, the final answer, the original answer, the source URLs with their domain's reliability "
                "label, every validator's judgments (validators as v1, v2, …) and their aggregate."
            ),
            sections=[
                *self._left_out(),
                "",
                f"`{SEEDS}` holds the seed queries in the collection tool's layout (`topic,query`).",
            ],
            method="set of duplicates",
        )

    def _left_out(self) -> list[str]:
        """How many items the release leaves out and why (the project's setting says which rules apply)."""
        counts: dict[str, int] = self.state.counts.get(f"{NAME}_left_out") or {}
        rules = services.validation_settings(self.state.project).release_leave_out
        lines = ["## Left out", ""]
        if not rules:
            return [*lines, "Nothing is left out: this project releases every validated item."]
        total = sum(counts.values())
        lines.append(f"{total} validated item{'s' if total != 1 else ''} left out of this release:")
        lines.append("")
        bad: dict[str, int] = self.state.counts.get(f"{NAME}_left_out_bad_questions") or {}
        for rule, label in LeaveOut.choices:
            if rule in rules:
                lines.append(f"- {label}: {counts.get(rule, 0)}")
                if rule == LeaveOut.BAD_QUESTION and bad:
                    detail = ", ".join(f"{_md(name).lower()} {n}" for name, n in bad.items())
                    lines.append(f"  (the validators' reason: {detail})")
        off = [label for rule, label in LeaveOut.choices if rule not in rules]
        if off:
            lines += ["", f"Not left out (the project releases them): {'; '.join(o.lower() for o in off)}."]
        return lines


def release_writers() -> list[ReleaseWriter]:
    return [ValidationQAWriter(), SeedQueriesWriter(), ValidationCardWriter(), ManifestWriter()]
