"""`prompts/<scenario>.jsonl`: evaluation-ready prompts for each context scenario, from the project's templates.

Templates use `{question}`, `{standard_lead}`, `{local_lead}`, `{standard_title}`
and `{local_title}`; a literal brace is written twice (`{{`), as in Python.
"""

from __future__ import annotations

import string
from pathlib import Path
from typing import Any

from exports.formats.base import EscapedText, FileEntry, HashedFile, dumps, json_escaped
from exports.formats.writer import BuildState, ReleaseWriter

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
        try:
            used = {field for _, field, _, _ in string.Formatter().parse(template) if field is not None}
        except ValueError as error:
            problems[name] = [f"{error} (write a literal brace as {{{{ or }}}})"]
            continue
        unknown = sorted(used - set(FIELDS))
        if unknown:
            problems[name] = [f"unknown placeholder {{{unknown[0]}}}; use one of {', '.join(FIELDS)}"]
        elif "question" not in used:
            problems[name] = ["the template must contain {question}"]
    unknown_scenarios = sorted(set(templates) - set(SCENARIOS))
    if unknown_scenarios:
        problems[f"prompt_templates.{unknown_scenarios[0]}"] = [f"unknown scenario; use {', '.join(SCENARIOS)}"]
    return problems


# Every field of a prompt line is a string but `split` (a string or null).
_STRING_FIELDS = tuple(
    (field, field.encode()) for field in ("id", "kind", "question", "answer_standard", "answer_local", *FIELDS[1:])
)


def compile_line(scenario: str, template: str) -> bytes | None:
    """One prompt line as a bytes %-format over JSON-escaped field texts; None when the template needs `str.format`.

    Filling it writes the bytes `dumps({...})` would write for the line (JSON escapes
    character by character), but each lead is escaped once per chunk, not once per
    prompt. `{{`/`}}` come out of the parser as the single braces `str.format` writes.
    """
    prompt: list[bytes] = []
    for literal, field, format_spec, conversion in string.Formatter().parse(template):
        if literal:
            prompt.append(_escape(literal))
        if field is not None:
            if format_spec or conversion or field not in FIELDS:
                return None
            prompt.append(b"%%(%s)s" % field.encode())
    return (
        b'{"id":"%(id)s","kind":"%(kind)s","split":%(split)s,"scenario":"'
        + _escape(scenario)
        + b'","prompt":"'
        + b"".join(prompt)
        + b'","question":"%(question)s","answer_standard":"%(answer_standard)s","answer_local":"%(answer_local)s"}'
    )


def _escape(text: str) -> bytes:
    return json_escaped(text).replace(b"%", b"%%")  # a literal of the %-format


class PromptsWriter(ReleaseWriter):
    def open(self, root: Path, state: BuildState) -> None:
        super().open(root, state)
        self.templates = {scenario: state.prompt_templates[scenario] for scenario in SCENARIOS}
        self.lines = {scenario: compile_line(scenario, template) for scenario, template in self.templates.items()}
        self.escaped = EscapedText()
        self.files = {scenario: HashedFile(root, f"prompts/{scenario}.jsonl") for scenario in SCENARIOS}

    def line(self, scenario: str, record: dict[str, Any], texts: dict[bytes, bytes] | None) -> bytes:
        compiled = self.lines[scenario]
        if compiled is not None and texts is not None:
            return compiled % texts
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

    def _texts(self, record: dict[str, Any]) -> dict[bytes, bytes] | None:
        """The fields JSON-escaped, keyed by bytes (as %-formatting of bytes wants); None if one is not text."""
        escaped = self.escaped
        texts: dict[bytes, bytes] = {}
        for field, key in _STRING_FIELDS:
            value = record[field]
            if not isinstance(value, str):
                return None
            texts[key] = escaped(value)
        split = record["split"]
        if split is not None and not isinstance(split, str):
            return None
        texts[b"split"] = b"null" if split is None else b'"' + escaped(split) + b'"'
        return texts

    def add_items(self, records: list[dict[str, Any]]) -> None:
        lines: dict[str, list[bytes]] = {scenario: [] for scenario in SCENARIOS}
        for record in records:
            texts = self._texts(record)
            for scenario in SCENARIOS:
                lines[scenario].append(self.line(scenario, record, texts))
        self.escaped.clear()
        for scenario, handle in self.files.items():
            handle.write_lines(lines[scenario])

    def finish(self) -> list[FileEntry]:
        return [handle.close() for handle in self.files.values()]

    def abort(self) -> None:
        for handle in self.files.values():
            handle.abort()
