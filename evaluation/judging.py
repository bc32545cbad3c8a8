"""An LLM judge of a run's answers, people checking the judge, and the judge's agreement with them.

Two rubrics, each carried by a version of the project's judge prompt and recorded on the judgment:

*YES / NO* (WiLoVa, ../shared EVALUATION.md): the judge sees the question, the standard-language gold and the answer
extracted from the model's output; temperature 0.1; it is asked again (up to `max_asks` times, each ask a separately
cached request) until its whole output is exactly `YES` or `NO`. An item whose every ask was something else is
*unscored*: counted and shown, never scored 0. Accuracy = YES / (YES + NO) with its Wilson interval. An item without
an answer (missing, empty, no answer tag, failed call) is counted NO without asking: the study's n is every item, and
a judge has nothing to judge there.

*Three-way* (as OpenAI's SimpleQA grader): the same asking, until the whole output (surrounding blanks aside, case and
spelling exact) is one of `CORRECT`, `INCORRECT`, `NOT_ATTEMPTED`; anything else after every ask is unscored. An item
without an answer is counted NOT_ATTEMPTED without asking. Rates: correct over all graded (C / (C + I + NA)), not
attempted over all graded (NA / (C + I + NA)), and correct given attempted (C / (C + I)), each with its Wilson
interval; unscored and failed items are left out of every denominator and counted beside them.

A judgment is a job: each verdict is stored as it arrives, so a resumed judgment asks only the items without one
(and what was asked before comes from the endpoint's cache). People check the judge on a seeded sample of k items per
(model, scenario) cell, queued first; agreement is reported per cell and for the whole judgment.
"""

from __future__ import annotations

import hashlib
import io
import logging
import random
import re
import secrets
from collections import defaultdict
from collections.abc import Sequence
from typing import Any

from django.contrib.auth.models import User
from django.db import IntegrityError, transaction
from django.db.models import Q, QuerySet
from django.utils import timezone

from annotation.models import Project
from common.csv_safety import csv_writer
from common.errors import InvalidInput, InvalidState
from common.jobs import ACTIVE, JobLost, JobStatus, job_claim, job_enqueue
from endpoints.models import Endpoint
from evaluation.models import (
    RUBRIC_VERDICTS,
    EvaluationRun,
    JudgeCheckSample,
    JudgedItem,
    JudgePrompt,
    Judgment,
    Prediction,
    Rubric,
    Verdict,
)
from evaluation.services import evaluation_run_gold
from evaluation.statistics import Coefficient, cohens_kappa, gwet_ac1, wilson
from evaluation.tables import Grid
from evaluation.words import KIND_NAMES, scenario_name

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
DEFAULT_THREE_WAY_PROMPT = (
    "You are grading an answer to a question. Compare the generated answer with the ground truth and grade it as "
    "one of CORRECT, INCORRECT or NOT_ATTEMPTED.\n\n"
    "Question: {question}\n"
    "Ground truth: {gold}\n"
    "Generated answer: {answer}\n\n"
    "CORRECT: the generated answer contains the meaning of the ground truth and nothing that contradicts it "
    "(wording, spelling and extra detail that does not contradict it do not matter).\n"
    "INCORRECT: the generated answer contradicts the ground truth or gives another answer, even with a hedge.\n"
    'NOT_ATTEMPTED: the generated answer gives no answer (a refusal, "I don\'t know", only related facts) and '
    "contradicts nothing in the ground truth.\n\n"
    "Reply with a single word: CORRECT, INCORRECT or NOT_ATTEMPTED."
)
DEFAULT_PROMPTS: dict[str, str] = {Rubric.YES_NO: DEFAULT_PROMPT, Rubric.THREE_WAY: DEFAULT_THREE_WAY_PROMPT}
# What an item without an answer counts as, without asking.
UNANSWERED: dict[str, str] = {Rubric.YES_NO: Verdict.NO, Rubric.THREE_WAY: Verdict.NOT_ATTEMPTED}
# The words a judge's whole output must be (surrounding blanks aside), per rubric.
RUBRIC_WORDS: dict[str, dict[str, str]] = {
    Rubric.YES_NO: {"YES": Verdict.YES, "NO": Verdict.NO},
    Rubric.THREE_WAY: {
        "CORRECT": Verdict.CORRECT,
        "INCORRECT": Verdict.INCORRECT,
        "NOT_ATTEMPTED": Verdict.NOT_ATTEMPTED,
    },
}
DEFAULT_SAMPLE_K = 20
MAX_SAMPLE_K = 10_000
MAX_PROMPT_CHARS = 20_000
MAX_ANSWER_CHARS = 4_000  # of the model's answer sent to the judge (a runaway answer is not paid for in full)
MAX_OUTPUT_CHARS = 2_000  # of each judge output stored and shown
TEMPERATURE = 0.1
MAX_ASKS = 10
JUDGED_KINDS = ("lead", "document", "validation")  # validation: the answer against the validated answer
JUDGED_PROJECTS = (Project.Kind.WIKIPEDIA_QA, Project.Kind.VALIDATION)


# The prompt


def rubric_checked(rubric: str) -> str:
    if rubric not in Rubric.values:
        raise InvalidInput(f"The rubric must be one of {', '.join(Rubric.values)}.", field="rubric")
    return rubric


def judge_prompt_current(project: Project, rubric: str = Rubric.YES_NO) -> JudgePrompt:
    """The project's newest judge prompt of `rubric` (the rubric's default wording, as the next version, when
    nobody has written one: version 1 for YES / NO in a new project)."""
    rubric = rubric_checked(rubric)
    found = JudgePrompt.objects.filter(project=project, rubric=rubric).order_by("-version").first()
    if found is not None:
        return found
    for _ in range(3):
        try:
            with transaction.atomic():
                latest = JudgePrompt.objects.filter(project=project).order_by("-version").first()
                version = (latest.version if latest else 0) + 1
                return JudgePrompt.objects.create(
                    project=project, version=version, rubric=rubric, text=DEFAULT_PROMPTS[rubric]
                )
        except IntegrityError:  # a version created meanwhile by another request
            found = JudgePrompt.objects.filter(project=project, rubric=rubric).order_by("-version").first()
            if found is not None:
                return found
    raise InvalidState("The judge prompt is being changed by someone else: try again.")


def judge_prompts_shown(project: Project) -> list[dict[str, Any]]:
    """Each rubric's current prompt for the edit form, without creating one: a rubric nobody used yet shows its
    default wording (version None; saved as the next version when first used or saved)."""
    shown = []
    for rubric, label in Rubric.choices:
        found = JudgePrompt.objects.filter(project=project, rubric=rubric).order_by("-version").first()
        shown.append(
            {
                "rubric": rubric,
                "label": label,
                "version": found.version if found else None,
                "text": found.text if found else DEFAULT_PROMPTS[Rubric(rubric)],
            }
        )
    return shown


def judge_prompt_save(*, project: Project, user: User | None, text: str, rubric: str = Rubric.YES_NO) -> JudgePrompt:
    """A new version of the judge prompt of `rubric`; the same text as that rubric's current version saves
    nothing."""
    rubric = rubric_checked(rubric)
    text = text.replace("\r\n", "\n").strip()
    if not text or len(text) > MAX_PROMPT_CHARS:
        raise InvalidInput(f"The prompt must have 1 to {MAX_PROMPT_CHARS:,} characters.", field="text")
    absent = [name for name in PLACEHOLDERS if name not in text]
    if absent:
        raise InvalidInput(f"The prompt must contain {', '.join(absent)}.", field="text")
    current = judge_prompt_current(project, rubric)
    if current.text == text:
        return current
    with transaction.atomic():
        latest = JudgePrompt.objects.select_for_update().filter(project=project).order_by("-version").first()
        version = (latest.version if latest else 0) + 1
        return JudgePrompt.objects.create(project=project, version=version, rubric=rubric, text=text, created_by=user)


def judge_prompt_fill(text: str, *, question: str, gold: str, answer: str) -> str:
    """The prompt for one item, in one pass: a placeholder or braces inside a question or an answer are only text."""
    values = {"question": question, "gold": gold, "answer": answer[:MAX_ANSWER_CHARS]}
    return PLACEHOLDER_PATTERN.sub(lambda match: values[match.group(1)], text)


def verdict_of(output: str, rubric: str = Rubric.YES_NO) -> str | None:
    """The rubric's verdict when the whole output (surrounding blanks aside) is exactly one of its words, in
    capitals as written (YES / NO; CORRECT / INCORRECT / NOT_ATTEMPTED); else None."""
    return RUBRIC_WORDS[Rubric(rubric)].get(output.strip())


# Starting and running a judgment


def judgment_start(
    *, run: EvaluationRun, endpoint: Endpoint, user: User | None, rubric: str = Rubric.YES_NO, enqueue: bool = True
) -> Judgment:
    """A judgment of every answer of a scored run by `endpoint` with the project's current judge prompt of
    `rubric` (a job)."""
    rubric = rubric_checked(rubric)
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
    prompt = judge_prompt_current(run.project, rubric)
    with transaction.atomic():
        judgment = Judgment.objects.create(
            run=run,
            endpoint=endpoint,
            endpoint_name=endpoint.name,
            endpoint_model=endpoint.model,
            prompt=prompt,
            prompt_version=prompt.version,
            rubric=prompt.rubric,
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
        rubric = Rubric(judgment.rubric)
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
                unanswered.append(
                    JudgedItem(judgment=judgment, prediction=prediction, verdict=UNANSWERED[rubric], asked=False)
                )
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
                    verdict = verdict_of(completion.text, rubric)
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

Cell = tuple[str, str, str]  # kind, model, scenario
SMALL_N = 30  # agreement or a rate on fewer items is marked "small n"


def _rate(successes: int, n: int) -> tuple[float | None, float | None, float | None]:
    """A proportion with its Wilson 95% interval; (None, None, None) when n is 0: empty, not 0."""
    if not n:
        return None, None, None
    low, high = wilson(successes, n)
    return successes / n, low, high


def judgment_results(judgment: Judgment) -> list[dict[str, Any]]:
    """Per kind, model and scenario: the rubric's verdict counts (after people's overrides), unscored and failed
    counts, the rates with n and Wilson 95% intervals (None when n is 0: empty, not 0), and the judge's agreement
    with people on that cell's checked items.

    YES / NO: accuracy = YES / (YES + NO). Three-way: accuracy = correct over all graded, C / (C + I + NA); the
    not-attempted rate NA / (C + I + NA) on the same n; correct given attempted C / (C + I) on n_attempted."""
    cells: dict[Cell, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    rows = JudgedItem.objects.filter(judgment=judgment).values_list(
        "prediction__item_kind", "prediction__model", "prediction__scenario", "verdict", "override", "asked"
    )
    for kind, model, scenario, verdict, override, asked in rows:
        cell = cells[(kind, model, scenario)]
        cell[override or verdict] += 1
        cell["overridden"] += bool(override)
        cell["not_asked"] += not asked
    agreement = judgment_agreement_by_cell(judgment)
    three_way = judgment.rubric == Rubric.THREE_WAY
    found = []
    for key, cell in sorted(cells.items()):
        kind, model, scenario = key
        correct, incorrect, skipped = cell[Verdict.CORRECT], cell[Verdict.INCORRECT], cell[Verdict.NOT_ATTEMPTED]
        if three_way:
            n, hits = correct + incorrect + skipped, correct
        else:
            n, hits = cell[Verdict.YES] + cell[Verdict.NO], cell[Verdict.YES]
        accuracy, low, high = _rate(hits, n)
        row: dict[str, Any] = {
            "kind": kind,
            "model": model,
            "scenario": scenario,
            "rubric": judgment.rubric,
            "yes": cell[Verdict.YES],
            "no": cell[Verdict.NO],
            "correct": correct,
            "incorrect": incorrect,
            "not_attempted": skipped,
            "unscored": cell[Verdict.UNSCORED],
            "failed": cell[Verdict.ERROR],
            "overridden": cell["overridden"],
            "not_asked": cell["not_asked"],
            "n": n,
            "accuracy": accuracy,
            "ci_low": low,
            "ci_high": high,
            "not_attempted_rate": None,
            "not_attempted_ci_low": None,
            "not_attempted_ci_high": None,
            "n_attempted": None,
            "correct_given_attempted": None,
            "attempted_ci_low": None,
            "attempted_ci_high": None,
        }
        if three_way:
            rate, rate_low, rate_high = _rate(skipped, n)
            given, given_low, given_high = _rate(correct, correct + incorrect)
            row.update(
                not_attempted_rate=rate,
                not_attempted_ci_low=rate_low,
                not_attempted_ci_high=rate_high,
                n_attempted=correct + incorrect,
                correct_given_attempted=given,
                attempted_ci_low=given_low,
                attempted_ci_high=given_high,
            )
        row["agreement"] = agreement.get(key) or agreement_of([], judgment.rubric)
        found.append(row)
    return found


def _coefficient_text(name: str, found: dict[str, Any]) -> str:
    if found.get("value") is None:
        return f"{name} —"
    interval = f" [{found['ci_low']:.2f}, {found['ci_high']:.2f}]" if found.get("ci_low") is not None else ""
    return f"{name} {found['value']:.2f}{interval}"


def judgment_grid(judgment: Judgment) -> Grid:
    """A finished judgment as a table of the run's downloads (Markdown, LaTeX): per kind, model and scenario the
    judge's rates with their Wilson intervals and n (unscored and failed answers left out, counted), and beside
    them the judge's agreement with people on that cell's checked items."""
    three_way = judgment.rubric == Rubric.THREE_WAY
    columns = ["Judge: correct" if three_way else "Judge: accuracy"]
    if three_way:
        columns += ["Not attempted", "Correct given attempted"]
    columns += ["Left out (unscored, failed)", "Judge vs people (checked items)"]
    rows: list[tuple[str, list[dict[str, Any] | str | None]]] = []
    for row in judgment_results(judgment):
        label = f"{KIND_NAMES.get(row['kind'], row['kind'])} · {row['model']} · {scenario_name(row['scenario'])}"
        cells: list[dict[str, Any] | str | None] = [
            {"mean": row["accuracy"], "ci_low": row["ci_low"], "ci_high": row["ci_high"], "n": row["n"]}
        ]
        if three_way:
            cells.append(
                {
                    "mean": row["not_attempted_rate"],
                    "ci_low": row["not_attempted_ci_low"],
                    "ci_high": row["not_attempted_ci_high"],
                    "n": row["n"],
                }
            )
            cells.append(
                {
                    "mean": row["correct_given_attempted"],
                    "ci_low": row["attempted_ci_low"],
                    "ci_high": row["attempted_ci_high"],
                    "n": row["n_attempted"] or 0,
                }
            )
        cells.append(f"{row['unscored']} unscored, {row['failed']} failed")
        agreement = row["agreement"]
        if agreement["n"]:
            raw = agreement["raw"]["value"]
            cells.append(
                f"n={agreement['n']}, raw {raw:.2f}, {_coefficient_text('κ', agreement['kappa'])}, "
                f"{_coefficient_text('AC1', agreement['ac1'])}" + (", small n" if agreement["n"] < SMALL_N else "")
            )
        else:
            cells.append("not checked")
        rows.append((label, cells))
    caption = (
        f"LLM judge {judgment.endpoint_name} ({judgment.endpoint_model}), judgment {judgment.pk}, rubric "
        f"{Rubric(judgment.rubric).label}, prompt version {judgment.prompt_version}: × 100 with n. "
        f"{RESULTS_CONVENTION[Rubric(judgment.rubric)]} Judge vs people: raw agreement, Cohen's κ and Gwet's AC1 "
        "with their 95% intervals on the cell's items both the judge and a person called (small n: fewer than "
        f"{SMALL_N}); rates on fewer than 10 items are marked ⚠."
    )
    return Grid(
        name=f"judgment_{judgment.pk}",
        caption=caption,
        stub="Kind · model · scenario",
        columns=columns,
        rows=rows,
    )


RESULTS_CONVENTION = {
    Rubric.YES_NO: (
        "Accuracy = YES / (YES + NO) × 100 with its Wilson 95% interval and n; unscored answers (neither YES nor "
        "NO after every ask) and failed calls are left out of n and counted beside it; items without an answer "
        "count NO without asking."
    ),
    Rubric.THREE_WAY: (
        "Correct = CORRECT / (CORRECT + INCORRECT + NOT_ATTEMPTED) × 100 over all graded items (n); not attempted "
        "= NOT_ATTEMPTED over the same n; correct given attempted = CORRECT / (CORRECT + INCORRECT) (n attempted); "
        "each with its Wilson 95% interval. Unscored answers (none of the three words after every ask) and failed "
        "calls are left out of every n and counted beside it; items without an answer count NOT_ATTEMPTED "
        "without asking."
    ),
}


def judgment_items(judgment: Judgment, *, verdict: str = "") -> QuerySet[JudgedItem]:
    items = JudgedItem.objects.filter(judgment=judgment).select_related("prediction")
    if verdict:
        items = items.filter(verdict=verdict)
    return items.order_by("prediction__model", "prediction__scenario", "prediction__item_id", "id")


CSV_FIELDS = ("item_id", "model", "scenario", "verdict", "override", "effective", "human", "asked", "asks", "output")


def judgment_csv(judgment: Judgment) -> str:
    """Every verdict with the judgment's provenance on each line (the judge, its model, prompt version and rubric)
    and the check sample it was drawn into (empty: not sampled)."""
    stream = io.StringIO()
    writer = csv_writer(stream)
    provenance = ("run", "judgment", "judge", "judge_model", "prompt_version")
    writer.writerow([*provenance, *CSV_FIELDS, "check_sample", "rubric"])
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
                item.check_sample_id or "",
                judgment.rubric,
            ]
        )
    return stream.getvalue()


# People checking the judge


def _check_order(judgment_id: int, item_id: int) -> str:
    """A fixed pseudo-random order per judgment: the items checked first are a random sample of the run."""
    return hashlib.sha256(f"{judgment_id}:{item_id}".encode()).hexdigest()


def _checkable(judgment: Judgment) -> QuerySet[JudgedItem]:
    """Items a person may be asked about: the judge was asked and its call did not fail (items without an answer
    are counted without asking: they would only inflate the agreement)."""
    return JudgedItem.objects.filter(judgment=judgment, asked=True).exclude(verdict=Verdict.ERROR)


def judged_item_next_to_check(judgment: Judgment) -> JudgedItem | None:
    """The next item nobody has checked: the sampled items first, then the rest, each in the judgment's sample
    order. Items whose call failed are skipped, and so are items without an answer."""
    unchecked = _checkable(judgment).filter(human="")
    ids = list(unchecked.filter(check_sample__isnull=False).values_list("id", flat=True))
    if not ids:
        ids = list(unchecked.values_list("id", flat=True))
    if not ids:
        return None
    first = min(ids, key=lambda pk: _check_order(judgment.pk, pk))
    return JudgedItem.objects.select_related("prediction").get(pk=first)


def judgment_check_progress(judgment: Judgment) -> dict[str, int]:
    """How far people are: checked x of y sampled, and every check (sampled or not)."""
    items = JudgedItem.objects.filter(judgment=judgment)
    sampled = items.filter(check_sample__isnull=False)
    return {
        "sampled": sampled.count(),
        "sampled_checked": sampled.exclude(human="").count(),
        "checked": items.exclude(human="").count(),
        "checkable": _checkable(judgment).count(),
    }


def _person_verdict(judgment: Judgment, verdict: str, action: str) -> str:
    allowed = RUBRIC_VERDICTS[Rubric(judgment.rubric)]
    if verdict not in allowed:
        if judgment.rubric == Rubric.YES_NO:
            raise InvalidInput(f"{action} correct (yes) or incorrect (no).", field="verdict")
        raise InvalidInput(f"{action} {', '.join(allowed[:-1])} or {allowed[-1]}.", field="verdict")
    return verdict


def judged_item_check(*, item: JudgedItem, user: User | None, verdict: str) -> JudgedItem:
    """A person's own call on an item, one of the rubric's verdicts (yes / no; correct / incorrect /
    not_attempted); a later call replaces it."""
    verdict = _person_verdict(item.judgment, verdict, "Mark the answer")
    now = timezone.now()
    JudgedItem.objects.filter(pk=item.pk).update(human=verdict, human_by=user, human_at=now)
    item.human, item.human_by, item.human_at = verdict, user, now
    return item


def judged_item_override(*, item: JudgedItem, user: User | None, verdict: str) -> JudgedItem:
    """Override the judge's verdict on an item with one of the rubric's verdicts; overriding with the same verdict
    again restores the judge's."""
    verdict = _person_verdict(item.judgment, verdict, "Override with")
    value, by = ("", None) if item.override == verdict else (verdict, user)
    JudgedItem.objects.filter(pk=item.pk).update(override=value, override_by=by)
    item.override, item.override_by = value, by
    return item


def judgment_sample(*, judgment: Judgment, k: int, user: User | None, seed: int | None = None) -> JudgeCheckSample:
    """Draw up to k judged items per (kind, model, scenario) cell into the check queue, with `seed` (a random one,
    recorded, when None): within a cell, the items not sampled before, in release item id order, are drawn by
    `random.Random(f"{seed}:{kind}:{model}:{scenario}").sample`, so the same seed on the same items draws the
    same ones. A cell with fewer than k such items gives them all (recorded per cell). Sampling again adds to the
    queue; an item is never drawn twice. Eligible: the judge was asked and its call did not fail."""
    if judgment.is_active:
        raise InvalidState("Sample once the judgment has finished: its verdicts are still arriving.")
    if not 1 <= k <= MAX_SAMPLE_K:
        raise InvalidInput(f"k must be 1 to {MAX_SAMPLE_K:,} items per scenario.", field="k")
    if seed is None:
        seed = secrets.randbelow(2**31)
    if not 0 <= seed < 2**63:
        raise InvalidInput("The seed must be 0 to 2⁶³ − 1.", field="seed")
    with transaction.atomic():
        Judgment.objects.select_for_update().filter(pk=judgment.pk).first()  # one press at a time per judgment
        free: dict[Cell, list[tuple[str, int]]] = defaultdict(list)
        before: dict[Cell, int] = defaultdict(int)
        rows = _checkable(judgment).values_list(
            "id", "check_sample_id", "prediction__item_kind", "prediction__model", "prediction__scenario",
            "prediction__item_id",
        )  # fmt: skip
        for pk, sampled, kind, model, scenario, item_id in rows:
            if sampled is None:
                free[(kind, model, scenario)].append((item_id, pk))
            else:
                before[(kind, model, scenario)] += 1
        sample = JudgeCheckSample.objects.create(judgment=judgment, k=k, seed=seed, created_by=user)
        chosen: list[int] = []
        cells = []
        for key in sorted(set(free) | set(before)):
            kind, model, scenario = key
            pool = sorted(free.get(key, []))
            picked = random.Random(f"{seed}:{kind}:{model}:{scenario}").sample(pool, min(k, len(pool)))
            chosen.extend(pk for _, pk in picked)
            cells.append(
                {
                    "kind": kind,
                    "model": model,
                    "scenario": scenario,
                    "eligible": len(pool) + before[key],
                    "before": before[key],
                    "added": len(picked),
                }
            )
        for start in range(0, len(chosen), 500):
            JudgedItem.objects.filter(pk__in=chosen[start : start + 500], check_sample__isnull=True).update(
                check_sample=sample
            )
        sample.added, sample.cells = len(chosen), cells
        sample.save(update_fields=["added", "cells"])
    return sample


def judgment_sample_summary(sample: JudgeCheckSample) -> str:
    """What a press sampled, in words: how many, and the cells that had fewer than k to give."""
    short = [cell for cell in sample.cells if cell["added"] < sample.k]
    text = f"Sampled {sample.added:,} items ({sample.k} per scenario, seed {sample.seed})"
    if short:
        parts = [
            f"{cell['model']} · {cell['scenario']}: {cell['added']} (of {cell['eligible']} eligible, "
            f"{cell['before']} sampled before)"
            for cell in short
        ]
        text += "; fewer where a cell had fewer left: " + "; ".join(parts)
    return text + "."


# Agreement of the judge and people

AGREEMENT_CONVENTION = (
    "On the items both the judge and a person gave one of the rubric's verdicts (YES / NO: a 2×2 table; CORRECT / "
    "INCORRECT / NOT_ATTEMPTED: a 3×3 table), the judge's own verdict before any override; checked items the judge "
    "left unscored, whose call failed or that had no answer (not asked) are left out and counted. Raw agreement "
    "with a Wilson 95% interval. Cohen's κ, unweighted, with the "
    "large-sample standard error of Fleiss, Cohen & Everitt (1969) and a normal 95% interval (as statsmodels' "
    "cohens_kappa). Gwet's AC1 with Gwet's (2008) variance and a t(n − 1) 95% interval capped at 1 (as his R "
    "package irrCAC). κ drops when nearly every verdict is the same (high prevalence); AC1 does not: read both. "
    f"Fewer than {SMALL_N} items: small n, marked."
)


def _coefficient(found: Coefficient) -> dict[str, float | None]:
    return {"value": found.value, "se": found.se, "ci_low": found.low, "ci_high": found.high}


def agreement_of(pairs: Sequence[tuple[str, str]], rubric: str = Rubric.YES_NO) -> dict[str, Any]:
    """Judge–person agreement from (judge, person) verdicts, each one of the rubric's verdicts."""
    order = RUBRIC_VERDICTS[Rubric(rubric)]
    table = [[sum(1 for pair in pairs if pair == (a, b)) for b in order] for a in order]
    n = len(pairs)
    agreed = sum(table[index][index] for index in range(len(order)))
    low, high = wilson(agreed, n) if n else (None, None)
    return {
        "n": n,
        "small": n < SMALL_N,
        "labels": [str(value) for value in order],
        "table": table,  # rows: the judge's verdicts, columns: the person's, both in `labels` order
        "raw": {"value": agreed / n if n else None, "se": None, "ci_low": low, "ci_high": high},
        "kappa": _coefficient(cohens_kappa(table)),
        "ac1": _coefficient(gwet_ac1(table)),
        "checked": 0,
        "left_out": {"unscored": 0, "failed": 0, "not_asked": 0},
        "sampled": 0,
        "sampled_checked": 0,
        "convention": AGREEMENT_CONVENTION,
    }


def _agreements(judgment: Judgment) -> tuple[dict[Cell, dict[str, Any]], dict[str, Any]]:
    """The agreement of each cell on its checked items, and of the whole judgment (every checked item)."""
    rubric = Rubric(judgment.rubric)
    order = set(RUBRIC_VERDICTS[rubric])
    pairs: dict[Cell, list[tuple[str, str]]] = defaultdict(list)
    tallies: dict[Cell, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    rows = (
        JudgedItem.objects.filter(judgment=judgment)
        .filter(Q(check_sample__isnull=False) | ~Q(human=""))
        .values_list(
            "prediction__item_kind", "prediction__model", "prediction__scenario", "verdict", "human", "asked",
            "check_sample_id",
        )
    )  # fmt: skip
    for kind, model, scenario, verdict, human, asked, sampled in rows:
        key = (kind, model, scenario)
        tally = tallies[key]
        tally["sampled"] += sampled is not None
        if not human:
            continue
        tally["checked"] += 1
        tally["sampled_checked"] += sampled is not None
        if not asked:
            tally["not_asked"] += 1
        elif verdict == Verdict.ERROR:
            tally["failed"] += 1
        elif verdict in order and human in order:
            pairs[key].append((str(verdict), str(human)))
        else:
            tally["unscored"] += 1

    def fill(found: dict[str, Any], counts: list[dict[str, int]]) -> dict[str, Any]:
        for name in ("checked", "sampled", "sampled_checked"):
            found[name] = sum(count[name] for count in counts)
        found["left_out"] = {name: sum(count[name] for count in counts) for name in found["left_out"]}
        return found

    cells = {key: fill(agreement_of(pairs.get(key, []), rubric), [tallies[key]]) for key in tallies}
    whole = fill(agreement_of([pair for key in sorted(pairs) for pair in pairs[key]], rubric), list(tallies.values()))
    return cells, whole


def judgment_agreement_by_cell(judgment: Judgment) -> dict[Cell, dict[str, Any]]:
    return _agreements(judgment)[0]


def judgment_agreement(judgment: Judgment) -> dict[str, Any]:
    """The judge's agreement with people over every checked item of the judgment."""
    return _agreements(judgment)[1]
