"""What a release says the answers are: the gold of every item, its strata, and the scenarios it was asked under.

Read from the release's own files (never from the live database, which moves on), each file hashed while it is read
and checked against the sha256 in the release's file list: a file changed on disk is refused, not scored.
"""

from __future__ import annotations

import hashlib
import math
import re
from dataclasses import dataclass, field
from typing import Any

import orjson

from annotation.languages import LANGUAGES
from common.errors import InvalidInput, InvalidState
from evaluation.extraction import LETTERS
from exports import services as releases
from exports.formats.prompts import prompt_fill
from exports.models import Release

WIKIPEDIA_SCENARIOS = ("question_only", "standard_lead", "local_lead", "both_leads")
WIKIPEDIA_STRATA = ("topic", "region", "region_detail", "verification", "review", "split", "local_knowledge_check")
TRIVIA_STRATA = ("subset", "category", "difficulty", "split")
ENTITY_CONDITIONS = ("none", "perfect", "misleading", "distraction")
ENTITY_STRATA = ("attribute", "direction", "split")  # and the project's grouping fields (region, index, …)
VALIDATION_STRATA = ("location", "language", "topic", "split")
VALIDATION_SCENARIO = "question_only"  # a validation release has no prompt files: the question is asked alone
# A validation release ships no prompt templates: a generated run asks each item's question (in the item's own
# language, never translated) through one of these named templates, and records the name in its provenance. A
# template is never edited once a run has used it: a new wording is a new name.
VALIDATION_TEMPLATES = {
    "validation_question_v1": (
        "Answer the question below in {language}, the language it is asked in. Put your answer between <answer> "
        "and </answer>.\n\nQuestion: {question}"
    ),
}
VALIDATION_TEMPLATE = "validation_question_v1"
_VALIDATION_PLACEHOLDER = re.compile(r"\{(question|language)\}")
MAX_GOLD_CHARS = 20_000


# What a bootstrap interval resamples, per project kind: items that share it are drawn together (gold.py sets each
# item's `cluster` to it below); every caption that names the interval reads it from here.
RESAMPLED_BY = {"wikipedia_qa": "page pair", "trivia": "item", "entity_qa": "entity", "validation": "item"}


def resampled_by(project_kind: str) -> str:
    return RESAMPLED_BY.get(project_kind, "item")


@dataclass(slots=True)
class ItemGold:
    kind: str  # lead, document, trivia
    gold: str  # the standard-language answer, or the option letter; "" when the item has none
    cluster: str  # what items are resampled by (RESAMPLED_BY)
    strata: dict[str, str]
    options: dict[str, int] = field(default_factory=dict)  # trivia: options per language
    question: str = ""  # what an LLM judge is shown beside the gold (Wikipedia QA)
    language: str = ""  # the gold's language when items differ (validation); else the release's


@dataclass(slots=True)
class ReleaseGold:
    project_kind: str
    language: str  # the gold answers' language (ISO 639-3)
    items: dict[str, ItemGold]
    scenarios: dict[str, set[str]]  # scenario → the item ids asked under it
    files: list[dict[str, str]]  # [{name, sha256}] read
    strata: tuple[str, ...]

    @property
    def multiple_choice(self) -> bool:
        return self.project_kind in ("trivia", "entity_qa")

    @property
    def entity(self) -> bool:
        return self.project_kind == "entity_qa"

    @property
    def validation(self) -> bool:
        return self.project_kind == "validation"


def _lines(release: Release, name: str, files: list[dict[str, str]]) -> list[dict[str, Any]]:
    """Every JSON line of one release file, the file's sha256 checked against the release's record of it."""
    entry = release.file_entry(name)
    if entry is None:
        raise InvalidInput(f"Release v{release.version} has no file {name}.", field="release")
    path = releases.release_file_path(release, name)
    digest = hashlib.sha256()
    records = []
    with path.open("rb") as handle:
        for number, raw in enumerate(handle, start=1):
            digest.update(raw)
            if raw.strip():
                try:
                    records.append(orjson.loads(raw))
                except orjson.JSONDecodeError:
                    raise InvalidState(f"{name} line {number} of release v{release.version} is not JSON.") from None
    if digest.hexdigest() != entry["sha256"]:
        raise InvalidState(
            f"{name} of release v{release.version} no longer matches its sha256: the files on disk changed. "
            "Nothing was scored."
        )
    files.append({"name": name, "sha256": entry["sha256"]})
    return records


def _text(value: Any) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    return str(value)[:MAX_GOLD_CHARS]


def release_gold(release: Release) -> ReleaseGold:
    """The gold of a published release of a Wikipedia QA or trivia project."""
    if not release.is_published:
        raise InvalidState(f"Release v{release.version} is not published; only published releases are scored.")
    kind = release.project.kind
    if kind == "wikipedia_qa":
        return _wikipedia_gold(release)
    if kind == "trivia":
        return _trivia_gold(release)
    if kind == "entity_qa":
        return _entity_gold(release)
    if kind == "validation":
        return _validation_gold(release)
    raise InvalidInput(
        f"Scoring {release.project.get_kind_display()} releases is not built yet "
        "(Wikipedia QA, trivia, entity questions and validation are).",
        field="release",
    )


def _wikipedia_strata(record: dict[str, Any]) -> dict[str, str]:
    """Topic, region (local / standard / other) and the finer region as labelled; whether the full-document check
    found the answer; whether review had the item rewritten; the split; what the local-knowledge check said."""
    labels = ("topic", "region", "region_detail", "split", "local_knowledge_check")
    strata = {name: _text(record.get(name)) or "(none)" for name in labels}
    verification = record.get("verification")
    strata["verification"] = _text(verification.get("status") if isinstance(verification, dict) else None) or "(none)"
    revisions = record.get("revisions")
    rewritten = isinstance(revisions, int) and revisions > 1
    strata["review"] = "rewritten after review" if rewritten else "accepted as first written"
    return strata


def _wikipedia_gold(release: Release) -> ReleaseGold:
    files: list[dict[str, str]] = []
    items: dict[str, ItemGold] = {}
    for name in ("lead_qa.jsonl", "document_qa.jsonl"):
        if release.file_entry(name) is None:
            continue
        for record in _lines(release, name, files):
            items[str(record["id"])] = ItemGold(
                kind=str(record.get("kind") or name.split("_")[0]),
                gold=_text(record.get("answer_standard")).strip(),
                cluster=str(record.get("pair_id") or record["id"]),
                strata=_wikipedia_strata(record),
                question=_text(record.get("question")).strip(),
            )
    scenarios: dict[str, set[str]] = {}
    for scenario in WIKIPEDIA_SCENARIOS:
        name = f"prompts/{scenario}.jsonl"
        if release.file_entry(name) is not None:  # a release built before prompts came from the templates
            scenarios[scenario] = {str(record["id"]) for record in _lines(release, name, files)}
        elif scenario in _prompt_templates(release):
            scenarios[scenario] = set(items)
    return ReleaseGold("wikipedia_qa", release.project.standard_language, items, scenarios, files, WIKIPEDIA_STRATA)


def _prompt_templates(release: Release) -> dict[str, str]:
    """The release's prompt templates, from its manifest (whose sha256 every run pins)."""
    records = _json_file(release, "manifest.json")
    templates = (records.get("release") or {}).get("prompt_templates") or {}
    return {str(scenario): str(template) for scenario, template in templates.items()}


def _json_file(release: Release, name: str) -> dict[str, Any]:
    """One JSON file of the release, its sha256 checked against the release's record of it."""
    entry = release.file_entry(name)
    if entry is None:
        raise InvalidInput(f"Release v{release.version} has no file {name}.", field="release")
    data = releases.release_file_path(release, name).read_bytes()
    if hashlib.sha256(data).hexdigest() != entry["sha256"]:
        raise InvalidState(
            f"{name} of release v{release.version} no longer matches its sha256: the files on disk changed. "
            "Nothing was scored."
        )
    value = orjson.loads(data)
    return value if isinstance(value, dict) else {}


def _trivia_gold(release: Release) -> ReleaseGold:
    files: list[dict[str, str]] = []
    items: dict[str, ItemGold] = {}
    scenarios: dict[str, set[str]] = {}
    for record in _lines(release, "trivia.jsonl", files):
        answer = record.get("answer")
        languages = [str(language) for language in record.get("languages") or []]
        options = {
            language: len((record.get(language) or {}).get("candidates") or [])
            for language in languages
            if isinstance(record.get(language), dict)
        }
        gold = LETTERS[answer] if isinstance(answer, int) and 0 <= answer < len(LETTERS) else ""
        identifier = str(record["id"])
        items[identifier] = ItemGold(
            kind="trivia",
            gold=gold,
            cluster=identifier,
            strata={stratum: _text(record.get(stratum)) or "(none)" for stratum in TRIVIA_STRATA},
            options=options,
        )
        for language in options:
            scenarios.setdefault(language, set()).add(identifier)
    return ReleaseGold("trivia", "", items, scenarios, files, TRIVIA_STRATA)


def _entity_gold(release: Release) -> ReleaseGold:
    """Entity questions (geo-bias): every question under each context condition its record has a context for
    (`none` always; `perfect` only where the context states the fact). Items of one entity are resampled together."""
    files: list[dict[str, str]] = []
    items: dict[str, ItemGold] = {}
    scenarios: dict[str, set[str]] = {}
    groupings: set[str] = set()
    for record in _lines(release, "entity_questions.jsonl", files):
        identifier = str(record["id"])
        answer, options = record.get("answer"), record.get("options") or []
        contexts = record.get("contexts") or {}
        conditions = [c for c in ENTITY_CONDITIONS if c == "none" or str(contexts.get(c) or "").strip()]
        grouped = {str(k): _text(v) or "(none)" for k, v in (record.get("groupings") or {}).items()}
        groupings.update(grouped)
        items[identifier] = ItemGold(
            kind="entity",
            gold=LETTERS[answer] if isinstance(answer, int) and 0 <= answer < len(options) else "",
            cluster=_text(record.get("entity")) or identifier,
            strata={**{s: _text(record.get(s)) or "(none)" for s in ENTITY_STRATA}, **grouped},
            options=dict.fromkeys(conditions, len(options)),
            question=_text(record.get("question")).strip(),
        )
        for condition in conditions:
            scenarios.setdefault(condition, set()).add(identifier)
    strata = (*ENTITY_STRATA, *sorted(groupings))
    return ReleaseGold("entity_qa", "", items, scenarios, files, strata)


def _validation_gold(release: Release) -> ReleaseGold:
    """A validation project's release (`validation_qa.jsonl`): each item's validated answer (the coordinator's
    chosen revision, else the latest) is the gold of its question, asked alone (`question_only`); the item's own
    language picks the metrics' language rules. Each item is its own cluster (NativQA pairs share no page)."""
    files: list[dict[str, str]] = []
    items: dict[str, ItemGold] = {}
    fallback = release.project.standard_language
    for record in _lines(release, "validation_qa.jsonl", files):
        identifier = str(record["id"])
        items[identifier] = ItemGold(
            kind="validation",
            gold=_text(record.get("answer")).strip(),
            cluster=identifier,
            strata={stratum: _text(record.get(stratum)) or "(none)" for stratum in VALIDATION_STRATA},
            question=_text(record.get("question")).strip(),
            language=_text(record.get("language")) or fallback,
        )
    scenarios = {VALIDATION_SCENARIO: set(items)}
    return ReleaseGold("validation", fallback, items, scenarios, files, VALIDATION_STRATA)


def release_prompts(
    release: Release, scenario: str, pinned: list[dict[str, str]], template_name: str = ""
) -> list[tuple[str, str]]:
    """(item id, prompt) of every item under one scenario: its template (in the manifest) filled from each item's
    line, refused unless the item files are the ones the run was pinned to. A release built before prompts came
    from the templates has a prompt file per scenario, read as it is. A validation release's items are asked
    through the named template (`VALIDATION_TEMPLATES`) the run recorded."""
    files: list[dict[str, str]] = []
    if release.project.kind == "validation":
        return _validation_prompts(release, scenario, pinned, template_name)
    name = f"prompts/{scenario}.jsonl"
    if release.file_entry(name) is not None:
        records = _lines(release, name, files)
        if files[0] not in pinned:
            raise InvalidState(f"{name} is not the file this run was pinned to; nothing was asked.")
        return [(str(record["id"]), str(record.get("prompt") or "")) for record in records]
    template = _prompt_templates(release).get(scenario)
    if template is None:
        raise InvalidInput(f"Release v{release.version} has no prompt template for {scenario}.", field="scenario")
    prompts = []
    for item_file in ("lead_qa.jsonl", "document_qa.jsonl"):
        if release.file_entry(item_file) is None:
            continue
        records = _lines(release, item_file, files)
        if files[-1] not in pinned:
            raise InvalidState(f"{item_file} is not the file this run was pinned to; nothing was asked.")
        prompts += [(str(record["id"]), prompt_fill(template, record)) for record in records]
    return prompts


def validation_prompt_fill(template: str, record: dict[str, Any], fallback_language: str) -> str:
    """One validation item's prompt, in one pass: braces inside a question are only text. `{language}` is the
    name of the item's language (its ISO code when the platform does not know it)."""
    code = _text(record.get("language")) or fallback_language
    known = LANGUAGES.get(code)
    values = {"question": _text(record.get("question")).strip(), "language": known.name if known else code}
    return _VALIDATION_PLACEHOLDER.sub(lambda match: values[match.group(1)], template)


def _validation_prompts(
    release: Release, scenario: str, pinned: list[dict[str, str]], template_name: str
) -> list[tuple[str, str]]:
    if scenario != VALIDATION_SCENARIO:
        raise InvalidInput(f"A validation release asks its questions alone ({VALIDATION_SCENARIO}).", field="scenario")
    template = VALIDATION_TEMPLATES.get(template_name)
    if template is None:
        raise InvalidInput(f"No validation prompt template is named {template_name[:64]!r}.", field="template")
    files: list[dict[str, str]] = []
    records = _lines(release, "validation_qa.jsonl", files)
    if files[0] not in pinned:
        raise InvalidState("validation_qa.jsonl is not the file this run was pinned to; nothing was asked.")
    fallback = release.project.standard_language
    return [(str(record["id"]), validation_prompt_fill(template, record, fallback)) for record in records]
