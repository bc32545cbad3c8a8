"""An LLM judge of a run's answers, people checking the judge, and the judge's agreement with them.

Protocol (WiLoVa, ../shared EVALUATION.md): the judge sees the question, the standard-language gold and the answer
extracted from the model's output; temperature 0.1; it is asked again (up to `max_asks` times, each ask a separately
cached request) until its whole output is exactly `YES` or `NO`. An item whose every ask was something else is
*unscored*: counted and shown, never scored 0. Accuracy = YES / (YES + NO) with its Wilson interval.

An item without an answer (missing, empty, no answer tag, failed call) is counted NO without asking: the study's n is
every item, and a judge has nothing to judge there. A judgment is a job: each verdict is stored as it arrives, so a
resumed judgment asks only the items without one (and what was asked before comes from the endpoint's cache).
"""

from __future__ import annotations

import hashlib
import io
import logging
import re
from collections import defaultdict
from collections.abc import Sequence
from typing import Any

from django.contrib.auth.models import User
from django.db import IntegrityError, transaction
from django.db.models import QuerySet
from django.utils import timezone

from annotation.models import Project
from common.csv_safety import csv_writer
from common.errors import InvalidInput, InvalidState
from common.jobs import ACTIVE, JobLost, JobStatus, job_claim, job_enqueue
from endpoints.models import Endpoint
from evaluation.models import EvaluationRun, JudgedItem, JudgePrompt, Judgment, Prediction, Verdict
from evaluation.services import evaluation_run_gold
from evaluation.statistics import Coefficient, cohens_kappa, gwet_ac1, proportion, wilson

logger = logging.getLogger(__name__)

PLACEHOLDERS = ("{question}", "{gold}", "{answer}")
PLACEHOLDER_PATTERN = re.compile(r"\{(question|gold|answer)\}")
DEFAULT_PROMPT = (
    "You are checking an answer to a question. Decide whether the generated answer correctly answers the question, "
    "using the ground truth as the reference.\n\n"
    "Question: {question}\n"
    "Ground truth: {gold}\n"
    "Generated answer: {answer}\n\n"
    "Reply with a single capitalised word: YES if the generated answer is correct, NO if it is not."
)
MAX_PROMPT_CHARS = 20_000
MAX_ANSWER_CHARS = 4_000  # of the model's answer sent to the judge (a runaway answer is not paid for in full)
MAX_OUTPUT_CHARS = 2_000  # of each judge output stored and shown
TEMPERATURE = 0.1
MAX_ASKS = 10
JUDGED_KINDS = ("lead", "document", "validation")  # validation: the answer against the validated answer
JUDGED_PROJECTS = (Project.Kind.WIKIPEDIA_QA, Project.Kind.VALIDATION)


# The prompt


def judge_prompt_current(project: Project) -> JudgePrompt:
    """The project's newest judge prompt (version 1, the protocol's wording, when nobody has edited it)."""
    found = JudgePrompt.objects.filter(project=project).order_by("-version").first()
    if found is not None:
        return found
    try:
        with transaction.atomic():
            return JudgePrompt.objects.create(project=project, version=1, text=DEFAULT_PROMPT)
    except IntegrityError:  # created meanwhile by another request
        return JudgePrompt.objects.get(project=project, version=1)


def judge_prompt_save(*, project: Project, user: User | None, text: str) -> JudgePrompt:
    """A new version of the judge prompt; the same text as the current version saves nothing."""
    text = text.replace("\r\n", "\n").strip()
    if not text or len(text) > MAX_PROMPT_CHARS:
        raise InvalidInput(f"The prompt must have 1 to {MAX_PROMPT_CHARS:,} characters.", field="text")
    absent = [name for name in PLACEHOLDERS if name not in text]
    if absent:
        raise InvalidInput(f"The prompt must contain {', '.join(absent)}.", field="text")
    current = judge_prompt_current(project)
    if current.text == text:
        return current
    with transaction.atomic():
        latest = JudgePrompt.objects.select_for_update().filter(project=project).order_by("-version").first()
        version = (latest.version if latest else 0) + 1
        return JudgePrompt.objects.create(project=project, version=version, text=text, created_by=user)


def judge_prompt_fill(text: str, *, question: str, gold: str, answer: str) -> str:
    """The prompt for one item, in one pass: a placeholder or braces inside a question or an answer are only text."""
    values = {"question": question, "gold": gold, "answer": answer[:MAX_ANSWER_CHARS]}
    return PLACEHOLDER_PATTERN.sub(lambda match: values[match.group(1)], text)


def verdict_of(output: str) -> str | None:
    """YES or NO when the whole output (surrounding blanks aside) is exactly that word; else None."""
    word = output.strip()
    return {"YES": Verdict.YES, "NO": Verdict.NO}.get(word)


# Starting and running a judgment


def judgment_start(*, run: EvaluationRun, endpoint: Endpoint, user: User | None, enqueue: bool = True) -> Judgment:
    """A judgment of every answer of a scored run by `endpoint` with the project's current judge prompt (a job)."""
    if endpoint.project_id != run.project_id:
        raise InvalidInput("The judge must be a model endpoint of this project.", field="endpoint")
    if run.project.kind not in JUDGED_PROJECTS:
        raise InvalidInput(
            "An LLM judge reads a question and a gold answer: only Wikipedia QA and validation runs have them.",
            field="run",
        )
    if not run.is_done:
        raise InvalidState("Judge a run once it is scored.")
    if Judgment.objects.filter(run=run, status__in=ACTIVE).exists():
        raise InvalidState("A judgment of this run is already waiting or running.")
    prompt = judge_prompt_current(run.project)
    with transaction.atomic():
        judgment = Judgment.objects.create(
            run=run,
            endpoint=endpoint,
            endpoint_name=endpoint.name,
            endpoint_model=endpoint.model,
            prompt=prompt,
            prompt_version=prompt.version,
            temperature=TEMPERATURE,
            max_asks=MAX_ASKS,
            created_by=user,
            progress_total=_eligible(run).count(),
        )
        if enqueue:
            job_enqueue("evaluation_judge", judgment.pk)
    return judgment


def judgment_resume(*, judgment: Judgment, enqueue: bool = True) -> Judgment:
    """Put a failed or finished judgment back in the queue: only items without a verdict (or whose call failed)
    are asked again."""
    if judgment.is_active:
        raise InvalidState("This judgment is already waiting or running.")
    Judgment.objects.filter(pk=judgment.pk).update(status=JobStatus.PENDING, error="")
    judgment.refresh_from_db()
    if enqueue:
        job_enqueue("evaluation_judge", judgment.pk)
    return judgment


def _eligible(run: EvaluationRun) -> QuerySet[Prediction]:
    """The run's answers a judge scores: items of a QA kind with a gold answer (items without gold have no scores)."""
    return Prediction.objects.filter(run=run, item_kind__in=JUDGED_KINDS).exclude(scores={}).order_by("id")


def judgment_run(*, judgment_id: int) -> Judgment | None:
    """Ask the judge about every eligible answer that has no verdict yet (the job's body)."""
    from endpoints.services import ModelRequest, endpoint_complete_many

    job = job_claim(Judgment, judgment_id, every=1.0)
    if job is None:
        return None
    judgment = Judgment.objects.select_related("run__project", "run__release", "endpoint", "prompt").get(pk=judgment_id)
    run = judgment.run
    try:
        endpoint = judgment.endpoint
        if endpoint is None:
            raise InvalidState(f"The endpoint {judgment.endpoint_name!r} was deleted; it cannot judge any more.")
        endpoint.project = run.project
        gold = evaluation_run_gold(run)
        JudgedItem.objects.filter(judgment=judgment, verdict=Verdict.ERROR).delete()
        judged = set(JudgedItem.objects.filter(judgment=judgment).values_list("prediction_id", flat=True))
        eligible = list(_eligible(run).only("id", "item_id", "extraction", "extracted"))
        done = len(judged)
        job.beat(force=True, progress_total=len(eligible), progress_done=done, stage="Judging the answers")
        prompts: dict[int, str] = {}
        unanswered: list[JudgedItem] = []
        for prediction in eligible:
            if prediction.pk in judged:
                continue
            if prediction.extraction != Prediction.Extraction.FOUND or not prediction.extracted.strip():
                unanswered.append(JudgedItem(judgment=judgment, prediction=prediction, verdict=Verdict.NO, asked=False))
                continue
            item = gold.items[prediction.item_id]
            prompts[prediction.pk] = judge_prompt_fill(
                judgment.prompt.text, question=item.question, gold=item.gold, answer=prediction.extracted
            )
        JudgedItem.objects.bulk_create(unanswered, batch_size=1000)
        done += len(unanswered)
        outputs: dict[int, list[str]] = defaultdict(list)
        calls: dict[int, list[int]] = defaultdict(list)
        pending = list(prompts)
        for ask in range(judgment.max_asks):
            if not pending:
                break
            asked: list[int] = pending
            again: list[int] = []

            def store(
                index: int, completion: Any, asked: list[int] = asked, again: list[int] = again, ask: int = ask
            ) -> None:
                nonlocal done
                prediction_id = asked[index]
                calls[prediction_id].append(completion.call_id)
                if not completion.ok:
                    error = f"{completion.error_kind}: {completion.error}"[:2000]
                    _store(judgment, prediction_id, Verdict.ERROR, outputs, calls, error=error)
                else:
                    outputs[prediction_id].append(completion.text[:MAX_OUTPUT_CHARS])
                    verdict = verdict_of(completion.text)
                    if verdict is None and ask + 1 < judgment.max_asks:
                        again.append(prediction_id)
                        return
                    _store(judgment, prediction_id, verdict or Verdict.UNSCORED, outputs, calls)
                done += 1
                job.beat(progress_done=done)

            endpoint_complete_many(
                endpoint=endpoint,
                purpose="judge",
                requests=[ModelRequest(prompt=prompts[pk], variant=ask) for pk in asked],
                decoding={"temperature": judgment.temperature},
                user=judgment.created_by,
                on_result=store,
            )
            pending = again
            job.beat(force=True, progress_done=done, stage=f"Asking again ({len(pending):,} left after ask {ask + 1})")
        job.finish(progress_done=done, stage="")
    except JobLost:
        return None
    except Exception as error:
        logger.exception("Judgment %s failed", judgment_id)
        job.fail(error)
    return Judgment.objects.get(pk=judgment_id)


def _store(
    judgment: Judgment,
    prediction_id: int,
    verdict: str,
    outputs: dict[int, list[str]],
    calls: dict[int, list[int]],
    *,
    error: str = "",
) -> None:
    JudgedItem.objects.create(
        judgment=judgment,
        prediction_id=prediction_id,
        verdict=verdict,
        asks=len(calls[prediction_id]),
        outputs=outputs[prediction_id],
        call_ids=[call for call in calls[prediction_id] if call],
        error=error,
    )


# What a judgment found


def judgment_results(judgment: Judgment) -> list[dict[str, Any]]:
    """Per kind, model and scenario: YES, NO, unscored and failed counts (after people's overrides), and accuracy
    = YES / (YES + NO) with its n and Wilson 95% interval (None when no item was YES or NO: empty, not 0)."""
    cells: dict[tuple[str, str, str], dict[str, int]] = defaultdict(lambda: defaultdict(int))
    rows = JudgedItem.objects.filter(judgment=judgment).values_list(
        "prediction__item_kind", "prediction__model", "prediction__scenario", "verdict", "override", "asked"
    )
    for kind, model, scenario, verdict, override, asked in rows:
        cell = cells[(kind, model, scenario)]
        cell[override or verdict] += 1
        cell["overridden"] += bool(override)
        cell["not_asked"] += not asked
    found = []
    for (kind, model, scenario), cell in sorted(cells.items()):
        yes, no = cell[Verdict.YES], cell[Verdict.NO]
        estimate = proportion([1.0] * yes + [0.0] * no)
        found.append(
            {
                "kind": kind,
                "model": model,
                "scenario": scenario,
                "yes": yes,
                "no": no,
                "unscored": cell[Verdict.UNSCORED],
                "failed": cell[Verdict.ERROR],
                "overridden": cell["overridden"],
                "not_asked": cell["not_asked"],
                "n": estimate.n,
                "accuracy": estimate.mean,
                "ci_low": estimate.low,
                "ci_high": estimate.high,
            }
        )
    return found


def judgment_items(judgment: Judgment, *, verdict: str = "") -> QuerySet[JudgedItem]:
    items = JudgedItem.objects.filter(judgment=judgment).select_related("prediction")
    if verdict:
        items = items.filter(verdict=verdict)
    return items.order_by("prediction__model", "prediction__scenario", "prediction__item_id", "id")


CSV_FIELDS = ("item_id", "model", "scenario", "verdict", "override", "effective", "human", "asked", "asks", "output")


def judgment_csv(judgment: Judgment) -> str:
    """Every verdict with the judgment's provenance on each line (the judge, its model and prompt version)."""
    stream = io.StringIO()
    writer = csv_writer(stream)
    provenance = ("run", "judgment", "judge", "judge_model", "prompt_version")
    writer.writerow([*provenance, *CSV_FIELDS])
    fixed = [judgment.run_id, judgment.pk, judgment.endpoint_name, judgment.endpoint_model, judgment.prompt_version]
    for item in judgment_items(judgment).iterator(chunk_size=2000):
        prediction = item.prediction
        writer.writerow(
            [
                *fixed,
                prediction.item_id,
                prediction.model,
                prediction.scenario,
                item.verdict,
                item.override,
                item.effective,
                item.human,
                item.asked,
                item.asks,
                item.outputs[-1] if item.outputs else "",
            ]
        )
    return stream.getvalue()


# People checking the judge


def _check_order(judgment_id: int, item_id: int) -> str:
    """A fixed pseudo-random order per judgment: the items checked first are a random sample of the run."""
    return hashlib.sha256(f"{judgment_id}:{item_id}".encode()).hexdigest()


def judged_item_next_to_check(judgment: Judgment) -> JudgedItem | None:
    """The next item nobody has checked, in the judgment's sample order. Items whose call failed are skipped, and
    so are items without an answer (counted NO without asking): they would only inflate the agreement."""
    unchecked = JudgedItem.objects.filter(judgment=judgment, human="", asked=True).exclude(verdict=Verdict.ERROR)
    ids = list(unchecked.values_list("id", flat=True))
    if not ids:
        return None
    first = min(ids, key=lambda pk: _check_order(judgment.pk, pk))
    return JudgedItem.objects.select_related("prediction").get(pk=first)


def judged_item_check(*, item: JudgedItem, user: User | None, verdict: str) -> JudgedItem:
    """A person's own call on an item: correct (yes) or incorrect (no); a later call replaces it."""
    if verdict not in (Verdict.YES, Verdict.NO):
        raise InvalidInput("Mark the answer correct (yes) or incorrect (no).", field="verdict")
    now = timezone.now()
    JudgedItem.objects.filter(pk=item.pk).update(human=verdict, human_by=user, human_at=now)
    item.human, item.human_by, item.human_at = verdict, user, now
    return item


def judged_item_override(*, item: JudgedItem, user: User | None, verdict: str) -> JudgedItem:
    """Override the judge's verdict on an item; overriding with the same verdict again restores the judge's."""
    if verdict not in (Verdict.YES, Verdict.NO):
        raise InvalidInput("Override with correct (yes) or incorrect (no).", field="verdict")
    value, by = ("", None) if item.override == verdict else (verdict, user)
    JudgedItem.objects.filter(pk=item.pk).update(override=value, override_by=by)
    item.override, item.override_by = value, by
    return item


AGREEMENT_CONVENTION = (
    "On the items both the judge and a person called YES or NO (unscored and failed items, and items without an "
    "answer, are left out; the judge's own verdict, before any override). Raw agreement with a Wilson 95% "
    "interval. Cohen's κ, unweighted, with the "
    "large-sample standard error of Fleiss, Cohen & Everitt (1969) and a normal 95% interval (as statsmodels' "
    "cohens_kappa). Gwet's AC1 with Gwet's (2008) variance and a t(n − 1) 95% interval capped at 1 (as his R "
    "package irrCAC). κ drops when nearly every verdict is the same (high prevalence); AC1 does not: read both."
)


def _coefficient(found: Coefficient) -> dict[str, float | None]:
    return {"value": found.value, "se": found.se, "ci_low": found.low, "ci_high": found.high}


def agreement_of(pairs: Sequence[tuple[str, str]]) -> dict[str, Any]:
    """Judge–person agreement from (judge, person) verdicts, each yes or no."""
    order = (Verdict.YES, Verdict.NO)
    table = [[sum(1 for pair in pairs if pair == (a, b)) for b in order] for a in order]
    n = len(pairs)
    agreed = table[0][0] + table[1][1]
    low, high = wilson(agreed, n) if n else (None, None)
    return {
        "n": n,
        "table": table,  # rows: the judge YES, NO; columns: the person YES, NO
        "raw": {"value": agreed / n if n else None, "se": None, "ci_low": low, "ci_high": high},
        "kappa": _coefficient(cohens_kappa(table)),
        "ac1": _coefficient(gwet_ac1(table)),
        "convention": AGREEMENT_CONVENTION,
    }


def judgment_agreement(judgment: Judgment) -> dict[str, Any]:
    pairs = JudgedItem.objects.filter(
        judgment=judgment, asked=True, verdict__in=(Verdict.YES, Verdict.NO), human__in=(Verdict.YES, Verdict.NO)
    ).values_list("verdict", "human")
    found = agreement_of([(str(judge), str(person)) for judge, person in pairs])
    found["checked"] = JudgedItem.objects.filter(judgment=judgment).exclude(human="").count()
    return found
