"""The declared shape of every JSONL config of a release: one schema per file, written into the dataset card.

Loaders that guess a file's shape from its lines guess differently from file to file (a split whose every
verification has no sentences reads as a list of nulls, another's as a list of structs, and the two do not
cast). So every data config of a release declares its schema, and the dataset card's YAML carries it under
`dataset_info.features` (the form the Hugging Face `datasets` library reads): every split of a config is
read with the same types, whatever mix of values it holds.

A schema maps each field of a line to its type:

- `"string"`, `"int64"`, `"float64"`, `"bool"`: a value of that type, or null;
- `"json"`: any JSON value (free-form objects such as `metadata`; `datasets` gives it back decoded);
- `[type]`: a list of values of `type` (never null: an empty list when there is nothing);
- `{field: type, …}`: an object with exactly these keys (or null where the schema's docs say so).

Every line carries every key of its schema (null where unknown), so `pandas.read_json(lines=True)` reads the
same columns from every file. `schema_problems` says where a line departs from its schema (the tests check
every kind's files with it).
"""

from __future__ import annotations

from typing import Any

Schema = dict[str, Any]
SCALARS: dict[str, type | tuple[type, ...]] = {"string": str, "int64": int, "float64": (int, float), "bool": bool}

S, N, B = "string", "int64", "bool"

SENTENCE: Schema = {"start": N, "end": N, "text": S}
EVIDENCE: Schema = {"document": S, "start": N, "end": N, "text": S, "match": S}
VERIFICATION: Schema = {"status": S, "sentences": [SENTENCE], "note": S, "answer": S, "query": S}

LEAD_QA: Schema = {
    "id": S,
    "kind": S,
    "split": S,
    "pair_id": S,
    "local_language": S,
    "standard_language": S,
    "local_wiki": S,
    "standard_wiki": S,
    "local_title": S,
    "standard_title": S,
    "local_url": S,
    "standard_url": S,
    "question": S,
    "answer_standard": S,
    "answer_local": S,
    "evidence": [EVIDENCE],
    "verification": VERIFICATION,
    "topic": S,
    "region": S,
    "region_detail": S,
    "review_outcome": S,
    "local_knowledge_check": S,
    "revisions": N,
    "reviews": N,
    "local_lead": S,
    "standard_lead": S,
}
DOCUMENT_QA: Schema = {**LEAD_QA, "local_text": S}

PAGE_PAIRS: Schema = {
    "id": S,
    "split": S,
    "local_language": S,
    "standard_language": S,
    "local_wiki": S,
    "standard_wiki": S,
    "local_title": S,
    "standard_title": S,
    "local_url": S,
    "standard_url": S,
    "local_lead_length": N,
    "standard_lead_length": N,
    "local_text_length": N,
    "standard_text_length": N,
    "local_heavy": B,
    "status": S,
    "screening_decision": S,
    "exclusion_reason": S,
    "exclusion_note": S,
    "topic": S,
    "region": S,
    "region_detail": S,
    "lead_qas": N,
    "document_qas": N,
}


def _type_lines(kind: Any, indent: str) -> list[str]:
    """The YAML of one field's type, after its `- name:` line (`datasets`' `Features` YAML form)."""
    if isinstance(kind, str):
        return [f"{indent}dtype: {kind}"]
    if isinstance(kind, list):
        (inner,) = kind
        if isinstance(inner, str):
            return [f"{indent}list: {inner}"]
        if isinstance(inner, dict):
            return [f"{indent}list:", *_fields_lines(inner, indent)]
        raise TypeError(f"a list of lists is not declared in a release schema: {kind!r}")
    if isinstance(kind, dict):
        return [f"{indent}struct:", *_fields_lines(kind, indent)]
    raise TypeError(f"unknown schema type {kind!r}")


def _fields_lines(schema: Schema, indent: str) -> list[str]:
    out: list[str] = []
    for name, kind in schema.items():
        out.append(f"{indent}- name: {name}")
        out += _type_lines(kind, indent + "  ")
    return out


def features_yaml(schema: Schema, indent: str = "  ") -> list[str]:
    """`features:` and the schema as `datasets` reads it from a dataset card's `dataset_info`."""
    return [f"{indent}features:", *_fields_lines(schema, indent)]


def schema_problems(record: Any, schema: Schema, where: str = "") -> list[str]:
    """Where `record` departs from `schema` (a missing or unknown key, a value of another type); empty if none."""
    if not isinstance(record, dict):
        return [f"{where or 'line'}: expected an object, got {type(record).__name__}"]
    problems = [f"{where}{key}: missing" for key in schema if key not in record]
    problems += [f"{where}{key}: not in the schema" for key in record if key not in schema]
    for key, kind in schema.items():
        if key in record:
            problems += _value_problems(record[key], kind, f"{where}{key}")
    return problems


def _value_problems(value: Any, kind: Any, where: str) -> list[str]:
    if kind == "json":
        return []
    if isinstance(kind, list):
        if not isinstance(value, list):
            return [f"{where}: expected a list, got {type(value).__name__}"]
        problems: list[str] = []
        for index, element in enumerate(value):
            problems += _value_problems(element, kind[0], f"{where}[{index}]")
        return problems
    if value is None:
        return []
    if isinstance(kind, dict):
        return schema_problems(value, kind, f"{where}.")
    expected = SCALARS[kind]
    if (isinstance(value, bool) and kind != "bool") or not isinstance(value, expected):
        return [f"{where}: expected {kind}, got {type(value).__name__}"]
    return []
