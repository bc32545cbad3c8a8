"""Prompts for each context scenario, from the project's templates (kept once, in the manifest).

Templates use `{question}`, `{standard_lead}`, `{local_lead}`, `{standard_title}`
and `{local_title}`; a literal brace is written twice (`{{`), as in Python.
"""

from __future__ import annotations

import string
from pathlib import Path
from typing import Any

from django.conf import settings

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


def prompt_fill(template: str, record: dict[str, Any]) -> str:
    """The prompt of one item under one template: its placeholders filled from the item's line of the release."""
    return template.format_map({field: record[field] for field in FIELDS})


class PromptsWriter(ReleaseWriter):
    """The prompt templates of a release, checked before anything is written.

    A release writes no prompt per item: the manifest holds each scenario's template once
    (`release.prompt_templates`), and every line of `lead_qa.jsonl` and `document_qa.jsonl` carries the fields
    the templates name, so a prompt is `template.format(**line)` (`prompt_fill`; the card shows the code).
    Writing them out repeated both leads in four files, two thirds of a release.
    """

    def open(self, root: Path, state: BuildState) -> None:
        super().open(root, state)
        problems = template_problems(state.prompt_templates)
        if problems:  # saved before templates were checked this strictly, or written into the table directly
            first = next(iter(problems))
            raise ValueError(f"Prompt template {first.removeprefix('prompt_templates.')}: {problems[first][0]}.")
