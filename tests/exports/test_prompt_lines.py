"""Prompt lines put together from escaped pieces are the bytes that encoding the filled-in template gives."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from pathlib import Path

import orjson
import pytest

from exports.formats.prompts import SCENARIOS, PromptsWriter, compile_line
from exports.formats.writer import BuildState
from exports.models import DEFAULT_PROMPT_TEMPLATES

TRICKY = [
    "plain",
    "",
    '"quoted" \\ back\\slash / slash',
    "line\nbreak\ttab\rreturn \x00 \x1f \x7f",
    "separators \u2028 \u2029 and BOM \ufeff",
    "𠮶間茶餐廳 😀 outside the BMP",
    "{braces} {{doubled}} %s %(id)s %% percent",
    "<script>alert(1)</script> &amp;",
    "ش\u202eRTL override",
]

TEMPLATES = {
    **DEFAULT_PROMPT_TEMPLATES,
    "question_only": "100% sure? {{literal}} «{question}» %(split)s",
    "local_lead": "{local_title}: {local_lead}\n\n{question}\u2028{standard_title}",
}


def _expected(scenario: str, template: str, record: dict) -> bytes:
    return orjson.dumps(
        {
            "id": record["id"],
            "kind": record["kind"],
            "split": record["split"],
            "scenario": scenario,
            "prompt": template.format_map(record),
            "question": record["question"],
            "answer_standard": record["answer_standard"],
            "answer_local": record["answer_local"],
        }
    )


def _records():
    fields = ("question", "answer_standard", "answer_local", "local_lead", "standard_lead", "local_title")
    for texts, split in zip(itertools.permutations(TRICKY, len(fields)), itertools.cycle(["train", None, "dev"])):
        yield {
            "id": "p-q1",
            "kind": "lead",
            "split": split,
            "standard_title": TRICKY[len(split or "")],
            **dict(zip(fields, texts, strict=True)),
        }


@pytest.fixture
def writer(tmp_path: Path) -> Iterator[PromptsWriter]:
    state = BuildState(release=None, project=None, splits={}, prompt_templates=TEMPLATES)
    prompts = PromptsWriter()
    prompts.open(tmp_path, state)
    yield prompts
    prompts.finish()


def test_compiled_lines_are_byte_identical_to_encoding_the_filled_in_template(writer):
    records = list(itertools.islice(_records(), 300))
    for record in records:
        values = writer._values(record)
        assert values is not None
        for scenario in SCENARIOS:
            assert writer.line(scenario, record, values) == _expected(scenario, TEMPLATES[scenario], record), (
                scenario,
                record,
            )


def test_a_template_with_a_format_spec_is_filled_in_by_str_format():
    assert compile_line("question_only", "{question!r}") is None
    assert compile_line("question_only", "{question:>10}") is None
    assert compile_line("question_only", "{question}") is not None


def test_a_record_with_a_non_text_field_falls_back_to_the_plain_encoding(writer):
    record = next(_records()) | {"answer_local": None, "split": None}
    assert writer._values(record) is None
    line = writer.line("both_leads", record, None)
    assert line == _expected("both_leads", TEMPLATES["both_leads"], record)
