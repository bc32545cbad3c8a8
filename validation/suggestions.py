"""A model as a collaborator in validation projects (services): suggestions for validators, drafted seed queries.

Suggestions, not verdicts. A coordinator starts a `ModelJob` (a Celery job, common/jobs.py) that asks one of the
project's model endpoints (endpoints/, with its retries, concurrency limit, cache and call record) to pre-annotate
each item waiting for validation: is the question good, an edited answer, is it about the location. Each reply
becomes a `Suggestion` (or, when the call failed or the reply is not the JSON asked for, a failed one saying why).
Validators see the latest suggestion beside their own controls and take it with one key or a button, change it,
or answer without it; `SuggestionUse` records which, per field (`suggestion_uses_record`, called by
`validation_submit`). A suggestion is never part of a judgment or a release by itself: only what a person saved
is, and the model-edited answer enters a release only as a validator's own edit.

Drafted seed queries. A `ModelJob` of purpose `seed_drafts` asks the endpoint, per location and topic, for
search queries in the location's language; each becomes a `SeedDraft` that a coordinator accepts (as written or
edited) or rejects. Only an accepted draft becomes a `SeedQuery`, so no search ever runs with an unreviewed one.

A job that resumes after its worker died skips what it stored and asks the rest again; replies paid for before
come from the endpoint's cache.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from django.contrib.auth.models import User
from django.db import IntegrityError, transaction
from django.db.models import F, QuerySet
from django.utils import timezone

from annotation.languages import get_language
from annotation.lifecycle import MAX_TEXT_FIELD
from annotation.models import Project, QAItem
from common.errors import InvalidInput, InvalidState
from common.jobs import JobLost, JobRun, job_claim, job_enqueue, pause_between_steps
from endpoints.models import Endpoint
from endpoints.replies import NotUnderstood, reply_object, reply_start
from endpoints.services import Completion, ModelRequest, endpoint_complete_many
from validation.models import (
    QUESTION_BAD_REASONS,
    Location,
    ModelJob,
    SeedDraft,
    SeedQuery,
    Suggestion,
    SuggestionOutcome,
    SuggestionUse,
    Task,
    ValidationItem,
    ValidationJudgment,
)
from validation.services.projects import validation_settings
from validation.services.seeds import check_locations, seed_queries_add
from validation.text import normalise

MAX_ITEMS = 20_000
MAX_TOPICS = 30
MAX_DRAFTS_PER_PAIR = 20
REPLY_KEPT = 4000  # characters of a reply kept on a suggestion
REASONS = dict(QUESTION_BAD_REASONS)
Purpose = ModelJob.Purpose
Field = SuggestionUse.Field


# Suggestions for validators


SUGGEST_SYSTEM = (
    "You help native speakers validate question-answer pairs collected from search engines. You suggest; people "
    "decide. Reply with one JSON object and nothing else."
)


def suggestion_prompt(vitem: ValidationItem, *, tasks: set[str], location: str) -> list[dict[str, str]]:
    """The chat messages asking for one item's suggestion (only the fields of the project's tasks)."""
    item = vitem.item
    language = get_language(vitem.text_language).name
    wanted = []
    if Task.QUESTION in tasks:
        reasons = ", ".join(f'"{code}"' for code in REASONS)
        wanted.append(
            '"question_good": true if the question is fact-seeking, clear and answerable, else false; '
            f'"question_reason": when false, one of {reasons}, else ""'
        )
    if Task.ANSWER_EDIT in tasks:
        wanted.append(
            '"edited_answer": the answer corrected and completed using only what the source page says, in the '
            "answer's language (the answer unchanged if it needs no edit)"
        )
    if Task.LOCATION in tasks:
        wanted.append(f'"location_relevant": true if the question is about {location or "the location"}, else false')
    sources = ", ".join(vitem.source_urls) or "none given"
    user = (
        f"Language: {language}\nLocation: {location or 'not given'}\nQuestion: {item.question}\n"
        f"Answer: {item.answer_standard}\nSource: {sources}\n\nReply with a JSON object with these keys: "
        + "; ".join(wanted)
        + "."
    )
    return [{"role": "system", "content": SUGGEST_SYSTEM}, {"role": "user", "content": user}]


@dataclass(frozen=True)
class Suggested:
    question_good: bool | None
    question_reason: str
    answer: str
    location_relevant: bool | None


def suggestion_read(text: str, *, tasks: set[str], answer: str) -> Suggested:
    """A suggestion from a reply, every asked field checked; NotUnderstood names the first one at fault."""
    data = reply_object(text)
    good: bool | None = None
    reason = ""
    edited = ""
    relevant: bool | None = None
    if Task.QUESTION in tasks:
        good = data.get("question_good")
        if not isinstance(good, bool):
            raise NotUnderstood("question_good is not true or false")
        reason = data.get("question_reason") or ""
        if not isinstance(reason, str):
            raise NotUnderstood("question_reason is not a text")
        reason = reason.strip() if not good and reason.strip() in REASONS else ""  # an unknown reason: none
    if Task.ANSWER_EDIT in tasks:
        given = data.get("edited_answer")
        if not isinstance(given, str) or not given.strip():
            raise NotUnderstood("edited_answer is not a text")
        edited = given.strip()[:MAX_TEXT_FIELD]
        if edited == answer.strip():
            edited = ""  # no edit suggested
    if Task.LOCATION in tasks:
        relevant = data.get("location_relevant")
        if not isinstance(relevant, bool):
            raise NotUnderstood("location_relevant is not true or false")
    return Suggested(good, reason, edited, relevant)


SUGGESTED_TASKS = {Task.QUESTION, Task.ANSWER_EDIT, Task.LOCATION}


def _endpoint_of(project: Project, endpoint_id: int | None) -> Endpoint:
    endpoint = Endpoint.objects.filter(project=project, pk=endpoint_id).first() if endpoint_id else None
    if endpoint is None:
        raise InvalidInput("endpoint: choose one of the project's model endpoints.", field="endpoint")
    endpoint.project = project
    return endpoint


def _items_to_suggest(project: Project, *, redo: bool) -> QuerySet[QAItem]:
    """Items waiting for validation; without `redo`, only those with no suggestion yet."""
    items = QAItem.objects.filter(project=project, deleted_at__isnull=True, status=QAItem.Status.SUBMITTED)
    if not redo:
        items = items.exclude(model_suggestions__ok=True)
    return items.order_by("pk")


def _start(
    project: Project, purpose: str, endpoint: Endpoint, user: User | None, *, enqueue: bool = True, **fields: Any
) -> ModelJob:
    """The job's row, and (with `enqueue`) the worker's task; without it the caller runs it (the commands)."""
    if project.kind != Project.Kind.VALIDATION:
        raise InvalidState("Only a validation project asks a model for this.", field="project")
    with transaction.atomic():
        Project.objects.select_for_update().filter(pk=project.pk).first()  # one start at a time per project
        if ModelJob.objects.filter(project=project, purpose=purpose, status__in=ModelJob.ACTIVE).exists():
            raise InvalidState("A job of this kind is running in this project: wait for it to finish.")
        job = ModelJob.objects.create(
            project=project,
            purpose=purpose,
            endpoint=endpoint,
            endpoint_name=endpoint.name,
            model=endpoint.model,
            created_by=user,
            **fields,
        )
        if enqueue:
            job_enqueue("model_job", job.pk)
    return job


def suggestions_start(
    *, project: Project, endpoint_id: int | None, user: User | None, redo: bool = False, enqueue: bool = True
) -> ModelJob:
    """Queue a job asking the endpoint for a suggestion on every item waiting for validation (without `redo`:
    those that have none yet)."""
    endpoint = _endpoint_of(project, endpoint_id)
    tasks = set(validation_settings(project).tasks) & SUGGESTED_TASKS
    if not tasks:
        raise InvalidState(
            "The project asks none of the tasks a model suggests for (question, answer edit, location).",
            field="tasks",
        )
    total = _items_to_suggest(project, redo=redo).count()
    if not total:
        raise InvalidState("No item is waiting for a suggestion.", field="items")
    return _start(
        project,
        Purpose.SUGGEST,
        endpoint,
        user,
        enqueue=enqueue,
        options={"redo": bool(redo)},
        progress_total=min(total, MAX_ITEMS),
    )


def item_suggestion(item: QAItem | int) -> Suggestion | None:
    """The item's latest suggestion the model made (a failed request suggests nothing)."""
    item_id = item if isinstance(item, int) else item.pk
    return Suggestion.objects.filter(item_id=item_id, ok=True).order_by("-id").first()


def _suggest(run: JobRun, job: ModelJob, endpoint: Endpoint) -> None:
    project = job.project
    settings = validation_settings(project)
    tasks = set(settings.tasks) & SUGGESTED_TASKS
    done = set(Suggestion.objects.filter(job=job).values_list("item_id", flat=True))
    items = [
        vitem
        for vitem in ValidationItem.objects.filter(
            item__in=_items_to_suggest(project, redo=bool(job.options.get("redo")))
        )
        .select_related("item", "project")
        .order_by("item_id")[:MAX_ITEMS]
        if vitem.item_id not in done
    ]
    run.beat(force=True, stage=f"Asking {job.endpoint_name} about {len(items):,} items")

    def store(index: int, completion: Completion) -> None:
        vitem = items[index]
        suggestion = Suggestion(
            project_id=job.project_id, item_id=vitem.item_id, job=job, call_id=completion.call_id or None
        )
        if not completion.ok:
            suggestion.error = f"{completion.error_kind}: {completion.error}"[:2000]
        else:
            suggestion.reply = completion.text[:REPLY_KEPT]
            try:
                read = suggestion_read(completion.text, tasks=tasks, answer=vitem.item.answer_standard)
            except NotUnderstood as problem:
                suggestion.error = f"Reply not understood ({problem}): {reply_start(completion.text)}"
            else:
                suggestion.ok = True
                suggestion.question_good, suggestion.question_reason = read.question_good, read.question_reason
                suggestion.answer, suggestion.location_relevant = read.answer, read.location_relevant
        with transaction.atomic():
            try:
                with transaction.atomic():
                    suggestion.save()
            except IntegrityError:
                return  # stored by a run that held the job before
            run.beat(
                force=True,
                progress_done=F("progress_done") + 1,
                answered=F("answered") + (1 if suggestion.ok else 0),
                failed=F("failed") + (0 if suggestion.ok else 1),
            )
        pause_between_steps()

    location = settings.location
    endpoint_complete_many(
        endpoint=endpoint,
        purpose="suggestion",
        requests=[
            ModelRequest(messages=suggestion_prompt(vitem, tasks=tasks, location=vitem.location or location))
            for vitem in items
        ],
        user=job.created_by,
        on_result=store,
    )


# What a validator did with a suggestion


def _person_value(field: str, fields: Mapping[str, Any], answer: str | None) -> Any:
    if field == Field.QUESTION:
        good = fields.get("question_good")
        return None if good is None else (good, fields.get("question_reason") or "" if not good else "")
    if field == Field.LOCATION:
        return fields.get("location_relevant")
    return None if answer is None else answer.strip()


def _suggested_value(field: str, suggestion: Suggestion) -> Any:
    if field == Field.QUESTION:
        good = suggestion.question_good
        return None if good is None else (good, suggestion.question_reason if not good else "")
    if field == Field.LOCATION:
        return suggestion.location_relevant
    return suggestion.answer.strip() or None


def suggestion_uses_record(
    *,
    judgment: ValidationJudgment,
    suggestion: Suggestion | None,
    taken: Sequence[str],
    fields: Mapping[str, Any],
    answer: str | None,
) -> list[SuggestionUse]:
    """Per suggested field: accepted (taken, and saved as suggested), changed (taken, then changed before saving)
    or ignored (never taken). `answer` is the answer as the validator left it (None: the answer task is off).
    Called inside the judgment's transaction."""
    if suggestion is None:
        return []
    uses = []
    for field in Field.values:
        suggested = _suggested_value(field, suggestion)
        person = _person_value(field, fields, answer)
        if suggested is None or person is None:
            continue  # nothing suggested, or the task is off
        if field not in taken:
            outcome = SuggestionOutcome.IGNORED
        else:
            outcome = SuggestionOutcome.ACCEPTED if person == suggested else SuggestionOutcome.CHANGED
        uses.append(
            SuggestionUse(
                project_id=judgment.project_id, suggestion=suggestion, judgment=judgment, field=field, outcome=outcome
            )
        )
    SuggestionUse.objects.bulk_create(uses)
    return uses


def suggestion_for_judgment(item: QAItem, data: Mapping[str, Any]) -> tuple[Suggestion | None, list[str]]:
    """The suggestion a submitted judgment was shown (its id in `suggestion`) and the fields the validator took
    (`suggestion_taken`); an id that is not the item's is refused."""
    raw_id = data.get("suggestion")
    if raw_id in (None, ""):
        return None, []
    try:
        suggestion = Suggestion.objects.filter(item=item, ok=True, pk=int(raw_id)).first()
    except (TypeError, ValueError):
        suggestion = None
    if suggestion is None:
        raise InvalidInput("suggestion: not a suggestion of this item.", field="suggestion")
    taken = data.get("suggestion_taken") or []
    if isinstance(taken, str):
        taken = [part for part in taken.split(",") if part]
    if not isinstance(taken, list) or any(field not in Field.values for field in taken):
        raise InvalidInput(f"suggestion_taken: a list of {', '.join(Field.values)}.", field="suggestion_taken")
    return suggestion, list(taken)


# Drafted seed queries


DRAFT_SYSTEM = (
    "You draft search-engine queries that people of a place would type to find local knowledge. Reply with one "
    "JSON object and nothing else."
)


def draft_prompt(*, location: str, topic: str, language: str, count: int) -> list[dict[str, str]]:
    name = get_language(language).name
    user = (
        f"Write {count} different search queries that someone in {location} would type into a search engine to "
        f"learn about {topic} there. Write them in {name}, as people of {location} write it, each a short "
        f'question or phrase naming the place where that helps. Reply as {{"queries": ["...", "..."]}}.'
    )
    return [{"role": "system", "content": DRAFT_SYSTEM}, {"role": "user", "content": user}]


def drafts_read(text: str, *, count: int) -> list[str]:
    data = reply_object(text)
    queries = data.get("queries")
    if not isinstance(queries, list) or not queries:
        raise NotUnderstood("queries is not a list of texts")
    cleaned = list(dict.fromkeys(" ".join(q.split()) for q in queries if isinstance(q, str) and q.strip()))
    if not cleaned:
        raise NotUnderstood("queries holds no text")
    return [query[:MAX_TEXT_FIELD] for query in cleaned[:count]]


def seed_drafts_start(
    *,
    project: Project,
    endpoint_id: int | None,
    locations: Sequence[str],
    topics: Sequence[str],
    count: int,
    user: User | None,
    enqueue: bool = True,
) -> ModelJob:
    """Queue a job drafting `count` seed queries per location and topic, in each location's language."""
    endpoint = _endpoint_of(project, endpoint_id)
    places = check_locations(locations)
    subjects = list(dict.fromkeys(topic.strip() for topic in topics if topic.strip()))
    if not subjects:
        raise InvalidInput("topics: give at least one topic.", field="topics")
    if len(subjects) > MAX_TOPICS or any(len(topic) > 100 for topic in subjects):
        raise InvalidInput(f"topics: at most {MAX_TOPICS}, each at most 100 characters.", field="topics")
    if not 1 <= int(count) <= MAX_DRAFTS_PER_PAIR:
        raise InvalidInput(f"count: 1 to {MAX_DRAFTS_PER_PAIR} queries per location and topic.", field="count")
    options = {"locations": places, "topics": subjects, "count": int(count)}
    return _start(
        project,
        Purpose.SEED_DRAFTS,
        endpoint,
        user,
        enqueue=enqueue,
        options=options,
        progress_total=len(places) * len(subjects),
    )


def location_language(project: Project, location: str) -> str:
    known = Location.objects.filter(project=project, name=location).values_list("language", flat=True).first()
    return known or project.standard_language


def _draft(run: JobRun, job: ModelJob, endpoint: Endpoint) -> None:
    project = job.project
    count = int(job.options["count"])
    done = set(SeedDraft.objects.filter(job=job).values_list("location", "topic"))
    pairs = [
        (location, topic, location_language(project, location))
        for location in job.options["locations"]
        for topic in job.options["topics"]
        if (location, topic) not in done
    ]
    failures: list[dict[str, str]] = []
    run.beat(force=True, stage=f"Asking {job.endpoint_name} for {len(pairs) * count:,} queries", failures=failures)

    def store(index: int, completion: Completion) -> None:
        location, topic, language = pairs[index]
        what = f"{location} · {topic}"
        queries: list[str] = []
        if not completion.ok:
            failures.append({"what": what, "error": f"{completion.error_kind}: {completion.error}"[:1000]})
        else:
            try:
                queries = drafts_read(completion.text, count=count)
            except NotUnderstood as problem:
                failures.append(
                    {"what": what, "error": f"Reply not understood ({problem}): {reply_start(completion.text)}"}
                )
        with transaction.atomic():
            SeedDraft.objects.bulk_create(
                SeedDraft(
                    project=project, job=job, location=location, topic=topic, language=language, drafted=q, query=q
                )
                for q in queries
            )
            run.beat(
                force=True,
                progress_done=F("progress_done") + 1,
                answered=F("answered") + (1 if queries else 0),
                failed=F("failed") + (0 if queries else 1),
                failures=list(failures),
            )
        pause_between_steps()

    endpoint_complete_many(
        endpoint=endpoint,
        purpose="seed_draft",
        requests=[
            ModelRequest(messages=draft_prompt(location=loc, topic=topic, language=lang, count=count))
            for loc, topic, lang in pairs
        ],
        user=job.created_by,
        on_result=store,
    )


def seed_draft_review(*, draft: SeedDraft, user: User | None, action: str, query: str | None = None) -> SeedDraft:
    """A coordinator's decision on a draft: `accept` (as drafted, or as `query` says) adds it to the seed
    queries (a duplicate of one already stored is not added twice, and the draft says so); `reject` keeps it
    out. A reviewed draft is not reviewed again."""
    if action not in ("accept", "reject"):
        raise InvalidInput("action: accept or reject.", field="action")
    text = " ".join((query if query is not None else draft.query).split())
    if action == "accept" and (not text or len(text) > MAX_TEXT_FIELD):
        raise InvalidInput(f"query: 1 to {MAX_TEXT_FIELD} characters.", field="query")
    now = timezone.now()
    with transaction.atomic():
        status = SeedDraft.Status.ACCEPTED if action == "accept" else SeedDraft.Status.REJECTED
        if not SeedDraft.objects.filter(pk=draft.pk, status=SeedDraft.Status.DRAFT).update(
            status=status, query=text or draft.query, reviewed_by=user, reviewed_at=now
        ):
            raise InvalidState("This draft was reviewed already.", field="status")
        if action == "accept":
            report = seed_queries_add(project=draft.project, rows=[(draft.topic, text, draft.location, "")], user=user)
            seed = SeedQuery.objects.filter(project=draft.project, normalised=normalise(text)).first()
            note = ""
            if not report.added:
                note = (
                    "Already a seed query." if seed is not None
                    else "Not added: a near-duplicate of a seed query of this location."
                )  # fmt: skip
            SeedDraft.objects.filter(pk=draft.pk).update(seed=seed, note=note)
    draft.refresh_from_db()
    return draft


def seed_draft_counts(project: Project) -> dict[str, int]:
    counts = {status: 0 for status in SeedDraft.Status.values}
    for status in SeedDraft.objects.filter(project=project).values_list("status", flat=True):
        counts[status] += 1
    return counts


# The job


def model_job_run(*, job_id: int) -> ModelJob | None:
    """Run a model job to its end (every request answered, failed or not understood, each recorded); None if
    another worker holds it or it has finished."""
    run = job_claim(ModelJob, job_id)
    if run is None:
        return None
    job = ModelJob.objects.select_related("project", "created_by").get(pk=job_id)
    endpoint = Endpoint.objects.filter(pk=job.endpoint_id).first() if job.endpoint_id else None
    try:
        if endpoint is None:
            run.fail(f"The endpoint {job.endpoint_name!r} was deleted; start again with another one.")
        else:
            endpoint.project = job.project
            (_suggest if job.purpose == Purpose.SUGGEST else _draft)(run, job, endpoint)
            job.refresh_from_db()
            what = "items" if job.purpose == Purpose.SUGGEST else "locations and topics"
            stage = f"Finished: {job.answered:,} {what} answered"
            if job.failed:
                stage += f", {job.failed:,} failed or not understood (see each for why)"
            run.finish(stage=stage + ".")
    except JobLost:
        pass  # taken over by another run: that run goes on
    except Exception as error:
        run.fail(error)
        raise
    job.refresh_from_db()
    return job


def job_failures_words(job: ModelJob) -> str:
    """The job's failures as one line each (the page and the command show them)."""
    return "\n".join(f"{entry.get('what')}: {entry.get('error')}" for entry in job.failures or [])
