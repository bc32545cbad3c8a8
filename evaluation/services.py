"""Evaluation runs: take predictions in against one release, score them as a job, give the results out.

`evaluation_run_create` reads the upload against the release's gold before anything is stored: a file with a
refused line is recorded as a refused run (its problems listed) with no predictions. An accepted file's predictions
are stored and `evaluation_run_score` (a Celery job, or in-process for the command) extracts and scores them.
"""

from __future__ import annotations

import hashlib
import io
import logging
from typing import Any

import orjson
from django.conf import settings
from django.contrib.auth.models import User
from django.db import transaction

from annotation.models import Project
from common.csv_safety import csv_writer
from common.errors import InvalidInput, InvalidState
from common.jobs import JobLost, JobStatus, job_claim, job_enqueue, pause_between_steps
from endpoints.models import Endpoint
from evaluation import annotators, metrics, scoring, tables
from evaluation.gold import (
    VALIDATION_SCENARIO,
    VALIDATION_TEMPLATE,
    VALIDATION_TEMPLATES,
    WIKIPEDIA_SCENARIOS,
    ReleaseGold,
    release_gold,
    release_prompts,
    resampled_by,
)
from evaluation.models import EvaluationRun, Prediction
from evaluation.statistics import ODDS_RATIO_METHOD
from evaluation.uploads import parse_upload
from exports.models import Release

logger = logging.getLogger(__name__)
CHUNK = 2000
MAX_DRAWS = 10_000
RESULT_FIELDS = (
    "kind",
    "model",
    "scenario",
    "metric",
    "mode",
    "stratum",
    "value",
    "n",
    "mean",
    "ci_low",
    "ci_high",
    "interval",
    "left_out",
)


def _manifest_sha256(release: Release) -> str:
    entry = release.file_entry("manifest.json")
    return str(entry["sha256"]) if entry else ""


def evaluation_run_create(
    *,
    project: Project,
    release: Release,
    user: User | None,
    data: bytes,
    file_name: str = "",
    source: str = EvaluationRun.Source.PREDICTIONS,
    model: str = "",
    scenario: str = "",
    bootstrap_draws: int = 1000,
    enqueue: bool = True,
) -> EvaluationRun:
    """A run of these predictions on this release: refused (with every refused line named) or pending scoring."""
    if release.project_id != project.pk:
        raise InvalidInput("That release belongs to another project.", field="release")
    if not release.is_published:
        raise InvalidState(f"Release v{release.version} is not published; only published releases are scored.")
    if len(data) > upload_limit():
        raise too_large(len(data))
    if not 0 <= bootstrap_draws <= MAX_DRAWS:
        raise InvalidInput(f"Bootstrap draws must be between 0 and {MAX_DRAWS:,}.", field="bootstrap_draws")
    harness = source == EvaluationRun.Source.HARNESS
    model = model.strip()[:200]
    if harness and not model:
        raise InvalidInput("Name the model whose harness log this is.", field="model")
    gold = release_gold(release)
    parsed = parse_upload(data, gold, harness=harness, model=model, scenario=scenario.strip())
    counts = {**parsed.counts, "predictions": len(parsed.rows) if not parsed.problems else 0}
    run = EvaluationRun(
        project=project,
        release=release,
        release_version=release.version,
        manifest_sha256=_manifest_sha256(release),
        release_files=gold.files,
        source=source,
        file_name=file_name[:255],
        file_sha256=hashlib.sha256(data).hexdigest(),
        file_size=len(data),
        bootstrap_draws=bootstrap_draws,
        created_by=user,
        counts=counts,
        problems=parsed.problems,
    )
    if parsed.problems:
        run.status = JobStatus.REFUSED
        refused = parsed.counts.get("refused_lines", 0)
        run.error = f"{refused:,} line(s) refused; nothing was stored. Correct them and upload the file again."
        run.save()
        return run
    with transaction.atomic():
        run.progress_total = len(parsed.rows)
        run.save()
        Prediction.objects.bulk_create(
            (
                Prediction(
                    run=run,
                    item_id=row.item_id,
                    item_kind=gold.items[row.item_id].kind,
                    scenario=row.scenario,
                    model=row.model,
                    line=row.line,
                    prediction=row.prediction,
                )
                for row in parsed.rows
            ),
            batch_size=CHUNK,
        )
        if enqueue:
            job_enqueue("evaluation", run.pk)
    return run


def evaluation_run_gold(run: EvaluationRun) -> ReleaseGold:
    """The release's gold, refused if its files are not the ones the run was pinned to."""
    release = run.release
    release.project = run.project
    gold = release_gold(release)
    if gold.files != run.release_files or _manifest_sha256(release) != run.manifest_sha256:
        raise InvalidState("The release's files are not the ones this run was pinned to; nothing was scored.")
    return gold


def evaluation_run_score(*, run_id: int) -> EvaluationRun | None:
    """Extract and score every prediction, add the items without one as missing, compute the results (a job).

    A takeover after a lost worker scores again from the start: scoring is a pure function of stored rows.
    """
    job = job_claim(EvaluationRun, run_id, every=1.0, progress_done=0)
    if job is None:
        return None
    run = EvaluationRun.objects.select_related("release", "project", "endpoint").get(pk=run_id)
    try:
        gold = evaluation_run_gold(run)
        if run.source == EvaluationRun.Source.ENDPOINT:
            _generate(run, job, gold)
        unknown_authors = annotators.annotator_stratum_add(gold, run.project)
        unavailable: dict[str, str] = {}
        Prediction.objects.filter(run=run, extraction=Prediction.Extraction.MISSING).delete()
        done = 0
        seen: dict[tuple[str, str], set[str]] = {}
        rows = Prediction.objects.filter(run=run).order_by("id")
        total = rows.count()
        job.beat(force=True, progress_total=total, stage="Scoring the answers")
        batch: list[Prediction] = []
        fields = ["extraction", "extracted", "extraction_tolerant", "extracted_tolerant", "scores"]
        for prediction in rows.iterator(chunk_size=CHUNK):
            item = gold.items[prediction.item_id]
            found = scoring.extract(prediction.prediction, item, prediction.scenario, gold)
            if prediction.error:  # the model call failed: recorded as such, scored as an empty answer
                found = {**found, "extraction": Prediction.Extraction.ERROR, "extracted": ""}
            for name, value in found.items():
                setattr(prediction, name, value)
            prediction.scores = scoring.score(found, item, gold, unavailable)
            seen.setdefault((prediction.model, prediction.scenario), set()).add(prediction.item_id)
            batch.append(prediction)
            if len(batch) >= CHUNK:
                Prediction.objects.bulk_update(batch, fields)
                done += len(batch)
                batch = []
                job.beat(progress_done=done)
                pause_between_steps()
        Prediction.objects.bulk_update(batch, fields)
        missing = _add_missing(run, gold, seen, unavailable)
        if not gold.multiple_choice:  # WiLoVa's third metric: reported unavailable unless its model is on disk
            unavailable["parity:bertscore"] = metrics.bertscore_unavailable(gold.language)
        job.beat(force=True, progress_done=total, stage="Computing intervals")
        scored = [
            (model, scenario, item_id, scores)
            for model, scenario, item_id, scores in Prediction.objects.filter(run=run).values_list(
                "model", "scenario", "item_id", "scores"
            )
        ]
        results = scoring.results_rows(scored, gold, draws=run.bootstrap_draws, seed=run.seed, beat=job.beat)
        results += scoring.change_rows(scored, gold)
        results += scoring.odds_ratio_rows(scored, gold)
        counts = {
            **run.counts,
            "predictions": total,
            "failed_calls": Prediction.objects.filter(run=run).exclude(error="").count(),
            "missing": missing,
            "left_out_no_gold": sorted({item_id for _, _, item_id, scores in scored if not scores}),
            "unavailable": unavailable,
            "extraction": _extraction_counts(run),
        }
        if annotators.STRATUM in gold.strata:
            counts["annotator_unknown"] = unknown_authors
        comparisons = scoring.comparison_rows(scored, gold, draws=run.bootstrap_draws, seed=run.seed)
        job.finish(results=results, comparisons=comparisons, counts=counts, progress_done=total, stage="")
    except JobLost:
        return None
    except Exception as error:
        logger.exception("Evaluation run %s failed", run_id)
        job.fail(error)
    return EvaluationRun.objects.get(pk=run_id)


def _add_missing(
    run: EvaluationRun, gold: ReleaseGold, seen: dict[tuple[str, str], set[str]], unavailable: dict[str, str]
) -> dict[str, Any]:
    """A `missing` row for every release item of a (model, scenario) the file answered, but not for this item."""
    found: dict[str, Any] = {}
    rows = []
    for (model, scenario), answered in sorted(seen.items()):
        absent = sorted(gold.scenarios[scenario] - answered)
        if absent:
            found[f"{model} · {scenario}"] = {"count": len(absent), "ids": absent[:200]}
        for item_id in absent:
            item = gold.items[item_id]
            extracted = scoring.extract(None, item, scenario, gold)
            rows.append(
                Prediction(
                    run=run,
                    item_id=item_id,
                    item_kind=item.kind,
                    scenario=scenario,
                    model=model,
                    **extracted,
                    scores=scoring.score(extracted, item, gold, unavailable),
                )
            )
    Prediction.objects.bulk_create(rows, batch_size=CHUNK)
    return found


def _extraction_counts(run: EvaluationRun) -> dict[str, dict[str, int]]:
    counts: dict[str, dict[str, int]] = {}
    for model, scenario, outcome, tolerant in Prediction.objects.filter(run=run).values_list(
        "model", "scenario", "extraction", "extraction_tolerant"
    ):
        cell = counts.setdefault(f"{model} · {scenario}", {})
        cell[outcome] = cell.get(outcome, 0) + 1
        if tolerant:
            cell[f"tolerant {tolerant}"] = cell.get(f"tolerant {tolerant}", 0) + 1
    return counts


def evaluation_runs(project: Project) -> Any:
    return EvaluationRun.objects.filter(project=project).select_related("created_by", "release")


def evaluation_run_results_csv(run: EvaluationRun) -> str:
    """The tidy rows with the run's provenance in every line (one file stands on its own)."""
    stream = io.StringIO()
    writer = csv_writer(stream)
    provenance = ("project", "release_version", "manifest_sha256", "run")
    odds = any("cells" in row for row in run.results)  # entity runs: each odds ratio's 2×2 table in columns
    cells = scoring.ODDS_CELLS if odds else ()
    writer.writerow([*provenance, *RESULT_FIELDS, *cells])
    for row in run.results:
        writer.writerow(
            [
                run.project.slug,
                run.release_version,
                run.manifest_sha256,
                run.pk,
                *(row.get(f) for f in RESULT_FIELDS),
                *((row.get("cells") or {}).get(name, "") for name in cells),
            ]
        )
    return stream.getvalue()


def evaluation_run_results_document(run: EvaluationRun) -> dict[str, Any]:
    """`results.json`: the run's provenance, counts, tidy result rows and paired comparisons."""
    return {
        "provenance": evaluation_run_provenance(run),
        "counts": run.counts,
        "results": run.results,
        "comparisons": run.comparisons,
    }


DOWNLOAD_TYPES = {**tables.FORMATS, "json": "application/json"}


def evaluation_run_results_download(run: EvaluationRun, fmt: str) -> str:
    """The run's results in one format: `csv` (tidy rows with provenance), `json` (results.json), `md` or `tex`
    (each study's tables as the run page shows them, captions stating modes, intervals and n)."""
    if fmt == "csv":
        return evaluation_run_results_csv(run)
    if fmt == "json":
        return orjson.dumps(evaluation_run_results_document(run), option=orjson.OPT_INDENT_2).decode()
    if fmt not in tables.FORMATS:
        raise InvalidInput(f"No download as {fmt[:20]!r}: csv, json, md or tex.", field="format")
    grids = tables.run_grids(
        run.results, run.comparisons, draws=run.bootstrap_draws, seed=run.seed, unit=resampled_by(run.project.kind)
    )
    title = (
        f"{run.project.name}: evaluation run {run.pk} on release v{run.release_version} "
        f"(manifest sha256 {run.manifest_sha256[:16]})"
    )
    # The run's finished judgments follow its tables (judging imports this module: imported here, not at the top).
    from evaluation.judging import judgment_grid

    grids += [judgment_grid(judgment) for judgment in run.judgments.filter(status=JobStatus.DONE).order_by("id")]
    return tables.render(grids, fmt, title=title)


def evaluation_run_provenance(run: EvaluationRun) -> dict[str, Any]:
    return {
        "project": run.project.slug,
        "release_version": run.release_version,
        "manifest_sha256": run.manifest_sha256,
        "release_files": run.release_files,
        "source": run.source,
        "file_name": run.file_name,
        "file_sha256": run.file_sha256,
        "bootstrap_draws": run.bootstrap_draws,
        "seed": run.seed,
        "intervals": "Wilson 95% for proportions; percentile bootstrap 95% for means, resampled by "
        + resampled_by(run.project.kind),
        "resampled_by": resampled_by(run.project.kind),
        "modes": scoring.MODE_NAMES,
        **({"annotator_stratum": annotators.PROVENANCE} if run.project.kind == "wikipedia_qa" else {}),
        **({"odds_ratios": ODDS_RATIO_METHOD} if run.project.kind == "entity_qa" else {}),
        **({"prompt_template": _template_provenance(run.prompt_template)} if run.prompt_template else {}),
    }


def _template_provenance(name: str) -> dict[str, str]:
    """A generated validation run's prompt template: its name, its text and the text's sha256."""
    text = VALIDATION_TEMPLATES.get(name, "")
    return {"name": name, "text": text, "sha256": hashlib.sha256(text.encode()).hexdigest() if text else ""}


def upload_limit() -> int:
    return int(settings.EVALUATION_MAX_BYTES)


def too_large(size: int) -> InvalidInput:
    return InvalidInput(f"The file is {size:,} bytes; uploads are limited to {upload_limit():,} bytes.", field="file")


def evaluation_run_rescore(*, run: EvaluationRun, enqueue: bool = True) -> EvaluationRun:
    """Put a failed or scored run back in the queue (the stored predictions are scored again from the start)."""
    if run.status == JobStatus.REFUSED:
        raise InvalidState("This upload was refused; there is nothing to score. Upload the corrected file.")
    if run.is_active:
        raise InvalidState("This run is already waiting or being scored.")
    EvaluationRun.objects.filter(pk=run.pk).update(status=JobStatus.PENDING, error="", progress_done=0)
    run.refresh_from_db()
    if enqueue:
        job_enqueue("evaluation", run.pk)
    return run


# Generation: the release's prompts sent to a model endpoint

GENERATED_KINDS = ("wikipedia_qa", "validation")


def generation_scenarios(kind: str, gold: ReleaseGold | None = None) -> list[str]:
    """The scenarios a generated run of this kind can ask (of this release's, when given)."""
    if kind not in GENERATED_KINDS:
        return []
    offered = [VALIDATION_SCENARIO] if kind == "validation" else list(WIKIPEDIA_SCENARIOS)
    return [scenario for scenario in offered if gold is None or scenario in gold.scenarios]


def evaluation_run_generate(
    *,
    project: Project,
    release: Release,
    endpoint: Endpoint,
    user: User | None,
    scenarios: list[str],
    item_limit: int | None = None,
    bootstrap_draws: int = 1000,
    enqueue: bool = True,
) -> EvaluationRun:
    """A run that asks `endpoint` every prompt of the chosen scenarios (a job), then scores the answers."""
    if release.project_id != project.pk or endpoint.project_id != project.pk:
        raise InvalidInput("The release and the endpoint must belong to this project.", field="endpoint")
    if project.kind not in GENERATED_KINDS:
        raise InvalidInput(
            "Generation sends a release's prompts; only Wikipedia QA and validation releases have them. "
            "Upload the model's answers for other kinds.",
            field="release",
        )
    if not 0 <= bootstrap_draws <= MAX_DRAWS:
        raise InvalidInput(f"Bootstrap draws must be between 0 and {MAX_DRAWS:,}.", field="bootstrap_draws")
    gold = release_gold(release)
    unknown = sorted(set(scenarios) - set(gold.scenarios))
    if not scenarios or unknown:
        known = ", ".join(generation_scenarios(project.kind, gold))
        raise InvalidInput(f"Choose scenarios of this release ({known}).", field="scenarios")
    template = VALIDATION_TEMPLATE if gold.validation else ""
    total = sum(min(len(gold.scenarios[s]), item_limit or len(gold.scenarios[s])) for s in scenarios)
    with transaction.atomic():
        run = EvaluationRun.objects.create(
            project=project,
            release=release,
            release_version=release.version,
            manifest_sha256=_manifest_sha256(release),
            release_files=gold.files,
            source=EvaluationRun.Source.ENDPOINT,
            endpoint=endpoint,
            endpoint_name=endpoint.name,
            endpoint_model=endpoint.model,
            scenarios=[s for s in generation_scenarios(project.kind, gold) if s in scenarios],
            prompt_template=template,
            item_limit=item_limit,
            bootstrap_draws=bootstrap_draws,
            created_by=user,
            progress_total=total,
            counts={"lines": 0, "predictions": 0, "to_ask": total},
        )
        if enqueue:
            job_enqueue("evaluation", run.pk)
    return run


def _generate(run: EvaluationRun, job: Any, gold: ReleaseGold) -> None:
    """Ask the endpoint every prompt not answered yet; each answer is stored as it arrives (a resumed run skips
    the stored ones and asks the failed ones again; replies paid for before come from the endpoint's cache)."""
    from endpoints.services import ModelRequest, endpoint_complete_many

    endpoint = run.endpoint
    if endpoint is None:
        raise InvalidState(f"The endpoint {run.endpoint_name!r} was deleted; this run cannot ask it any more.")
    endpoint.project = run.project
    model = run.endpoint_name
    Prediction.objects.filter(run=run, error__gt="").delete()
    stored = set(Prediction.objects.filter(run=run).values_list("scenario", "item_id"))
    asked: list[tuple[str, str, str]] = []
    for scenario in run.scenarios:
        prompts = release_prompts(run.release, scenario, run.release_files, run.prompt_template)
        if run.item_limit is not None:
            prompts = prompts[: run.item_limit]
        asked += [(scenario, item_id, prompt) for item_id, prompt in prompts if (scenario, item_id) not in stored]
    done = len(stored)
    job.beat(force=True, progress_done=done, stage=f"Asking {model} ({len(asked):,} prompts left)")

    def store(index: int, completion: Any) -> None:
        nonlocal done
        scenario, item_id, _ = asked[index]
        Prediction.objects.create(
            run=run,
            item_id=item_id,
            item_kind=gold.items[item_id].kind,
            scenario=scenario,
            model=model,
            prediction=completion.text if completion.ok else "",
            call_id=completion.call_id or None,
            error="" if completion.ok else f"{completion.error_kind}: {completion.error}"[:2000] or "failed",
        )
        done += 1
        job.beat(progress_done=done)

    endpoint_complete_many(
        endpoint=endpoint,
        purpose="generation",
        requests=[ModelRequest(prompt=prompt) for _, _, prompt in asked],
        user=run.created_by,
        on_result=store,
    )
    job.beat(force=True, progress_done=done, stage="Scoring the answers")


def evaluation_run_predictions(
    run: EvaluationRun, *, model: str = "", scenario: str = "", extraction: str = "", item_id: str = ""
) -> Any:
    """The run's per-item rows (answer, extraction outcome, scores), filtered, in a stable order."""
    rows = Prediction.objects.filter(run=run)
    if item_id:
        rows = rows.filter(item_id=item_id)
    if model:
        rows = rows.filter(model=model)
    if scenario:
        rows = rows.filter(scenario=scenario)
    if extraction:
        rows = rows.filter(extraction=extraction)
    return rows.order_by("model", "scenario", "item_id", "id")


def evaluation_run_choices(run: EvaluationRun) -> dict[str, list[str]]:
    """The models and scenarios a run has, for its filters."""
    rows = Prediction.objects.filter(run=run)
    return {
        "models": sorted(set(rows.values_list("model", flat=True).distinct())),
        "scenarios": sorted(set(rows.values_list("scenario", flat=True).distinct())),
    }
