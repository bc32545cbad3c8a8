"""What one released item and one released pair look like, and how they are read from the database.

The records are read in chunks: one streaming query over the items (ordered by
pair, so a pair's items come together), and for each chunk a fixed handful of
queries for the pairs, spans, revision counts and review data of that chunk.
Memory holds one chunk, however large the project; the query count grows with
the number of chunks, never with the number of items.

`item_record` is the one function that decides the shape of a QA line; review
data (outcome, verification, labels) comes in through `ReviewData`, loaded
from the `review` app when it is installed.
"""

from __future__ import annotations

import queue
import threading
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field
from itertools import islice
from typing import Any, NamedTuple, TypeVar

from django.db import connection
from django.db.models import Count, F, Lookup

from annotation.models import (
    EvidenceSpan,
    ItemQuerySet,
    LocalCheck,
    PagePair,
    Project,
    QAItem,
    QAItemRevision,
    Screening,
)
from common.snapshot import Snapshot
from exports.splits import ReleaseUnits

CHUNK = 2000

# Imported projects (WiLoVa) bring verification and labels in metadata (`ReviewData`); the review app's rows win.
ITEM_COLUMNS = ("id", "pair_id", "kind", "question", "answer_standard", "answer_local", "status")
PAIR_COLUMNS = ("id", "local_title", "standard_title", "local_url", "standard_url", "local_lead", "standard_lead")
NOT_CHECKED: dict[str, Any] = {"status": "not_checked", "sentences": [], "note": "", "answer": None, "query": ""}


def imported_verification(value: Any) -> dict[str, Any] | None:
    """An imported item's verification (`{"status": "found", "text": …}`) in the release's shape."""
    if not isinstance(value, dict) or value.get("status") not in {"found", "not_found", "not_possible", "not_checked"}:
        return None
    text = value.get("text")
    sentences = [{"start": None, "end": None, "text": text}] if isinstance(text, str) and text.strip() else []
    note = value.get("note")
    note = note if isinstance(note, str) else ""
    return {"status": value["status"], "sentences": sentences, "note": note, "answer": None, "query": ""}


def imported_labels(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


class AnyOf(Lookup):
    """`field = ANY(%s)`: a chunk's ids as one array parameter on PostgreSQL.

    `field__in=[...]` would put thousands of placeholders into the query text (slow
    to build on every chunk); a subquery by range lets the planner scan whole
    tables. Elsewhere (the SQLite embedded default) it falls back to IN.
    Used as an expression: `Model.objects.filter(AnyOf(F("item_id"), ids))`.
    """

    lookup_name = "any_of"
    prepare_rhs = False

    def as_sql(self, compiler: Any, connection: Any) -> tuple[str, tuple[str | int, ...]]:
        lhs, lhs_params = self.process_lhs(compiler, connection)
        values = list(self.rhs)
        if connection.vendor == "postgresql":
            # One text parameter cast to an array: psycopg's own list adaptation costs more than the query.
            return f"{lhs} = ANY(%s::bigint[])", (*lhs_params, "{" + ",".join(map(str, map(int, values))) + "}")
        if not values:
            return "1 = 0", ()
        return f"{lhs} IN ({', '.join(['%s'] * len(values))})", (*lhs_params, *values)


def item_id(project: Project, pk: int) -> str:
    """The stable id of an item across releases: it never changes while the item exists."""
    return f"{project.slug}-q{pk}"


def pair_id(project: Project, pk: int) -> str:
    return f"{project.slug}-p{pk}"


# A group's split (exports.splits.SplitPlan.split_of): a Wikipedia QA release's groups are its page pairs.
Splitter = Callable[[int], str | None]


def wikipedia_release_units(project: Project, statuses: list[str]) -> ReleaseUnits:
    """A Wikipedia QA release's groups: the page pairs of its items (a pair's items share a split)."""
    counts = release_items(project, statuses).values_list("pair_id").annotate(n=Count("id")).order_by()
    return ReleaseUnits.counted("page pair", counts.iterator(chunk_size=CHUNK))  # without a list of every row


@dataclass
class ReviewData:
    """Review facts of one chunk, keyed by item or pair pk: the review app's rows and what an imported project
    brought in its metadata. Empty where the project has none."""

    # item pk → (result, sentences, note, answer checked, query)
    verification: dict[int, tuple[str, Any, str, str | None, str]] = field(default_factory=dict)
    labels: dict[int, dict[str, str | None]] = field(default_factory=dict)
    reviews: dict[int, int] = field(default_factory=dict)  # done reviews per item
    imported_verification: dict[int, Any] = field(default_factory=dict)
    imported_labels: dict[int, Any] = field(default_factory=dict)

    @staticmethod
    def present(project: Project) -> frozenset[str]:
        """Which kinds of review data the project has at all, asked once per build: chunks skip the others."""
        kinds = {
            "imported_verification": QAItem.objects.filter(project=project, metadata__has_key="verification").exists(),
            "imported_labels": PagePair.objects.filter(project=project, metadata__wilova__has_key="labels").exists(),
        }
        try:
            from review.models import FinalLabel, ReviewSlot, Verification
        except ImportError:  # the review app is not there: verification "not_checked", labels null
            pass
        else:
            kinds |= {
                "verification": Verification.objects.filter(item__project=project).exists(),
                "labels": FinalLabel.objects.filter(pair__project=project).exists(),
                "reviews": ReviewSlot.objects.filter(project=project, status="done").exists(),
            }
        return frozenset(kind for kind, there in kinds.items() if there)

    @classmethod
    def load(cls, item_pks: list[int], pair_pks: list[int], present: frozenset[str]) -> ReviewData:
        data = cls()
        if "imported_verification" in present and item_pks:
            data.imported_verification = dict(
                QAItem.objects.filter(AnyOf(F("id"), item_pks), metadata__has_key="verification").values_list(
                    "id", "metadata__verification"
                )
            )
        if "imported_labels" in present:
            data.imported_labels = dict(
                PagePair.objects.filter(AnyOf(F("id"), pair_pks), metadata__wilova__has_key="labels").values_list(
                    "id", "metadata__wilova__labels"
                )
            )
        if not present & {"verification", "labels", "reviews"}:
            return data
        from review.models import FinalLabel, ReviewSlot, Verification

        if not item_pks:  # a chunk of pairs: their labels only
            present = present & {"labels"}
        if "reviews" in present:
            data.reviews = _counts(ReviewSlot.objects.filter(AnyOf(F("item_id"), item_pks), status="done"))
        if "verification" in present:
            data.verification = {
                item_pk: (result, sentences, note, answer, query)  # the latest wins
                for item_pk, result, sentences, note, answer, query in (
                    Verification.objects.filter(AnyOf(F("item_id"), item_pks))
                    .order_by("item_id", "number")
                    .values_list("item_id", "result", "sentences", "note", "answer", "query")
                )
            }
        if "labels" in present:
            for pair_pk, kind, value, detail in FinalLabel.objects.filter(AnyOf(F("pair_id"), pair_pks)).values_list(
                "pair_id", "kind", "value", "detail"
            ):
                data.labels.setdefault(pair_pk, {})[kind] = value
                if kind == "region" and detail:
                    data.labels[pair_pk]["region_detail"] = detail
        return data

    def pair_labels(self, pair_pk: int) -> dict[str, Any]:
        return self.labels.get(pair_pk) or imported_labels(self.imported_labels.get(pair_pk))

    def item_verification(self, item_pk: int) -> dict[str, Any]:
        verified = self.verification.get(item_pk)
        if verified is not None:
            result, sentences, note, answer, query = verified
            return {
                "status": result,
                "sentences": _sentences(sentences),
                "note": note or "",
                "answer": answer,  # the answer text it checked (null: recorded before that was kept)
                "query": query or "",  # the search the verifier ran
            }
        return imported_verification(self.imported_verification.get(item_pk)) or NOT_CHECKED


def _counts(rows: Any) -> dict[int, int]:
    """How many of `rows` (a queryset of one chunk's rows with an item_id) each item has."""
    return dict(rows.order_by().values("item_id").annotate(n=Count("id")).values_list("item_id", "n"))


def _sentences(sentences: Any) -> list[dict[str, Any]]:
    if not isinstance(sentences, list):
        return []
    return [
        {"start": sentence.get("start"), "end": sentence.get("end"), "text": sentence.get("text", "")}
        if isinstance(sentence, dict)
        else {"start": None, "end": None, "text": str(sentence)}
        for sentence in sentences
    ]


@dataclass
class ItemContext:
    """Everything `item_record` needs besides the item row: the project, its chunk's pairs, spans and review data."""

    project: Project
    pairs: dict[int, PairFacts]
    local_texts: dict[int, str]
    spans: dict[int, list[tuple]]  # item pk → (document, start, end, text, match) in order
    revisions: dict[int, int]
    review: ReviewData
    # item pk → (result, question, answer) of its finished local-knowledge check
    local_checks: dict[int, tuple[str, str, str]] = field(default_factory=dict)


class PairFacts(NamedTuple):
    """What every item of a pair repeats, worked out once per pair and chunk."""

    pair_id: str
    split: str | None
    local_title: str
    standard_title: str
    local_url: str
    standard_url: str
    local_lead: str
    standard_lead: str
    topic: str | None
    region: str | None
    region_detail: str | None


def pair_facts(project: Project, row: tuple, splitter: Splitter, review: ReviewData) -> PairFacts:
    pk, local_title, standard_title, local_url, standard_url, local_lead, standard_lead = row
    labels = review.pair_labels(pk)
    return PairFacts(
        pair_id(project, pk),
        splitter(pk),
        local_title,
        standard_title,
        local_url,
        standard_url,
        local_lead,
        standard_lead,
        labels.get("topic"),
        labels.get("region"),
        labels.get("region_detail") or None,
    )


def item_record(item: tuple, context: ItemContext) -> dict[str, Any]:
    """One self-contained QA line (field order is the order researchers read it in)."""
    pk, pair_pk, kind, question, answer_standard, answer_local, status = item
    project = context.project
    review = context.review
    pair = context.pairs[pair_pk]
    record: dict[str, Any] = {
        "id": item_id(project, pk),
        "kind": kind,
        "split": pair.split,
        "pair_id": pair.pair_id,
        "local_language": project.local_language,
        "standard_language": project.standard_language,
        "local_wiki": project.local_wiki,
        "standard_wiki": project.standard_wiki,
        "local_title": pair.local_title,
        "standard_title": pair.standard_title,
        "local_url": pair.local_url,
        "standard_url": pair.standard_url,
        "question": question,
        "answer_standard": answer_standard,
        "answer_local": answer_local,
        "evidence": [
            {"document": document, "start": start, "end": end, "text": text, "match": match}
            for document, start, end, text, match in context.spans.get(pk, ())
        ],
        "verification": review.item_verification(pk),
        "topic": pair.topic,
        "region": pair.region,
        "region_detail": pair.region_detail,  # the finer region (Hong Kong, Guangdong) the region folds
        "review_outcome": status,
        "local_knowledge_check": _local_knowledge(context.local_checks.get(pk), question, answer_standard),
        "revisions": context.revisions.get(pk, 0),
        "reviews": review.reviews.get(pk, 0),
        "local_lead": pair.local_lead,
        "standard_lead": pair.standard_lead,
    }
    if kind == QAItem.Kind.DOCUMENT:
        # The document its evidence points into, so the line stays self-contained.
        record["local_text"] = context.local_texts.get(pair_pk, "")
    return record


def _local_knowledge(check: tuple[str, str, str] | None, question: str, answer: str) -> str | None:
    """The outcome of the item's local-knowledge check when it checked this very text (else null)."""
    if check is None:
        return None
    result, checked_question, checked_answer = check
    return result if result and (checked_question, checked_answer) == (question, answer) else None


def release_items(project: Project, statuses: Iterable[str]) -> ItemQuerySet:
    return QAItem.objects.alive().filter(project=project, status__in=list(statuses))


def streamed_chunks(queryset: Any, chunk_size: int) -> Iterator[list[tuple]]:
    """A values_list queryset's rows in lists of `chunk_size`, read through a server-side cursor (`iterator()`)."""
    rows = queryset.iterator(chunk_size=chunk_size)
    while chunk := list(islice(rows, chunk_size)):
        yield chunk


@dataclass
class ItemChunk:
    """One chunk of the release's items as read from the database: its rows and what their records need."""

    rows: list[tuple]
    context: ItemContext

    def records(self) -> list[dict[str, Any]]:
        return [item_record(row, self.context) for row in self.rows]


def iter_item_chunks(
    project: Project, *, statuses: Iterable[str], splitter: Splitter, chunk_size: int = CHUNK
) -> Iterator[ItemChunk]:
    """The release's items, one chunk at a time, in (pair, item) order: the database's part of the records.

    Each chunk's spans, pairs, revision counts and review data come in one query
    each, selected by the chunk's ids (`AnyOf`), through the tables' own indexes.
    Rows are kept as tuples; the records are made by `ItemChunk.records`,
    so a build can read the next chunk (waiting on PostgreSQL) while it makes these.
    """
    statuses = list(statuses)
    present = ReviewData.present(project)
    checks_present = LocalCheck.objects.filter(project=project, status=LocalCheck.Status.DONE).exists()
    items = release_items(project, statuses).order_by("pair_id", "id").values_list(*ITEM_COLUMNS)
    for chunk in streamed_chunks(items, chunk_size):
        item_pks = [row[0] for row in chunk]
        pair_pks = list(dict.fromkeys(row[1] for row in chunk))
        document_pairs = list({row[1] for row in chunk if row[2] == QAItem.Kind.DOCUMENT})
        spans: dict[int, list[tuple]] = defaultdict(list)
        for span in (
            EvidenceSpan.objects.filter(AnyOf(F("item_id"), item_pks))
            .order_by("item_id", "position", "id")
            .values_list("item_id", "document", "start", "end", "text", "match")
        ):
            spans[span[0]].append(span[1:])
        pairs = PagePair.objects.filter(AnyOf(F("id"), pair_pks)).values_list(*PAIR_COLUMNS)
        review = ReviewData.load(item_pks, pair_pks, present)
        context = ItemContext(
            project=project,
            pairs={row[0]: pair_facts(project, row, splitter, review) for row in pairs},
            local_texts=dict(PagePair.objects.filter(AnyOf(F("id"), document_pairs)).values_list("id", "local_text"))
            if document_pairs
            else {},
            spans=spans,
            revisions=_counts(QAItemRevision.objects.filter(AnyOf(F("item_id"), item_pks))),
            review=review,
            local_checks={
                item_pk: (result, question, answer)
                for item_pk, result, question, answer in LocalCheck.objects.filter(
                    AnyOf(F("item_id"), item_pks), status=LocalCheck.Status.DONE
                ).values_list("item_id", "result", "question", "answer")
            }
            if checks_present
            else {},
        )
        yield ItemChunk(chunk, context)


def iter_pair_records(
    project: Project, *, statuses: Iterable[str], splitter: Splitter, chunk_size: int = CHUNK
) -> Iterator[list[dict[str, Any]]]:
    """Every pair the project considered, with its screening decision, exclusion reason and released item counts."""
    rows = (
        PagePair.objects.filter(project=project)
        .order_by("id")
        .values_list(
            "id",
            "local_title",
            "standard_title",
            "local_url",
            "standard_url",
            "local_lead_length",
            "standard_lead_length",
            "local_text_length",
            "standard_text_length",
            "status",
            "screening_decision",
        )
    )
    statuses = list(statuses)
    present = ReviewData.present(project)
    for chunk in streamed_chunks(rows, chunk_size):
        pks = [row[0] for row in chunk]
        excluded_pks = [row[0] for row in chunk if row[9] == PagePair.Status.EXCLUDED]
        notes: dict[int, str] = {}
        if excluded_pks:
            for pair_pk, note in (
                Screening.objects.filter(AnyOf(F("pair_id"), excluded_pks))
                .order_by("pair_id", "created_at", "id")
                .values_list("pair_id", "note")
            ):
                notes[pair_pk] = note  # the latest decision's note
        counts: dict[int, dict[str, int]] = defaultdict(dict)
        for pair_pk, kind, n in (
            QAItem.objects.alive()
            .filter(AnyOf(F("pair_id"), pks), status__in=statuses)
            .values("pair_id", "kind")
            .annotate(n=Count("id"))
            .values_list("pair_id", "kind", "n")
        ):
            counts[pair_pk][kind] = n
        review = ReviewData.load([], pks, present)
        records = []
        for pk, local_title, standard_title, local_url, standard_url, ll, sl, lt, st, status, decision in chunk:
            labels = review.pair_labels(pk)
            excluded = status == PagePair.Status.EXCLUDED
            records.append(
                {
                    "id": pair_id(project, pk),
                    "split": splitter(pk),
                    "local_language": project.local_language,
                    "standard_language": project.standard_language,
                    "local_wiki": project.local_wiki,
                    "standard_wiki": project.standard_wiki,
                    "local_title": local_title,
                    "standard_title": standard_title,
                    "local_url": local_url,
                    "standard_url": standard_url,
                    "local_lead_length": ll,
                    "standard_lead_length": sl,
                    "local_text_length": lt,
                    "standard_text_length": st,
                    "local_heavy": is_local_heavy(ll, sl, lt, st),
                    "status": status,
                    "screening_decision": decision or None,
                    "exclusion_reason": decision if excluded else None,
                    "exclusion_note": notes.get(pk, "") if excluded else None,
                    "topic": labels.get("topic"),
                    "region": labels.get("region"),
                    "region_detail": labels.get("region_detail") or None,
                    "lead_qas": counts[pk].get(QAItem.Kind.LEAD, 0),
                    "document_qas": counts[pk].get(QAItem.Kind.DOCUMENT, 0),
                }
            )
        yield records


T = TypeVar("T")
_DONE = object()


def _own_connection_sees_the_data(snapshot: Snapshot | None = None) -> bool:
    """Whether a thread with a database connection of its own would see what this one sees.

    It sees only committed rows: inside a transaction (tests, a caller's atomic block) the
    work stays in this thread. Within a build's snapshot, only a PostgreSQL snapshot can be
    joined by another connection (common.snapshot).
    """
    if snapshot is not None:
        return snapshot.shareable
    return not connection.in_atomic_block


def _reading(snapshot: Snapshot | None) -> AbstractContextManager[None]:
    return snapshot.join() if snapshot is not None else nullcontext()


def in_background(work: Callable[[], T], snapshot: Snapshot | None = None) -> Callable[[], T]:
    """Start `work` in a thread with its own database connection; the returned function waits for its result.

    The release's statistics and agreement figures are computed while its files are written
    (in the build's `snapshot`, when given).
    """
    if not _own_connection_sees_the_data(snapshot):
        result = work()
        return lambda: result
    outcome: dict[str, Any] = {}

    def run() -> None:
        try:
            with _reading(snapshot):
                outcome["result"] = work()
        except BaseException as error:  # raised in the caller by the waiting function
            outcome["error"] = error
        finally:
            connection.close()  # this thread's own connection

    thread = threading.Thread(target=run, name="release-figures", daemon=True)
    thread.start()

    def wait() -> T:
        thread.join()
        if "error" in outcome:
            raise outcome["error"]
        return outcome["result"]

    return wait


def read_ahead(chunks: Iterator[Any], depth: int = 2, snapshot: Snapshot | None = None) -> Iterator[Any]:
    """The chunks of `chunks`, read by a thread of their own while the caller writes the previous ones.

    PostgreSQL prepares the next chunk (its queries run on the other core) while
    this thread encodes; the queue is bounded, so memory holds `depth` chunks more.
    The reading thread has a database connection of its own (see
    `_own_connection_sees_the_data` for when the chunks are read here instead); within a
    build, it reads in the build's `snapshot`.
    """
    if not _own_connection_sees_the_data(snapshot):
        yield from chunks
        return
    handoff: queue.Queue[Any] = queue.Queue(maxsize=depth)
    stop = threading.Event()

    def read() -> None:
        try:
            with _reading(snapshot):
                for chunk in chunks:
                    while not stop.is_set():
                        try:
                            handoff.put(chunk, timeout=0.1)
                            break
                        except queue.Full:
                            continue
                    if stop.is_set():
                        return
            handoff.put(_DONE)
        except BaseException as error:  # handed to the caller, who raises it
            handoff.put(error)
        finally:
            connection.close()  # this thread's own connection

    reader = threading.Thread(target=read, name="release-reader", daemon=True)
    reader.start()
    try:
        while True:
            chunk = handoff.get()
            if chunk is _DONE:
                return
            if isinstance(chunk, BaseException):
                raise chunk
            yield chunk
    finally:
        stop.set()
        reader.join()


def is_local_heavy(local_lead: int, standard_lead: int, local_text: int | None, standard_text: int | None) -> bool:
    """Both the local lead and the local full text are longer; a full text of unknown length does not count against."""
    if local_lead <= standard_lead:
        return False
    if local_text is None or standard_text is None:
        return True
    return local_text > standard_text
