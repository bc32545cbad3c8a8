"""Reading a predictions upload: every line checked against the release before anything is stored.

Two layouts. A predictions JSONL, one answer per line: `{"id", "scenario", "prediction", "model"}`. An
lm-evaluation-harness `samples_*.jsonl` log (`--log_samples`): the release item is `doc.id`, the answer the first
filtered response (a text for generation tasks; for log-likelihood multiple choice, the option with the highest
log-likelihood, as a letter); the model, and the scenario when `doc` does not name one, come with the upload.

Every refused line is named with its number, field and reason; a file with any refused line is refused whole
(nothing stored), so a results table never rests on a silently shortened file.
"""

from __future__ import annotations

import io
import json
import math
from dataclasses import dataclass, field
from typing import Any

from evaluation.extraction import LETTERS
from evaluation.gold import ReleaseGold

MAX_PREDICTION_CHARS = 100_000
MAX_NAME_CHARS = 200
MAX_PROBLEMS_LISTED = 500


@dataclass(slots=True)
class Row:
    line: int
    item_id: str
    scenario: str
    model: str
    prediction: str


@dataclass(slots=True)
class Parsed:
    rows: list[Row] = field(default_factory=list)
    problems: list[dict[str, Any]] = field(default_factory=list)
    counts: dict[str, int] = field(default_factory=dict)

    last_refused: int = -1  # lines come in order: a line is counted once however many problems it has

    def refuse(self, line: int, field_name: str, reason: str, *, count: str = "") -> None:
        """One problem of one line (a line may have several); `count` also counts it under its own name."""
        if line != self.last_refused:
            self.last_refused = line
            self.counts["refused_lines"] = self.counts.get("refused_lines", 0) + 1
        self.counts["problems"] = self.counts.get("problems", 0) + 1
        if count:
            self.counts[count] = self.counts.get(count, 0) + 1
        if len(self.problems) < MAX_PROBLEMS_LISTED:
            self.problems.append({"line": line, "field": field_name, "reason": reason})


def _no_constants(name: str) -> None:
    raise ValueError(f"{name} is not a number JSON allows")


def _decode(data: bytes, parsed: Parsed) -> str | None:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        line = data.count(b"\n", 0, error.start) + 1
        parsed.refuse(line, "file", f"not UTF-8 (byte {error.start} of the file)")
        return None


def parse_upload(
    data: bytes, gold: ReleaseGold, *, harness: bool = False, model: str = "", scenario: str = ""
) -> Parsed:
    parsed = Parsed()
    text = _decode(data, parsed)
    if text is None:
        return parsed
    seen: dict[tuple[str, str, str], int] = {}
    lines = 0
    # one line at a time: a file of millions of tiny lines is not split into a list of millions of strings
    for number, raw in enumerate(io.StringIO(text, newline="\n"), start=1):
        if not raw.strip():
            continue
        lines += 1
        try:
            record = json.loads(raw, parse_constant=_no_constants)
        except (ValueError, RecursionError) as error:
            parsed.refuse(number, "line", f"not JSON ({str(error)[:120]})")
            continue
        if not isinstance(record, dict):
            parsed.refuse(number, "line", "not a JSON object")
            continue
        row = _harness_row(number, record, parsed, model, scenario) if harness else _row(number, record, parsed)
        if row is None:
            continue
        if row.scenario not in gold.scenarios:
            known = ", ".join(sorted(gold.scenarios)) or "none"
            parsed.refuse(number, "scenario", f"{row.scenario[:80]!r} is not a scenario of this release ({known})")
            continue
        if row.item_id not in gold.scenarios[row.scenario]:
            where = "in this release" if row.item_id not in gold.items else f"under {row.scenario}"
            parsed.refuse(number, "id", f"{row.item_id[:80]!r} is not an item {where}", count="unknown_ids")
            continue
        key = (row.model, row.scenario, row.item_id)
        if key in seen:
            parsed.refuse(number, "id", f"the same id, scenario and model twice (first on line {seen[key]})")
            continue
        seen[key] = number
        parsed.rows.append(row)
    parsed.counts["lines"] = lines
    if not lines:
        parsed.refuse(0, "file", "the file holds no lines")
    return parsed


def _string(record: dict[str, Any], name: str, number: int, parsed: Parsed, *, limit: int) -> str | None:
    value = record.get(name)
    if not isinstance(value, str):
        reason = "missing" if value is None and name not in record else f"must be a string, not {type(value).__name__}"
        parsed.refuse(number, name, reason)
        return None
    if len(value) > limit:
        parsed.refuse(number, name, f"longer than {limit:,} characters")
        return None
    return value


def _row(number: int, record: dict[str, Any], parsed: Parsed) -> Row | None:
    item_id = record.get("id")
    if isinstance(item_id, int) and not isinstance(item_id, bool):
        item_id = str(item_id)
        record = {**record, "id": item_id}
    values = {
        name: _string(record, name, number, parsed, limit=limit)
        for name, limit in (
            ("id", MAX_NAME_CHARS),
            ("scenario", MAX_NAME_CHARS),
            ("model", MAX_NAME_CHARS),
            ("prediction", MAX_PREDICTION_CHARS),
        )
    }
    if any(value is None for value in values.values()):
        return None
    if not str(values["model"]).strip():
        parsed.refuse(number, "model", "empty: name the model")
        return None
    return Row(
        number, str(values["id"]), str(values["scenario"]), str(values["model"]).strip(), str(values["prediction"])
    )


def _harness_answer(response: Any) -> str | None:
    """A generation's text, or the letter of the best log-likelihood ([[loglik, is_greedy], ...])."""
    if isinstance(response, str):
        return response
    if isinstance(response, list) and response and all(isinstance(option, list) and option for option in response):
        try:
            scores = [float(option[0]) for option in response]
        except (TypeError, ValueError):
            return None
        if any(math.isnan(score) for score in scores) or len(scores) > len(LETTERS):
            return None
        return LETTERS[scores.index(max(scores))]
    return None


def _harness_row(number: int, record: dict[str, Any], parsed: Parsed, model: str, scenario: str) -> Row | None:
    doc = record.get("doc")
    if not isinstance(doc, dict) or not isinstance(doc.get("id"), str | int) or isinstance(doc.get("id"), bool):
        parsed.refuse(number, "doc.id", "missing: the harness task must carry the release item's id in its docs")
        return None
    responses = record.get("filtered_resps")
    if not isinstance(responses, list) or not responses:
        parsed.refuse(number, "filtered_resps", "missing or empty")
        return None
    # Generation: filtered_resps = ["text"]; log-likelihood choice: filtered_resps = [[loglik, greedy], ...].
    first = responses[0]
    answer = _harness_answer(first if isinstance(first, str) else responses)
    if answer is None:
        parsed.refuse(number, "filtered_resps", "neither a text nor a list of [log-likelihood, greedy] pairs")
        return None
    if len(answer) > MAX_PREDICTION_CHARS:
        parsed.refuse(number, "filtered_resps", f"longer than {MAX_PREDICTION_CHARS:,} characters")
        return None
    named = doc.get("scenario")
    chosen = named if isinstance(named, str) and named else scenario
    if not chosen:
        parsed.refuse(number, "doc.scenario", "missing: the docs name no scenario and the upload gave none")
        return None
    return Row(number, str(doc["id"])[: MAX_NAME_CHARS + 1], chosen[: MAX_NAME_CHARS + 1], model, answer)
