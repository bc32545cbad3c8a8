"""`prompts/<scenario>.jsonl`: evaluation-ready prompts for each context scenario, from the project's templates.

Templates use `{question}`, `{standard_lead}`, `{local_lead}`, `{standard_title}`
and `{local_title}`; a literal brace is written twice (`{{`), as in Python.
"""

from __future__ import annotations

import operator
import string
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from django.conf import settings

from exports.formats import schema
from exports.formats.base import EscapedText, FileEntry, HashedFile, dumps, json_escaped
from exports.formats.writer import BuildState, DataConfig, ReleaseWriter

SCENARIOS = {
    "question_only": "Question only",
    "standard_lead": "Question + standard lead",
    "local_lead": "Question + local lead",
    "both_leads": "Question + both leads",
}
FIELDS = ("question", "standard_lead", "local_lead", "standard_title", "local_title")


def template_problems(templates: dict[str, Any]) -> dict[str, list[str]]:
    """What is wrong with a set of templates, by field name (`prompt_templates.local_lead`); empty when fine."""
    problems: dict[str, list[str]] = {}
    for scenario in SCENARIOS:
        name = f"prompt_templates.{scenario}"
        template = templates.get(scenario)
        if not isinstance(template, str) or not template.strip():
            problems[name] = ["a template is needed for every scenario"]
            continue
        if len(template) > settings.PROMPT_TEMPLATE_MAX_CHARS:
            problems[name] = [
                f"is {len(template):,} characters long; a template may have at most "
                f"{settings.PROMPT_TEMPLATE_MAX_CHARS:,} (PROMPT_TEMPLATE_MAX_CHARS)"
            ]
            continue
        try:
            parsed = [(field, spec, conversion) for _, field, spec, conversion in string.Formatter().parse(template)]
        except ValueError as error:
            problems[name] = [f"{error} (write a literal brace as {{{{ or }}}})"]
            continue
        used = {field for field, _, _ in parsed if field is not None}
        # Each placeholder copies a lead (up to IMPORT_MAX_LEAD_CHARS) into every prompt of every item: a template
        # repeating {local_lead} a thousand times turns a few items into hundreds of megabytes.
        placeholders = sum(field is not None for field, _, _ in parsed)
        if placeholders > settings.PROMPT_TEMPLATE_MAX_PLACEHOLDERS:
            problems[name] = [
                f"has {placeholders:,} placeholders; a template may have at most "
                f"{settings.PROMPT_TEMPLATE_MAX_PLACEHOLDERS} (PROMPT_TEMPLATE_MAX_PLACEHOLDERS)"
            ]
            continue
        # A spec ({question:>20000000}) or a conversion ({local_lead!r}) makes str.format pad or repr without
        # bound: only the plain placeholder is a template; attribute and index access are unknown names.
        shaped = next((field for field, spec, conversion in parsed if field is not None and (spec or conversion)), None)
        unknown = sorted(used - set(FIELDS))
        if shaped is not None:
            problems[name] = [
                f"{{{shaped[:40]}}} has a conversion (!r) or a format spec (:>20); write plain placeholders only, "
                "such as {question}"
            ]
        elif unknown:
            problems[name] = [f"unknown placeholder {{{unknown[0][:40]}}}; use one of {', '.join(FIELDS)}"]
        elif "question" not in used:
            problems[name] = ["the template must contain {question}"]
    unknown_scenarios = sorted(set(templates) - set(SCENARIOS))
    if unknown_scenarios:
        problems[f"prompt_templates.{unknown_scenarios[0]}"] = [f"unknown scenario; use {', '.join(SCENARIOS)}"]
    return problems


# What a compiled line is filled with, in this order: every field is a string but `split` (a string or null).
VALUE_ORDER = ("id", "kind", "split", "question", "answer_standard", "answer_local", *FIELDS[1:])
_TEXT_FIELDS = tuple(field for field in VALUE_ORDER if field != "split")


@dataclass(frozen=True)
class CompiledLine:
    """A prompt line as a bytes %-format over JSON-escaped values, and which values (by VALUE_ORDER) fill it."""

    format: bytes
    values: Callable[[tuple[bytes, ...]], tuple[bytes, ...]]

    def fill(self, values: tuple[bytes, ...]) -> bytes:
        return self.format % self.values(values)


def compile_line(scenario: str, template: str) -> CompiledLine | None:
    """One prompt line put together from JSON-escaped pieces; None when the template needs `str.format`.

    Filling it writes the bytes `dumps({...})` would write for the line (JSON escapes
    character by character), but each lead is escaped once per chunk, not once per
    prompt. `{{`/`}}` come out of the parser as the single braces `str.format` writes.
    """
    prompt: list[bytes] = []
    used: list[str] = []
    for literal, field, format_spec, conversion in string.Formatter().parse(template):
        if literal:
            prompt.append(_escape(literal))
        if field is not None:
            if format_spec or conversion or field not in FIELDS:
                return None
            prompt.append(b"%s")
            used.append(field)
    line = (
        b'{"id":"%s","kind":"%s","split":%s,"scenario":"'
        + _escape(scenario)
        + b'","prompt":"'
        + b"".join(prompt)
        + b'","question":"%s","answer_standard":"%s","answer_local":"%s"}'
    )
    order = ["id", "kind", "split", *used, "question", "answer_standard", "answer_local"]
    picks = operator.itemgetter(*(VALUE_ORDER.index(field) for field in order))
    return CompiledLine(line, picks)


def _escape(text: str) -> bytes:
    return json_escaped(text).replace(b"%", b"%%")  # a literal of the %-format


class PromptsWriter(ReleaseWriter):
    """The four prompt files, one line per item and scenario."""

    def open(self, root: Path, state: BuildState) -> None:
        super().open(root, state)
        problems = template_problems(state.prompt_templates)
        if problems:  # saved before templates were checked this strictly, or written into the table directly
            first = next(iter(problems))
            raise ValueError(f"Prompt template {first.removeprefix('prompt_templates.')}: {problems[first][0]}.")
        self.templates = {scenario: state.prompt_templates[scenario] for scenario in SCENARIOS}
        self.lines = {scenario: compile_line(scenario, template) for scenario, template in self.templates.items()}
        self.escaped = EscapedText()
        self.files = {scenario: HashedFile(root, f"prompts/{scenario}.jsonl") for scenario in SCENARIOS}

    def line(self, scenario: str, record: dict[str, Any], values: tuple[bytes, ...] | None) -> bytes:
        compiled = self.lines[scenario]
        if compiled is not None and values is not None:
            return compiled.fill(values)
        return dumps(
            {
                "id": record["id"],
                "kind": record["kind"],
                "split": record["split"],
                "scenario": scenario,
                "prompt": self.templates[scenario].format_map({field: record[field] for field in FIELDS}),
                "question": record["question"],
                "answer_standard": record["answer_standard"],
                "answer_local": record["answer_local"],
            }
        )

    def _values(self, record: dict[str, Any]) -> tuple[bytes, ...] | None:
        """The fields JSON-escaped, in VALUE_ORDER; None if one is not text (the line is then encoded whole)."""
        for field in _TEXT_FIELDS:
            if not isinstance(record[field], str):
                return None
        split = record["split"]
        if split is not None and not isinstance(split, str):
            return None
        escaped = self.escaped  # leads and titles repeat within a chunk: escaped once
        return (
            json_escaped(record["id"]),
            json_escaped(record["kind"]),
            b"null" if split is None else b'"' + json_escaped(split) + b'"',
            json_escaped(record["question"]),
            json_escaped(record["answer_standard"]),
            json_escaped(record["answer_local"]),
            escaped(record["standard_lead"]),
            escaped(record["local_lead"]),
            escaped(record["standard_title"]),
            escaped(record["local_title"]),
        )

    def add_items(self, records: list[dict[str, Any]]) -> None:
        lines: dict[str, list[bytes]] = {scenario: [] for scenario in SCENARIOS}
        for record in records:
            values = self._values(record)
            for scenario in SCENARIOS:
                lines[scenario].append(self.line(scenario, record, values))
        self.escaped.clear()
        for scenario, handle in self.files.items():
            handle.write_lines(lines[scenario])

    def finish(self) -> list[FileEntry]:
        entries = [handle.close() for handle in self.files.values()]
        for scenario, entry in zip(self.files, entries, strict=True):
            if entry.lines:
                self.state.configs.append(
                    DataConfig(f"prompts_{scenario}", [("evaluation", entry.name)], schema.PROMPT)
                )
        return entries

    def abort(self) -> None:
        for handle in self.files.values():
            handle.abort()
