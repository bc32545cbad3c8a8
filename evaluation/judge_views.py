"""Judge pages: a run's judgments (start one, edit the judge prompt), one judgment's results, items and agreement
with people, the check of the judge one item at a time by keyboard, and the run compared with a baseline run."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.db.models import Count, Q
from django.http import HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_http_methods, require_POST
from django.views.decorators.vary import vary_on_headers

from annotation.access import project_access
from common.errors import ServiceError
from common.requests import SignedInRequest
from endpoints.access import get_endpoint_for_user
from endpoints.models import Endpoint
from evaluation import comparing, judging
from evaluation.access import (
    CHECKERS,
    ROLES,
    evaluation_access,
    get_judged_item_for_user,
    get_judgment_for_user,
    get_run_for_user,
    may_evaluate,
)
from evaluation.gold import resampled_by
from evaluation.models import RUBRIC_VERDICTS, Judgment, Rubric, Verdict
from evaluation.services import evaluation_run_gold

ITEMS_PER_PAGE = 50


@login_required
@require_http_methods(["GET", "POST"])
def judgments(request: SignedInRequest, slug: str, run_id: int) -> HttpResponse:
    """A run's judgments; POST starts one with the chosen endpoint, rubric and that rubric's current prompt."""
    access, run = get_run_for_user(request.user, slug, run_id)
    error = ""
    if request.method == "POST":
        try:
            endpoint_id = int(request.POST.get("endpoint", "0"))
        except ValueError:
            endpoint_id = 0
        try:
            _, endpoint = get_endpoint_for_user(request.user, slug, endpoint_id, role=ROLES)
            judgment = judging.judgment_start(
                run=run, endpoint=endpoint, user=request.user, rubric=request.POST.get("rubric", Rubric.YES_NO)
            )
        except ServiceError as failure:
            error = failure.message
        else:
            messages.success(request, f"{judgment.endpoint_name} is judging {judgment.progress_total:,} answers.")
            return redirect("evaluation_judgment", slug, run.pk, judgment.pk)
    context = {
        "project": access.project,
        "membership": access.membership,
        "run": run,
        "judgments": Judgment.objects.filter(run=run).select_related("created_by"),
        "endpoints": Endpoint.objects.filter(project=access.project).order_by("name"),
        "prompts": judging.judge_prompts_shown(access.project),
        "chosen_rubric": request.POST.get("rubric", Rubric.YES_NO),
        "error": error,
    }
    return render(request, "evaluation/judgments.html", context, status=400 if error else 200)


@login_required
@require_POST
def judge_prompt(request: SignedInRequest, slug: str) -> HttpResponse:
    """Save the judge prompt of a rubric as a new version (the next judgment with that rubric uses it; earlier ones
    keep theirs)."""
    access = evaluation_access(request.user, slug)
    try:
        prompt = judging.judge_prompt_save(
            project=access.project,
            user=request.user,
            text=request.POST.get("text", ""),
            rubric=request.POST.get("rubric", Rubric.YES_NO),
        )
    except ServiceError as error:
        messages.error(request, error.message)
    else:
        messages.success(request, f"Judge prompt v{prompt.version} ({prompt.get_rubric_display()}) saved.")
    back = request.POST.get("next", "")
    if back.startswith(f"/projects/{slug}/evaluation/"):  # only back to a page of this project's evaluation
        return redirect(back)
    return redirect("evaluation_runs", slug)


@login_required
@vary_on_headers("HX-Request")
def judgment_detail(request: SignedInRequest, slug: str, run_id: int, judgment_id: int) -> HttpResponse:
    access, run, judgment = get_judgment_for_user(request.user, slug, run_id, judgment_id)
    verdict = request.GET.get("verdict", "")
    verdict = verdict if verdict in Verdict.values else ""
    context = {
        "project": access.project,
        "membership": access.membership,
        "run": run,
        "judgment": judgment,
        "results": judging.judgment_results(judgment) if not judgment.is_active else [],
        "convention": judging.RESULTS_CONVENTION[Rubric(judgment.rubric)],
        "rubric_verdicts": _verdict_choices(judgment),
        "agreement": judging.judgment_agreement(judgment),
        "progress": judging.judgment_check_progress(judgment),
        "samples": judgment.check_samples.select_related("created_by"),
        "default_k": judging.DEFAULT_SAMPLE_K,
        "page": Paginator(judging.judgment_items(judgment, verdict=verdict), ITEMS_PER_PAGE).get_page(
            request.GET.get("page")
        ),
        "verdicts": [*_verdict_choices(judgment), *[(v, label) for v, label in Verdict.choices if v in LEFT_OUT]],
        "chosen": verdict,
        "answer_lang": access.project.standard_language,
    }
    template = "evaluation/judgment.html#status" if request.htmx else "evaluation/judgment.html"
    return render(request, template, context)


def _verdict_choices(judgment: Judgment) -> list[tuple[str, str]]:
    """The rubric's verdicts a person gives, with their labels and keys (check, override)."""
    labels = dict(Verdict.choices)
    return [(value, labels[value]) for value in RUBRIC_VERDICTS[Rubric(judgment.rubric)]]


LEFT_OUT = (Verdict.UNSCORED, Verdict.ERROR)
CHECK_KEYS = {
    Verdict.YES: ("y", "Correct"),
    Verdict.NO: ("n", "Incorrect"),
    Verdict.CORRECT: ("c", "Correct"),
    Verdict.INCORRECT: ("i", "Incorrect"),
    Verdict.NOT_ATTEMPTED: ("a", "Not attempted"),
}


@login_required
@require_POST
def judgment_sample(request: SignedInRequest, slug: str, run_id: int, judgment_id: int) -> HttpResponse:
    """Sample k judged items per scenario (per model) into the check queue, with a recorded seed."""
    _, run, judgment = get_judgment_for_user(request.user, slug, run_id, judgment_id)
    try:
        k = int(request.POST.get("k", "") or judging.DEFAULT_SAMPLE_K)
        seed_text = request.POST.get("seed", "").strip()
        seed = int(seed_text) if seed_text else None
    except ValueError:
        messages.error(request, "k and the seed are whole numbers.")
    else:
        try:
            sample = judging.judgment_sample(judgment=judgment, k=k, user=request.user, seed=seed)
        except ServiceError as error:
            messages.error(request, error.message)
        else:
            messages.success(request, judging.judgment_sample_summary(sample))
    return redirect("evaluation_judgment", slug, run.pk, judgment.pk)


@login_required
def judgment_csv(request: SignedInRequest, slug: str, run_id: int, judgment_id: int) -> HttpResponse:
    _, run, judgment = get_judgment_for_user(request.user, slug, run_id, judgment_id)
    response = HttpResponse(judging.judgment_csv(judgment), content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{slug}-run{run.pk}-judgment{judgment.pk}.csv"'
    return response


@login_required
@require_POST
def judgment_resume(request: SignedInRequest, slug: str, run_id: int, judgment_id: int) -> HttpResponse:
    _, run, judgment = get_judgment_for_user(request.user, slug, run_id, judgment_id)
    try:
        judging.judgment_resume(judgment=judgment)
    except ServiceError as error:
        messages.error(request, error.message)
    return redirect("evaluation_judgment", slug, run.pk, judgment.pk)


@login_required
@require_POST
def judged_item_override(
    request: SignedInRequest, slug: str, run_id: int, judgment_id: int, judged_id: int
) -> HttpResponse:
    """Override the judge on one item; the same button again restores the judge's verdict."""
    access, judgment, item = get_judged_item_for_user(request.user, slug, run_id, judgment_id, judged_id)
    try:
        judging.judged_item_override(item=item, user=request.user, verdict=request.POST.get("verdict", ""))
    except ServiceError as error:
        return HttpResponse(error.message, status=400)
    if request.htmx:
        context = {
            "project": access.project,
            "run": judgment.run,
            "judgment": judgment,
            "row": item,
            "rubric_verdicts": _verdict_choices(judgment),
        }
        return render(request, "evaluation/judgment.html#item-row", context)
    return redirect("evaluation_judgment", slug, run_id, judgment_id)


@login_required
@require_http_methods(["GET", "POST"])
def judge_check(request: SignedInRequest, slug: str, run_id: int, judgment_id: int) -> HttpResponse:
    """A person's own call on the judged items, one at a time, the sampled ones first, each in the judgment's sample
    order (y / n; c / i / a for three-way), the judge's verdict hidden so it does not lead; POST saves and shows the
    next item. Reviewers (native speakers) check as well as researchers and coordinators."""
    access, run, judgment = get_judgment_for_user(request.user, slug, run_id, judgment_id, role=CHECKERS)
    if request.method == "POST":
        try:
            judged_id = int(request.POST.get("item", "0"))
        except ValueError:
            judged_id = 0
        _, _, checked = get_judged_item_for_user(request.user, slug, run_id, judgment_id, judged_id, role=CHECKERS)
        try:
            judging.judged_item_check(item=checked, user=request.user, verdict=request.POST.get("verdict", ""))
        except ServiceError as error:
            return HttpResponse(error.message, status=400)
        if not request.htmx:
            return redirect("evaluation_judge_check", slug, run_id, judgment_id)
    gold, problem = None, ""
    item = judging.judged_item_next_to_check(judgment)
    if item is not None:
        try:
            gold = evaluation_run_gold(run).items.get(item.prediction.item_id)
        except ServiceError as error:  # the release's files changed on disk: say so, never show other gold
            problem = error.message
    context = {
        "project": access.project,
        "membership": access.membership,
        "run": run,
        "judgment": judgment,
        "item": item,
        "gold": gold,
        "problem": problem,
        "evaluator": may_evaluate(access),
        "agreement": judging.judgment_agreement(judgment) if may_evaluate(access) else None,
        "progress": judging.judgment_check_progress(judgment),
        "keys": [(value, *CHECK_KEYS[Verdict(value)]) for value in RUBRIC_VERDICTS[Rubric(judgment.rubric)]],
        "answer_lang": access.project.standard_language,
    }
    template = "evaluation/judge_check.html#check" if request.htmx else "evaluation/judge_check.html"
    return render(request, template, context)


@login_required
def judge_checks(request: SignedInRequest, slug: str) -> HttpResponse:
    """The judgments of the project with items sampled for people to check, and how far the checking is (the
    reviewers' way in to the check queue)."""
    access = project_access(request.user, slug, role=CHECKERS)
    found = (
        Judgment.objects.filter(run__project=access.project, items__check_sample__isnull=False)
        .select_related("run")
        .annotate(
            sampled=Count("items", filter=Q(items__check_sample__isnull=False)),
            sampled_checked=Count("items", filter=Q(items__check_sample__isnull=False) & ~Q(items__human="")),
        )
        .order_by("-created_at", "-id")
    )
    context = {"project": access.project, "membership": access.membership, "judgments": found}
    return render(request, "evaluation/judge_checks.html", context)


@login_required
def run_compare(request: SignedInRequest, slug: str, run_id: int) -> HttpResponse:
    """This run item by item against a baseline run of the same release: flips, regressions first."""
    access, run = get_run_for_user(request.user, slug, run_id)
    options = comparing.compare_options(run)
    comparison = None
    error = ""
    baseline_id = request.GET.get("baseline", "")
    if baseline_id.isdigit():
        try:
            _, baseline = get_run_for_user(request.user, slug, int(baseline_id))
            comparison = comparing.runs_compare(
                run=run,
                baseline=baseline,
                measure=request.GET.get("measure", ""),
                model=request.GET.get("model", "")[:200],
                baseline_model=request.GET.get("baseline_model", "")[:200],
                scenario=request.GET.get("scenario", "")[:200],
            )
        except ServiceError as failure:
            error = failure.message
    context = {
        "project": access.project,
        "membership": access.membership,
        "run": run,
        "resampled_by": resampled_by(access.project.kind),
        "options": options,
        "comparison": comparison,
        "chosen": request.GET,
        "error": error,
    }
    return render(request, "evaluation/compare.html", context, status=400 if error else 200)
