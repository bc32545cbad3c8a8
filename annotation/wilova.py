"""The WiLoVa release format, both ways: its rows as localqa records, and localqa's state as row fields.

A language pair comes as two JSON files, each one object keyed by the standard
title: the base file (`de.bar-MW.json`) and the review pass
(`de.bar-MW_QualityMeta-VB.json`), which repeats the base fields and adds the
reviewers' checked texts and the article labels.

`row_records` reads rows; `row_projection` computes, from localqa's state, the
value each mapped row field should have. The import stores the projection it
started from, and a writer rewrites only the fields whose projection changed
since, so an untouched release is written back byte for byte.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from annotation.models import EvidenceSpan, PagePair, QAItem, QAItemRevision, Screening
from common.text import unstorable

if TYPE_CHECKING:
    from annotation.importers.report import Problems

Q0 = "Q0: Should we annotate this dialect-standard Wikipedia page pair? If no, specify why."
NOTE = "Note: if this is an interesting/tricky/difficult example, write a brief explanation here."
LEAD_SLOTS = (1, 2, 3)
DOCUMENT_SLOT = 4
SLOTS = (*LEAD_SLOTS, DOCUMENT_SLOT)

SCREENING = {
    "Yes": Screening.Decision.ANNOTATE,
    "Translated": Screening.Decision.TRANSLATED,
    "Disambiguation": Screening.Decision.STRUCTURAL,
    "Error": Screening.Decision.ERROR,
}
SCREENING_BACK = {decision.value: label for label, decision in SCREENING.items()} | {"other": "Other"}

# The region vocabularies of the published studies: each study's fine-grained `Article_Region` values folded
# into the project's three (local, standard, other). A project keeps its own copy (`Project.region_vocabulary`),
# seeded from these by its languages and editable by its coordinators; see docs/formats.md.
GENERAL_REGIONS = {"Other": "other", "General": "other"}
BAVARIAN_REGIONS = {
    "Bavaria": "local",
    "Austria": "local",
    "South Tyrol": "local",
    "core-area": "local",
    "Germany": "standard",
    "Italy": "standard",
    "Switzerland": "standard",
    "majority-area": "standard",
    **GENERAL_REGIONS,
}
CANTONESE_REGIONS = {
    "Guangdong": "local",
    "Hong Kong": "local",
    "Hongkong": "local",  # spelled so in the zh-yue release
    "Guangxi": "local",
    "Macau": "local",
    "China": "standard",
    "Taiwan": "standard",
    **GENERAL_REGIONS,
}
REGION_SEEDS = {"bar": BAVARIAN_REGIONS, "yue": CANTONESE_REGIONS}  # by the project's local language
REGIONS = BAVARIAN_REGIONS  # the table the first release was written with (kept for callers that name it)


def region_vocabulary_seed(local_language: str) -> dict[str, str]:
    """The fine → coarse region table a new project starts with: its study's, else only Other and General."""
    return dict(REGION_SEEDS.get(local_language, GENERAL_REGIONS))


# Wikipedia language codes with a hyphen (every other one is letters only). A release file name is
# `<standard wiki>.<local wiki>-<annotators>[_QualityMeta-<reviewers>].json`, and the annotators' tag follows
# the local wiki after a hyphen too, so a hyphenated code can only be told from a tag by knowing the codes.
HYPHENATED_WIKIS = frozenset(
    (
        "bat-smg",
        "be-tarask",
        "be-x-old",
        "cbk-zam",
        "fiu-vro",
        "map-bms",
        "nds-nl",
        "roa-rup",
        "roa-tara",
        "zh-classical",
        "zh-min-nan",
        "zh-yue",
    )
)
_WIKI = re.compile(r"[a-z]{2,12}(?:-[a-z]{1,12})*")  # en, zh-classical, be-x-old, simple


REQUIRED_TEXT = (
    "standard_title",
    "dialect_title",
    "standard_summary",
    "dialect_summary",
    "standard_url",
    "dialect_url",
)
MISSING = object()  # a key absent from the row (different from null)


def file_role(name: str) -> str:
    return "quality" if "_QualityMeta" in name else "base"


@dataclass(frozen=True)
class FileName:
    """What a release file's name says: `zh.zh-yue-YM_QualityMeta-LP.json` → zh, zh-yue, YM, LP."""

    standard_wiki: str
    local_wiki: str
    annotators: str
    reviewers: str | None


def parse_file_name(name: str, *, known: frozenset[str] | set[str] = frozenset()) -> FileName | None:
    """Read a release file name against real wiki codes; None if it is not in the release's shape.

    The local part is `<local wiki>-<annotators>`: the longest hyphenated wiki code it starts with
    (Wikipedia's, or one in `known`, e.g. the project's own), else the part before its last hyphen.
    """
    base = name.rsplit("/", 1)[-1]
    match = re.fullmatch(r"([a-z][a-z0-9-]*)\.([a-z][A-Za-z0-9-]*?)(?:_QualityMeta(?:-([A-Za-z0-9-]+))?)?\.json", base)
    if match is None:
        return None
    standard, rest, reviewers = match.groups()
    codes = sorted((code for code in HYPHENATED_WIKIS | set(known) if rest.startswith(code + "-")), key=len)
    if rest in HYPHENATED_WIKIS or rest in known:
        local, annotators = rest, ""
    elif codes:
        local, annotators = codes[-1], rest[len(codes[-1]) + 1 :]
    elif "-" in rest:
        local, annotators = rest.rsplit("-", 1)
    else:
        local, annotators = rest, ""
    if not _WIKI.fullmatch(local) or not _WIKI.fullmatch(standard):
        return None
    return FileName(standard_wiki=standard, local_wiki=local, annotators=annotators, reviewers=reviewers)


def file_wikis(name: str, *, known: frozenset[str] | set[str] = frozenset()) -> tuple[str, str] | None:
    """`de.bar-MW.json` → ("de", "bar"), `zh.zh-yue-YM.json` → ("zh", "zh-yue"): the standard and local wiki."""
    parsed = parse_file_name(name, known=known)
    return (parsed.standard_wiki, parsed.local_wiki) if parsed else None


def file_name_mismatch(name: str, *, standard_wiki: str, local_wiki: str) -> str | None:
    """Why a release file's name disagrees with the project's wikis, in words; None if it agrees (or says nothing)."""
    parsed = parse_file_name(name, known={local_wiki, standard_wiki})
    if parsed is None or (parsed.standard_wiki, parsed.local_wiki) == (standard_wiki, local_wiki):
        return None
    tag = f", annotators {parsed.annotators}" if parsed.annotators else ""
    wrong = []
    if parsed.local_wiki != local_wiki:
        wrong.append(f"local wiki {parsed.local_wiki!r} instead of {local_wiki!r}")
    if parsed.standard_wiki != standard_wiki:
        wrong.append(f"standard wiki {parsed.standard_wiki!r} instead of {standard_wiki!r}")
    return (
        f"the file name reads as standard wiki {parsed.standard_wiki!r}, local wiki {parsed.local_wiki!r}{tag} "
        f"(<standard>.<local>-<annotators>.json), but this project pairs {local_wiki}.wikipedia.org with "
        f"{standard_wiki}.wikipedia.org: {' and '.join(wrong)}. Import the file into a project for "
        f"{parsed.local_wiki}→{parsed.standard_wiki}, or rename it if its name is wrong"
    )


def locate(lead: str, evidence: str) -> tuple[str, int | None, int | None, str]:
    """Code-point offsets of evidence in the lead: exactly, else ignoring whitespace, else not at all."""
    start = lead.find(evidence)
    if start >= 0:
        return EvidenceSpan.Match.EXACT, start, start + len(evidence), evidence
    tokens = evidence.split()
    if tokens:
        found = re.search(r"\s+".join(map(re.escape, tokens)), lead)
        if found:
            return EvidenceSpan.Match.WHITESPACE, found.start(), found.end(), found.group()
    return EvidenceSpan.Match.UNLOCATED, None, None, evidence


@dataclass
class ItemRecord:
    kind: str
    question: str
    answer_standard: str
    answer_local: str
    status: str
    metadata: dict[str, Any] = field(default_factory=dict)
    spans: list[dict[str, Any]] = field(default_factory=list)
    revisions: list[dict[str, Any]] = field(default_factory=list)  # {reason, question, answer_*, spans}


@dataclass
class PairRecord:
    values: dict[str, Any]
    screenings: list[tuple[str, str]] = field(default_factory=list)  # (decision, note)
    items: list[ItemRecord] = field(default_factory=list)
    source_rows: list[dict[str, Any]] = field(default_factory=list)  # {file, position, key, raw}


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


MAX_LENGTH = 2_147_483_647  # PositiveIntegerField on PostgreSQL


def _length(value: Any) -> int | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return int(value) if 0 <= value <= MAX_LENGTH and float(value).is_integer() else None


SLOT_TEXT = ("Source", "Answer", "Translation")


def check_row(
    key: str,
    row: Any,
    *,
    problem: Problems,
    warn: Callable[[str | None, str], None],
    topics: list[str],
    quality: bool,
) -> bool:
    """Report every problem of one row, and its residue as warnings; True if the row can be imported.

    A problem is structural (a wrong type, a missing required field, text that cannot be stored) and refuses
    the file. Residue is content the spreadsheet left where nothing is expected (an answer in a slot without
    a question, a question on a pair not to annotate): it is kept as written in the stored row, so the file is
    written back unchanged, and reported, but it never becomes an item.
    """
    if not isinstance(row, dict):
        problem(None, "must be an object with the row's fields")
        return False
    before = problem.count
    for name in REQUIRED_TEXT:
        value = row.get(name)
        if value is None:
            problem(name, "is missing")
        elif not isinstance(value, str):
            problem(name, "must be a string")
        elif not value.strip():
            problem(name, "is empty")
        elif name.endswith("title") and len(value) > 500:
            problem(name, f"is {len(value)} characters long; the limit is 500")
    decision = row.get(Q0, MISSING)
    if decision is MISSING:
        problem(Q0, "is missing (the screening decision)")
    elif decision not in SCREENING:
        problem(Q0, f"unknown screening value {decision!r}: expected one of {', '.join(SCREENING)}")
    for name in ("standard_len_sum", "dialect_len_sum", "standard_len_text", "dialect_len_text"):
        value = row.get(name)
        if value is not None and _length(value) is None:
            problem(name, f"must be a whole number of code points (at most {MAX_LENGTH:,}), not {value!r}")
    for slot in SLOTS:
        question = row.get(f"Question{slot}")
        if question is not None and not isinstance(question, str):
            problem(f"Question{slot}", "must be a string or null")
        others = [f"{name}{slot}" for name in SLOT_TEXT] + ([f"Validate{slot}"] if slot in LEAD_SLOTS else [])
        for name in others:
            value = row.get(name)
            if value is not None and not isinstance(value, str):
                problem(name, "must be a string or null")
        if quality:
            others += [f"Question{slot}_qualitychecked", f"Translation{slot}_qualitychecked"]
        if not _text(question).strip():
            for name in others:
                if _text(row.get(name)).strip():
                    warn(name, f"has text, but slot {slot} has no question: kept as written, not made an item")
        elif decision in SCREENING and SCREENING[decision] != Screening.Decision.ANNOTATE:
            warn(
                f"Question{slot}",
                f"the pair is screened {decision!r}, not to annotate: the question is kept as written, "
                "not made an item",
            )
    note = row.get(NOTE)
    if note is not None and not isinstance(note, str):
        problem(NOTE, "must be a string or null")
    if quality:
        topic = row.get("Article_Topic")
        if topic not in (None, "") and topic not in topics:
            problem("Article_Topic", f"unknown topic {topic!r}: the project's topics are {', '.join(topics)}")
        region = row.get("Article_Region")
        if region is not None and not isinstance(region, str):
            problem("Article_Region", "must be a string or null")
    for name, value in row.items():
        if isinstance(value, str) and (message := unstorable(value)):
            problem(name, message)
    return problem.count == before


def row_region(row: dict[str, Any] | None) -> str | None:
    """The fine-grained region a review row gives (`Article_Region`), as written; None if it gives none."""
    value = (row or {}).get("Article_Region")
    return value if isinstance(value, str) and value else None


def row_record(
    key: str, base: dict[str, Any] | None, quality: dict[str, Any] | None, *, regions: Mapping[str, str]
) -> PairRecord:
    """The pair, its screening and its items from one key's rows (either may be missing, not both).

    `regions` is the project's fine → coarse region table; a region it does not know is stored without a
    coarse value (the import asks for it before it writes anything)."""
    row = base if base is not None else quality
    assert row is not None
    decision = SCREENING[row[Q0]]
    local_lead, standard_lead = row["dialect_summary"], row["standard_summary"]
    metadata: dict[str, Any] = {"key": key}
    if "standard_summary_en" in row:
        metadata["machine_translations"] = {"standard_summary_en": row["standard_summary_en"]}
    if quality is not None:
        region_detail = row_region(quality)
        labels = {
            "topic": quality.get("Article_Topic") or None,
            "region": regions.get(region_detail) if region_detail else None,
            "region_detail": region_detail,
            "entity": quality.get("Article_Entity") or None,
        }
        if any(value is not None for value in labels.values()):
            metadata["labels"] = labels
            if region_detail:
                # What the fine value meant when imported: the write-back keeps the file's fine value as long as
                # the coarse label still says this, whatever the project's table says later.
                metadata["region_folded"] = labels["region"]
        if "num_langs" in quality:
            metadata["num_langs"] = quality["num_langs"]
        categories = {}
        for side, name in (("standard", "standard_wiki_categories"), ("local", "dialect_wiki_categories")):
            value = quality.get(name)
            categories[side] = value if isinstance(value, list) else None  # an object of empty lists: unknown
        metadata["categories"] = categories
    items = []
    if decision == Screening.Decision.ANNOTATE:  # on an excluded pair a question is residue (see check_row)
        items = [item for slot in SLOTS if (item := _item_record(slot, row, quality, local_lead=local_lead))]
    status = PagePair.Status.EXCLUDED
    if decision == Screening.Decision.ANNOTATE:
        status = PagePair.Status.SUBMITTED if items else PagePair.Status.NEW
    values = {
        "local_title": row["dialect_title"],
        "standard_title": row["standard_title"],
        "local_url": row["dialect_url"],
        "standard_url": row["standard_url"],
        "local_lead": local_lead,
        "standard_lead": standard_lead,
        "local_text": "",
        "standard_text": "",
        "local_lead_length": len(local_lead),
        "standard_lead_length": len(standard_lead),
        "local_text_length": _length(row.get("dialect_len_text")),
        "standard_text_length": _length(row.get("standard_len_text")),
        "source": PagePair.Source.WILOVA,
        "metadata": {"wilova": metadata},
        "status": status,
        "screening_decision": decision,
    }
    return PairRecord(values=values, screenings=[(decision, _text(row.get(NOTE)))], items=items)


def _item_record(
    slot: int, row: dict[str, Any], quality: dict[str, Any] | None, *, local_lead: str
) -> ItemRecord | None:
    question = _text(row.get(f"Question{slot}"))
    if not question.strip():
        return None
    kind = QAItem.Kind.LEAD if slot in LEAD_SLOTS else QAItem.Kind.DOCUMENT
    answer_local = _text(row.get(f"Answer{slot}"))
    answer_standard = _text(row.get(f"Translation{slot}"))
    evidence = _text(row.get(f"Source{slot}"))
    spans = []
    if evidence.strip():
        if kind == QAItem.Kind.LEAD:
            match, start, end, text = locate(local_lead, evidence)
            document = EvidenceSpan.Document.LOCAL_LEAD
        else:  # from the full local article, which the release does not include
            match, start, end, text = EvidenceSpan.Match.UNLOCATED, None, None, evidence
            document = EvidenceSpan.Document.LOCAL_TEXT
        spans.append({"document": document, "start": start, "end": end, "text": text, "match": match})
    wilova: dict[str, Any] = {"slot": slot, "source": row.get(f"Source{slot}")}
    for name, field_name in (("question_en", f"Question{slot}_en"), ("translation_en", f"Translation{slot}_en")):
        if field_name in row:
            wilova[name] = row[field_name]
    metadata: dict[str, Any] = {"wilova": wilova}
    if kind == QAItem.Kind.LEAD:
        found = _text(row.get(f"Validate{slot}"))
        # Empty means unknown: not found, or never checked. Only a given text says "found".
        metadata["verification"] = {"status": "found", "text": found} if found.strip() else {"status": "not_checked"}
    original = {"question": question, "answer_standard": answer_standard, "answer_local": answer_local}
    revisions = [{"reason": QAItemRevision.Reason.IMPORTED, **original, "spans": spans}]
    status = QAItem.Status.SUBMITTED
    if quality is not None:
        for name in (f"Question{slot}_HeadNoun", f"Question{slot}_Region"):
            if name in quality:
                wilova[name.split("_", 1)[1].lower().replace("headnoun", "head_noun")] = quality[name] or None
        checked_question = quality.get(f"Question{slot}_qualitychecked", MISSING)
        checked_translation = quality.get(f"Translation{slot}_qualitychecked", MISSING)
        if checked_question is MISSING:
            pass  # not reviewed
        elif checked_question is None:
            status = QAItem.Status.REJECTED
        else:
            status = QAItem.Status.ACCEPTED
            new_translation = checked_translation if isinstance(checked_translation, str) else answer_standard
            if (checked_question, new_translation) != (question, answer_standard):
                question, answer_standard = checked_question, new_translation
                revisions.append(
                    {
                        "reason": QAItemRevision.Reason.REVIEWER_REWRITE,
                        "question": question,
                        "answer_standard": answer_standard,
                        "answer_local": answer_local,
                        "spans": spans,
                    }
                )
    return ItemRecord(
        kind=kind,
        question=question,
        answer_standard=answer_standard,
        answer_local=answer_local,
        status=status,
        metadata=metadata,
        spans=spans,
        revisions=revisions,
    )


# From localqa's state back to row fields


@dataclass
class ItemState:
    slot: int
    status: str
    question: str
    answer_standard: str
    answer_local: str
    metadata: dict[str, Any]
    authored: dict[str, Any]  # the latest content not written by a reviewer: {question, answer_*, spans}


def record_states(record: PairRecord) -> list[ItemState]:
    """The item states an import creates, for the projection it stores."""
    states = []
    for item in record.items:
        authored = [r for r in item.revisions if r["reason"] != QAItemRevision.Reason.REVIEWER_REWRITE][-1]
        states.append(
            ItemState(
                slot=item.metadata["wilova"]["slot"],
                status=item.status,
                question=item.question,
                answer_standard=item.answer_standard,
                answer_local=item.answer_local,
                metadata=item.metadata,
                authored=authored,
            )
        )
    return states


def row_projection(
    *, pair_metadata: dict[str, Any], decision: str, note: str, items: list[ItemState]
) -> dict[str, Any]:
    """What each mapped field of the pair's rows says, given localqa's state."""
    projection: dict[str, Any] = {Q0: SCREENING_BACK.get(decision, decision), NOTE: note or None}
    by_slot = {item.slot: item for item in items}
    for slot in SLOTS:
        item = by_slot.get(slot)
        authored = item.authored if item else {}
        projection[f"Question{slot}"] = authored.get("question") or None
        projection[f"Answer{slot}"] = authored.get("answer_local") or None
        projection[f"Translation{slot}"] = authored.get("answer_standard") or None
        spans = authored.get("spans") or []
        projection[f"Source{slot}"] = " ".join(span["text"] for span in spans) or None
        if slot in LEAD_SLOTS:
            verification = (item.metadata.get("verification") if item else None) or {}
            projection[f"Validate{slot}"] = verification.get("text") if verification.get("status") == "found" else None
        reviewed = item is not None and item.status == QAItem.Status.ACCEPTED
        projection[f"Question{slot}_qualitychecked"] = item.question if reviewed and item else None
        projection[f"Translation{slot}_qualitychecked"] = (item.answer_standard or None) if reviewed and item else None
    wilova = pair_metadata.get("wilova", {})
    labels = wilova.get("labels") or {}
    region_detail = labels.get("region_detail")
    region = labels.get("region")
    folded = wilova.get("region_folded", REGIONS.get(region_detail) if region_detail else None)
    projection["Article_Topic"] = labels.get("topic")
    projection["Article_Region"] = region_detail if region_detail and folded == region else region
    projection["Article_Entity"] = labels.get("entity")
    return projection
