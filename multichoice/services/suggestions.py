"""A model's suggested translations of trivia items: suggestions beside the translator's own fields, never a
translation by themselves.

A coordinator starts a `TranslationSuggestionJob` (a Celery job through the project's model endpoint, endpoints/):
each item open for translation gets a `TranslationSuggestion` (or a failed one saying why: the call failed, or
the reply is not the JSON asked for, or it does not translate every candidate). The translator takes it with one
key (A) or a button, changes it, or translates alone; `translation_submit` records which on the suggestion. What
a release holds is what the translator saved.
"""

from __future__ import annotations

from typing import Any

from django.contrib.auth.models import User
from django.db import IntegrityError, transaction
from django.db.models import F, QuerySet

from annotation.languages import get_language
from annotation.models import Project
from common.errors import InvalidInput, InvalidState
from common.jobs import JobLost, job_claim, job_enqueue, pause_between_steps
from endpoints.models import Endpoint
from endpoints.replies import NotUnderstood, reply_object, reply_start
from endpoints.services import Completion, ModelRequest, endpoint_complete_many
from multichoice.models import TranslationSuggestion, TranslationSuggestionJob, TriviaItem
from multichoice.services.items import MAX_TEXT, Status

MAX_ITEMS = 20_000
SYSTEM = "You translate multiple-choice trivia items faithfully. Reply with one JSON object and nothing else."


def _open_items(project: Project) -> QuerySet[TriviaItem]:
    """Accepted items not yet translated, without a suggestion."""
    return (
        TriviaItem.objects.filter(
            project=project,
            item__status=Status.ACCEPTED,
            item__deleted_at__isnull=True,
            translation_status__in=[TriviaItem.Translation.OPEN, TriviaItem.Translation.CLAIMED],
        )
        .exclude(suggestions__ok=True)
        .order_by("pk")
    )


def translation_suggestions_start(
    *, project: Project, endpoint_id: int | None, user: User | None
) -> TranslationSuggestionJob:
    """Queue a job asking the endpoint for a suggested translation of every item open for translation."""
    if project.kind != Project.Kind.TRIVIA:
        raise InvalidState("Only a trivia project has translations to suggest.", field="project")
    endpoint = Endpoint.objects.filter(project=project, pk=endpoint_id).first() if endpoint_id else None
    if endpoint is None:
        raise InvalidInput("endpoint: choose one of the project's model endpoints.", field="endpoint")
    total = _open_items(project).count()
    if not total:
        raise InvalidState("No item open for translation is waiting for a suggestion.", field="items")
    with transaction.atomic():
        Project.objects.select_for_update().filter(pk=project.pk).first()
        if TranslationSuggestionJob.objects.filter(project=project, status__in=TranslationSuggestionJob.ACTIVE):
            raise InvalidState("A suggestion job of this project is running: wait for it to finish.")
        job = TranslationSuggestionJob.objects.create(
            project=project,
            endpoint=endpoint,
            endpoint_name=endpoint.name,
            model=endpoint.model,
            created_by=user,
            progress_total=min(total, MAX_ITEMS),
        )
        job_enqueue("translation_suggestions", job.pk)
    return job


def translation_prompt(item: TriviaItem, project: Project) -> list[dict[str, str]]:
    source, target = get_language(project.standard_language).name, get_language(project.local_language).name
    candidates = "\n".join(f"{index}. {text}" for index, text in enumerate(item.candidates))
    user = (
        f"Translate this trivia item from {source} into {target}. Keep the candidates in the same order.\n"
        f"Question: {item.question}\nCandidates:\n{candidates}\n\n"
        'Reply as {"question": "...", "candidates": ["...", ...]}.'
    )
    return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": user}]


def translation_read(text: str, *, candidates: int) -> tuple[str, list[str]]:
    data = reply_object(text)
    question, targets = data.get("question"), data.get("candidates")
    if not isinstance(question, str) or not question.strip():
        raise NotUnderstood("question is not a text")
    if not isinstance(targets, list) or not all(isinstance(t, str) and t.strip() for t in targets):
        raise NotUnderstood("candidates is not a list of texts")
    if len(targets) != candidates:
        raise NotUnderstood(f"{len(targets)} candidates translated, not {candidates}")
    return question.strip()[:MAX_TEXT], [t.strip()[:MAX_TEXT] for t in targets]


def translation_suggestions_run(*, job_id: int) -> TranslationSuggestionJob | None:
    """Ask for every open item's suggestion (each stored as it arrives); None if another worker holds the job."""
    run = job_claim(TranslationSuggestionJob, job_id)
    if run is None:
        return None
    job = TranslationSuggestionJob.objects.select_related("project", "created_by").get(pk=job_id)
    endpoint = Endpoint.objects.filter(pk=job.endpoint_id).first() if job.endpoint_id else None
    try:
        if endpoint is None:
            run.fail(f"The endpoint {job.endpoint_name!r} was deleted; start again with another one.")
        else:
            endpoint.project = job.project
            _ask(run, job, endpoint)
            job.refresh_from_db()
            stage = f"Finished: {job.answered:,} items answered"
            if job.failed:
                stage += f", {job.failed:,} failed or not understood (see each for why)"
            run.finish(stage=stage + ".")
    except JobLost:
        pass
    except Exception as error:
        run.fail(error)
        raise
    job.refresh_from_db()
    return job


def _ask(run: Any, job: TranslationSuggestionJob, endpoint: Endpoint) -> None:
    done = set(TranslationSuggestion.objects.filter(job=job).values_list("trivia_id", flat=True))
    items = [i for i in _open_items(job.project).select_related("item")[:MAX_ITEMS] if i.pk not in done]
    run.beat(force=True, stage=f"Asking {job.endpoint_name} about {len(items):,} items")

    def store(index: int, completion: Completion) -> None:
        item = items[index]
        suggestion = TranslationSuggestion(trivia=item, job=job, call_id=completion.call_id or None)
        if not completion.ok:
            suggestion.error = f"{completion.error_kind}: {completion.error}"[:2000]
        else:
            suggestion.reply = completion.text[:4000]
            try:
                suggestion.target_question, suggestion.target_candidates = translation_read(
                    completion.text, candidates=len(item.candidates)
                )
                suggestion.ok = True
            except NotUnderstood as problem:
                suggestion.error = f"Reply not understood ({problem}): {reply_start(completion.text)}"
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

    endpoint_complete_many(
        endpoint=endpoint,
        purpose="translation_suggestion",
        requests=[ModelRequest(messages=translation_prompt(item, job.project)) for item in items],
        user=job.created_by,
        on_result=store,
    )


def translation_suggestion_latest(item: TriviaItem) -> TranslationSuggestion | None:
    return TranslationSuggestion.objects.filter(trivia=item, ok=True).order_by("-id").first()


def translation_suggestion_outcome_record(
    *, item: TriviaItem, suggestion_id: int | None, taken: bool, question: str, candidates: list[str]
) -> None:
    """What the translator did with the suggestion they were shown: accepted (taken, saved as suggested),
    changed (taken, then changed) or ignored (never taken). Inside the submit's transaction."""
    if suggestion_id is None:
        return
    suggestion = TranslationSuggestion.objects.filter(trivia=item, ok=True, pk=suggestion_id).first()
    if suggestion is None:
        raise InvalidInput("suggestion: not a suggestion of this item.", field="suggestion")
    same = (suggestion.target_question, suggestion.target_candidates) == (question, candidates)
    outcome = TranslationSuggestion.Outcome.IGNORED
    if taken:
        outcome = TranslationSuggestion.Outcome.ACCEPTED if same else TranslationSuggestion.Outcome.CHANGED
    TranslationSuggestion.objects.filter(pk=suggestion.pk).update(outcome=outcome)


def translation_suggestion_outcomes(project: Project) -> dict[str, int]:
    """What translators did with the suggestions they saved with: accepted, changed, ignored."""
    counts = {outcome: 0 for outcome in TranslationSuggestion.Outcome.values}
    rows = TranslationSuggestion.objects.filter(trivia__project=project).exclude(outcome="")
    for outcome in rows.values_list("outcome", flat=True):
        counts[outcome] += 1
    return counts
