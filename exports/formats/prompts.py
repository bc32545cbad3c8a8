"""`prompts/<scenario>.jsonl`: evaluation-ready prompts for each context scenario, from the project's templates.

Templates use `{question}`, `{standard_lead}`, `{local_lead}`, `{standard_title}`
and `{local_title}`; a literal brace is written twice (`{{`), as in Python.
"""

from __future__ import annotations

import string
from pathlib import Path
from typing import Any

from exports.formats.base import FileEntry, HashedFile, dumps
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


class PromptsWriter(ReleaseWriter):
    def open(self, root: Path, state: BuildState) -> None:
        super().open(root, state)
        self.templates = {scenario: state.prompt_templates[scenario] for scenario in SCENARIOS}
        self.files = {scenario: HashedFile(root, f"prompts/{scenario}.jsonl") for scenario in SCENARIOS}

    def add_items(self, records: list[dict[str, Any]]) -> None:
        lines: dict[str, list[bytes]] = {scenario: [] for scenario in SCENARIOS}
        for record in records:
            values = {field: record[field] for field in FIELDS}
            for scenario, template in self.templates.items():
                lines[scenario].append(
                    dumps(
                        {
                            "id": record["id"],
                            "kind": record["kind"],
                            "split": record["split"],
                            "scenario": scenario,
                            "prompt": template.format_map(values),
                            "question": record["question"],
                            "answer_standard": record["answer_standard"],
                            "answer_local": record["answer_local"],
                        }
                    )
                )
        for scenario, handle in self.files.items():
            handle.write_lines(lines[scenario])

    def finish(self) -> list[FileEntry]:
        return [handle.close() for handle in self.files.values()]

    def abort(self) -> None:
        for handle in self.files.values():
            handle.abort()
