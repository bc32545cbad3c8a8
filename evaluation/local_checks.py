"""Is it local knowledge? A model asked each saved Wikipedia QA item, closed-book and with the standard lead.

WiLoVa's premise is that a question is worth asking only if the knowledge is local: absent from the standard
article. When a coordinator turns the check on (`LocalCheckSetting`: an endpoint of the project, a chrF++
threshold, optionally a judge endpoint), every save that changes an item's question or standard answer asks for
a check (`local_check_request`, registered as annotation's hook): the item's `LocalCheck` row becomes a pending job
holding the text to check, sent to a worker after the commit and a short wait (`LOCAL_CHECK_DELAY_SECONDS`:
autosave while typing asks again; only the last request of a burst is sent). The save itself never waits.

The worker (`local_check_run`) asks the endpoint twice through the one model connection (endpoints.services:
retries, cache, every call recorded): the question alone, then the question after the standard lead. An answer is
right when its chrF++ against the author's standard answer reaches the threshold (evaluation/metrics.py), or, with
a judge, when the judge's whole reply is YES (the project's judge prompt). The result says whether the model
answered closed-book, from the standard article, or not at all (local knowledge). A model that is down, slow or
replies garbage leaves the check failed with the reason, tried again later (LOCAL_CHECK_MAX_TRIES, waits from
LOCAL_CHECK_RETRY_SECONDS doubling); the author can ask again at any time.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.contrib.auth.models import User
from django.db import IntegrityError, transaction
from django.db.models import Count
from django.utils import timezone

from annotation.models import LocalCheck, Project, QAItem
from annotation.models_checks import LocalCheckResult
from audit import services as audit
from audit.models import Action
from common.errors import InvalidInput, InvalidState
from common.jobs import JobLost, JobStatus, job_claim, job_enqueue
from endpoints.models import Endpoint
from endpoints.services import Completion, completion_words, endpoint_complete
from evaluation.judging import judge_prompt_current, judge_prompt_fill, verdict_of
from evaluation.metrics import chrf
from evaluation.models import LocalCheckSetting, Verdict

JOB = "local_check"
PURPOSE = "local_check"
ATTEMPTS_PER_TRY = 2  # model attempts within one try; the job's own retries come later, spaced out
MAX_ANSWER_CHARS = 2_000  # of a model answer kept on the check
SYSTEM = (
    "Answer the question with a short phrase in {language}. Reply with the answer only, no explanation. "
    "If you do not know, reply: I don't know."
)


# The setting


def local_check_setting(project: Project) -> LocalCheckSetting:
    """The project's setting (off, unsaved, when nobody set it)."""
    found = LocalCheckSetting.objects.filter(project=project).select_related("endpoint", "judge").first()
    return found or LocalCheckSetting(project=project)


def local_check_setting_save(
    *,
    project: Project,
    user: User | None,
    enabled: bool,
    endpoint: Endpoint | None,
    threshold: float,
    judge: Endpoint | None = None,
) -> LocalCheckSetting:
    """Turn the check on or off and say how it judges. On needs an endpoint of this project."""
    if project.kind != Project.Kind.WIKIPEDIA_QA:
        raise InvalidState("Only a Wikipedia QA project checks its items for local knowledge.", field="project")
    for name, chosen in (("endpoint", endpoint), ("judge", judge)):
        if chosen is not None and chosen.project_id != project.pk:
            raise InvalidInput(f"{name}: not a model endpoint of this project.", field=name)
    if enabled and endpoint is None:
        raise InvalidInput("endpoint: choose the model to ask before turning the check on.", field="endpoint")
    if not isinstance(threshold, int | float) or not 0 <= threshold <= 1:
        raise InvalidInput("threshold: a chrF++ value from 0 to 1, e.g. 0.5.", field="threshold")
    with transaction.atomic():
        setting, _ = LocalCheckSetting.objects.update_or_create(
            project=project,
            defaults={
                "enabled": enabled,
                "endpoint": endpoint,
                "threshold": float(threshold),
                "judge": judge,
                "updated_by": user,
            },
        )
        audit.record(
            user,
            Action.PROJECT_SETTINGS,
            project,
            project=project,
            local_knowledge_check="on" if enabled else "off",
            endpoint=endpoint.name if endpoint else None,
            threshold=float(threshold),
            judge=judge.name if judge else None,
        )
    return setting


# Asking for a check (annotation's hook: called by the item save, inside its transaction)


def local_check_request(*, item: QAItem, force: bool = False) -> LocalCheck | None:
    """Make the item's check pending for its text as it now reads and send it to a worker after the commit.

    Nothing when the project does not check (off, no endpoint, not Wikipedia QA), when the item has no question or
    no standard answer yet, or (unless `force`) when this very text was already checked or is being checked."""
    if not item.question.strip() or not item.answer_standard.strip():
        return None
    if not LocalCheckSetting.objects.filter(project_id=item.project_id, enabled=True, endpoint__isnull=False).exists():
        return None
    existing = LocalCheck.objects.filter(item=item).first()
    if (
        existing is not None
        and not force
        and existing.is_current_for(item.question, item.answer_standard)
        and existing.status != JobStatus.FAILED
    ):
        return existing
    values: dict[str, Any] = {
        "project_id": item.project_id,
        "question": item.question,
        "answer": item.answer_standard,
        "requested_at": timezone.now(),
        "status": JobStatus.PENDING,
        "owner": "",  # a run still asking about the earlier text loses its hold and writes nothing
        "result": "",
        "model": "",
        "method": "",
        "closed_book_answer": "",
        "closed_book_score": None,
        "lead_answer": "",
        "lead_score": None,
        "failures": 0,
        "retry_at": None,
        "error": "",
        "stage": "",
        "finished_at": None,
    }
    if existing is not None:  # one statement: a save that asks again costs no more than that
        LocalCheck.objects.filter(pk=existing.pk).update(**values)
        for name, value in values.items():
            setattr(existing, name, value)
        check = existing
    else:
        try:
            with transaction.atomic():
                check = LocalCheck.objects.create(item=item, **values)
        except IntegrityError:  # another save created it meanwhile: write over that one
            LocalCheck.objects.filter(item=item).update(**values)
            check = LocalCheck.objects.get(item=item)
    job_enqueue(JOB, check.pk, countdown=float(settings.LOCAL_CHECK_DELAY_SECONDS))
    return check


# Running one


@dataclass(frozen=True)
class _Judged:
    right: bool
    score: float


class _CheckFailed(Exception):
    pass


def local_check_run(*, check_id: int) -> LocalCheck | None:
    """Ask the model about one pending check and record the outcome (a failure with its reason, tried again)."""
    now = timezone.now()
    # A failed check whose next try is due waits for a worker again.
    LocalCheck.objects.filter(pk=check_id, status=JobStatus.FAILED, retry_at__lte=now).update(
        status=JobStatus.PENDING, retry_at=None
    )
    settled = now - timedelta(seconds=float(settings.LOCAL_CHECK_DELAY_SECONDS))
    run = job_claim(LocalCheck, check_id, rows={"requested_at__lte": settled})
    if run is None:  # taken, finished, or asked for again a moment ago (that request's own message runs it)
        return None
    check = LocalCheck.objects.select_related("item__pair", "project").get(pk=check_id)
    setting = LocalCheckSetting.objects.filter(project_id=check.project_id).select_related("endpoint", "judge").first()
    try:
        if setting is None or not setting.active or setting.endpoint is None:
            raise _CheckFailed("The project's local-knowledge check is off or has no model endpoint.")
        endpoint = setting.endpoint
        project = check.project
        system = SYSTEM.format(language=project.standard.name)
        run.beat(force=True, stage="Asking the model without any article", model=endpoint.name[:200])
        closed = _ask(endpoint, [{"role": "system", "content": system}, {"role": "user", "content": check.question}])
        run.beat(force=True, stage="Asking the model with the standard lead")
        lead_prompt = f"{check.item.pair.standard_lead}\n\nQuestion: {check.question}"
        with_lead = _ask(endpoint, [{"role": "system", "content": system}, {"role": "user", "content": lead_prompt}])
        closed_judged = _judge(setting, project, check, closed.text)
        lead_judged = _judge(setting, project, check, with_lead.text)
    except _CheckFailed as failure:
        _fail(run, check, str(failure))
        return LocalCheck.objects.get(pk=check_id)
    except JobLost:
        return None
    if closed_judged.right:
        result = LocalCheckResult.CLOSED_BOOK
    elif lead_judged.right:
        result = LocalCheckResult.STANDARD_LEAD
    else:
        result = LocalCheckResult.NOT_ANSWERED
    method = (
        f"the judge {setting.judge.name} said YES"
        if setting.judge is not None
        else f"chrF++ of at least {setting.threshold:.2f}"
    )
    try:
        run.finish(
            result=result,
            method=method[:120],
            closed_book_answer=closed.text[:MAX_ANSWER_CHARS],
            closed_book_score=closed_judged.score,
            lead_answer=with_lead.text[:MAX_ANSWER_CHARS],
            lead_score=lead_judged.score,
            stage="",
            retry_at=None,
        )
    except JobLost:  # the text changed meanwhile: the newer request's run records its own result
        return None
    return LocalCheck.objects.get(pk=check_id)


def _ask(endpoint: Endpoint, messages: list[dict[str, str]]) -> Completion:
    completion = endpoint_complete(
        endpoint=endpoint,
        purpose=PURPOSE,
        messages=messages,
        decoding={"temperature": 0},
        max_attempts=ATTEMPTS_PER_TRY,
    )
    if not completion.ok:
        raise _CheckFailed(completion_words(completion))
    if not completion.text.strip():
        raise _CheckFailed("The model replied with nothing.")
    return completion


def _judge(setting: LocalCheckSetting, project: Project, check: LocalCheck, answer: str) -> _Judged:
    """Whether the model's answer is the author's: chrF++ at the threshold, or the judge's YES."""
    score = chrf(answer.strip(), check.answer.strip(), word_order=2)
    if setting.judge is None:
        return _Judged(score >= setting.threshold, score)
    prompt = judge_prompt_fill(
        judge_prompt_current(project).text, question=check.question, gold=check.answer, answer=answer
    )
    verdict = endpoint_complete(endpoint=setting.judge, purpose="local_check_judge", prompt=prompt, max_attempts=2)
    if not verdict.ok:
        raise _CheckFailed(f"The judge: {completion_words(verdict)}")
    said = verdict_of(verdict.text)
    if said is None:
        raise _CheckFailed(f"The judge replied neither YES nor NO: {verdict.text.strip()[:200]!r}.")
    return _Judged(said == Verdict.YES, score)


def _fail(run: Any, check: LocalCheck, reason: str) -> None:
    failures = check.failures + 1
    retry = failures < settings.LOCAL_CHECK_MAX_TRIES and "is off" not in reason
    wait = float(settings.LOCAL_CHECK_RETRY_SECONDS) * 2 ** (failures - 1)
    retry_at = timezone.now() + timedelta(seconds=wait) if retry else None
    if not run.fail(reason, failures=failures, retry_at=retry_at, stage=""):
        return
    if retry:
        job_enqueue(JOB, check.pk, countdown=wait)


def local_check_counts(project: Project) -> dict[str, int]:
    """The project's items by check outcome: results of finished checks, plus waiting and failed ones (one query)."""
    counts = {"waiting": 0, "failed": 0, **{value: 0 for value in LocalCheckResult.values if value}}
    for status, result, n in (
        LocalCheck.objects.filter(project=project, item__deleted_at__isnull=True)
        .values_list("status", "result")
        .annotate(n=Count("id"))
        .order_by()
    ):
        if status == JobStatus.DONE and result:
            counts[result] += n
        elif status == JobStatus.FAILED:
            counts["failed"] += n
        else:
            counts["waiting"] += n
    return counts
