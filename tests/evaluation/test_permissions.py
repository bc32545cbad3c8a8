"""Every evaluation page and API route × every kind of visitor.

Who may do what: researchers and coordinators of the project (and superusers) list, start, open, score again and
download evaluation runs; members with other roles get 403, non-members 404, anonymous visitors the sign-in page
(pages) or 403 (API). Checking an LLM judge (the check queue, the next item, a person's verdict, the list of judge
checks) is open to reviewers too: the native speakers.
"""

from __future__ import annotations

import pytest
from django.urls import reverse

from evaluation.models import EvaluationRun, JudgedItem, JudgePrompt, Judgment, Prediction
from tests.exports.conftest import release_world  # noqa: F401  (the fixture)
from tests.security.harness import LOGIN, api_cells, check_api, check_pages, page_cells

# Access rules: the same on both engines, so they run on the embedded default only.
pytestmark = pytest.mark.one_engine

# name: (method, statuses in the order of ROLES: anonymous, outsider, annotator, reviewer, coordinator, superuser)
PAGE_EXPECTED: dict[str, tuple[str, tuple[int, ...]]] = {
    "evaluation_runs": ("get", (LOGIN, 404, 403, 403, 200, 200)),
    "local_check_settings": ("get", (LOGIN, 404, 403, 403, 200, 200)),  # coordinators only (researchers: 403)
    "evaluation_run_create": ("post", (LOGIN, 404, 403, 403, 400, 400)),  # no file: the form again, with errors
    "evaluation_run_generate": ("post", (LOGIN, 404, 403, 403, 400, 400)),  # no endpoint: the form again
    "evaluation_run": ("get", (LOGIN, 404, 403, 403, 200, 200)),
    "evaluation_items": ("get", (LOGIN, 404, 403, 403, 200, 200)),
    # One item's drill-down, and *gold looks wrong* on it (the world's item is in no project: the form again, 400).
    "evaluation_item": ("get", (LOGIN, 404, 403, 403, 200, 200)),
    "evaluation_gold_flag": ("post", (LOGIN, 404, 403, 403, 400, 400)),
    "evaluation_run_score": ("post", (LOGIN, 404, 403, 403, 302, 302)),
    "evaluation_csv": ("get", (LOGIN, 404, 403, 403, 200, 200)),
    "evaluation_results": ("get", (LOGIN, 404, 403, 403, 200, 200)),  # Markdown, LaTeX, results.json
    "evaluation_leaderboard_download": ("get", (LOGIN, 404, 403, 403, 200, 200)),
    # The LLM judge: a run's judgments (start one), the prompt (a new version; an empty one is refused and the page
    # shown again), one judgment, resume it, check it item by item, override one item (no verdict: 400), compare.
    "evaluation_judgments": ("get", (LOGIN, 404, 403, 403, 200, 200)),
    "evaluation_judge_prompt": ("post", (LOGIN, 404, 403, 403, 302, 302)),
    "evaluation_judgment": ("get", (LOGIN, 404, 403, 403, 200, 200)),
    "evaluation_judgment_resume": ("post", (LOGIN, 404, 403, 403, 302, 302)),
    "evaluation_judgment_csv": ("get", (LOGIN, 404, 403, 403, 200, 200)),
    "evaluation_judge_check": ("get", (LOGIN, 404, 403, 200, 200, 200)),  # reviewers check the judge
    "evaluation_judge_checks": ("get", (LOGIN, 404, 403, 200, 200, 200)),
    "evaluation_judgment_sample": ("post", (LOGIN, 404, 403, 403, 302, 302)),  # k 20 by default
    "evaluation_judged_override": ("post", (LOGIN, 404, 403, 403, 400, 400)),
    "evaluation_compare": ("get", (LOGIN, 404, 403, 403, 200, 200)),
    "evaluation_leaderboard": ("get", (LOGIN, 404, 403, 403, 200, 200)),
    "evaluation_nativqa": ("get", (LOGIN, 404, 403, 403, 200, 200)),
}

JUDGMENT = "projects/{slug}/evaluation/runs/{run_id}/judgments/{judgment_id}/"
ITEM = "projects/{slug}/evaluation/runs/{run_id}/items/{release_item}/"

API_ENDPOINTS: list[tuple[str, str, dict | None, tuple[int, ...]]] = [
    # method, path, body, statuses in the order of ROLES
    ("get", "projects/{slug}/evaluation/runs/", None, (403, 404, 403, 403, 200, 200)),
    ("get", "projects/{slug}/local-knowledge-check/", None, (403, 404, 403, 403, 200, 200)),
    ("put", "projects/{slug}/local-knowledge-check/", {}, (403, 404, 403, 403, 400, 400)),  # `enabled` missing
    ("post", "projects/{slug}/evaluation/runs/", {}, (403, 404, 403, 403, 415, 415)),  # a file comes as multipart
    ("post", "projects/{slug}/evaluation/runs/generate/", {}, (403, 404, 403, 403, 400, 400)),
    ("get", "projects/{slug}/evaluation/runs/{run_id}/", None, (403, 404, 403, 403, 200, 200)),
    ("get", "projects/{slug}/evaluation/runs/{run_id}/predictions/", None, (403, 404, 403, 403, 200, 200)),
    ("get", "projects/{slug}/evaluation/runs/{run_id}/results.csv", None, (403, 404, 403, 403, 200, 200)),
    ("get", "projects/{slug}/evaluation/runs/{run_id}/results.md", None, (403, 404, 403, 403, 200, 200)),
    ("get", ITEM, None, (403, 404, 403, 403, 200, 200)),
    ("post", ITEM + "gold-flags/", {}, (403, 404, 403, 403, 400, 400)),  # no note
    ("get", "projects/{slug}/evaluation/leaderboard.tex", None, (403, 404, 403, 403, 200, 200)),
    ("get", "projects/{slug}/evaluation/judge-prompt/", None, (403, 404, 403, 403, 200, 200)),
    ("post", "projects/{slug}/evaluation/judge-prompt/", {}, (403, 404, 403, 403, 400, 400)),
    ("get", "projects/{slug}/evaluation/runs/{run_id}/judgments/", None, (403, 404, 403, 403, 200, 200)),
    ("post", "projects/{slug}/evaluation/runs/{run_id}/judgments/", {}, (403, 404, 403, 403, 400, 400)),
    ("get", JUDGMENT, None, (403, 404, 403, 403, 200, 200)),
    ("get", JUDGMENT + "verdicts.csv", None, (403, 404, 403, 403, 200, 200)),
    ("post", JUDGMENT + "resume/", {}, (403, 404, 403, 403, 202, 202)),
    ("get", JUDGMENT + "items/", None, (403, 404, 403, 403, 200, 200)),
    ("post", JUDGMENT + "items/{judged_id}/check/", {}, (403, 404, 403, 400, 400, 400)),  # reviewers check too
    ("get", JUDGMENT + "check/next/", None, (403, 404, 403, 200, 200, 200)),
    ("get", JUDGMENT + "samples/", None, (403, 404, 403, 403, 200, 200)),
    ("post", JUDGMENT + "samples/", {}, (403, 404, 403, 403, 201, 201)),
    ("post", JUDGMENT + "items/{judged_id}/override/", {}, (403, 404, 403, 403, 400, 400)),
    ("get", "projects/{slug}/evaluation/runs/{run_id}/compare/", None, (403, 404, 403, 403, 400, 400)),  # no baseline
    ("get", "projects/{slug}/evaluation/leaderboard/", None, (403, 404, 403, 403, 200, 200)),
    ("get", "projects/{slug}/evaluation/nativqa/", None, (403, 404, 403, 403, 200, 200)),
]  # fmt: skip


@pytest.fixture
def evaluation_world(release_world):  # noqa: F811
    """The release world's published v1 with one scored (empty) run on it."""
    run = EvaluationRun.objects.create(
        project=release_world["project"],
        release=release_world["published"],
        release_version=release_world["published"].version,
        manifest_sha256="",
        status="done",
    )
    judgment, judged = judged_objects(run)
    return {
        **release_world,
        "run_id": run.pk,
        "judgment_id": judgment.pk,
        "judged_id": judged.pk,
        "release_item": judged.prediction.item_id,
    }


def judged_objects(run: EvaluationRun) -> tuple[Judgment, JudgedItem]:
    """A finished judgment of `run` with one judged item (what the judge routes address)."""
    prompt = JudgePrompt.objects.create(project=run.project, version=1, text="{question} {gold} {answer}")
    judgment = Judgment.objects.create(
        run=run, endpoint_name="judge", endpoint_model="m", prompt=prompt, prompt_version=1, status="done"
    )
    prediction = Prediction.objects.create(run=run, item_id="x", item_kind="lead", scenario="question_only", model="m")
    judged = JudgedItem.objects.create(judgment=judgment, prediction=prediction, verdict="yes", outputs=["YES"])
    return judgment, judged


def page_url(name: str, world: dict) -> str:
    ids = {"slug": world["slug"], "run_id": world["run_id"]}
    if name in {
        "evaluation_judgment",
        "evaluation_judgment_resume",
        "evaluation_judge_check",
        "evaluation_judgment_csv",
        "evaluation_judgment_sample",
    }:
        return reverse(name, kwargs={**ids, "judgment_id": world["judgment_id"]})
    if name == "evaluation_results":
        return reverse(name, kwargs={**ids, "fmt": "tex"})
    if name == "evaluation_leaderboard_download":
        return reverse(name, kwargs={"slug": world["slug"], "fmt": "md"})
    if name in {"evaluation_item", "evaluation_gold_flag"}:
        return reverse(name, kwargs={**ids, "release_item": world["release_item"]})
    if name == "evaluation_judged_override":
        return reverse(name, kwargs={**ids, "judgment_id": world["judgment_id"], "judged_id": world["judged_id"]})
    if name in {
        "evaluation_run",
        "evaluation_items",
        "evaluation_run_score",
        "evaluation_csv",
        "evaluation_judgments",
        "evaluation_compare",
    }:
        return reverse(name, kwargs=ids)
    return reverse(name, kwargs={"slug": world["slug"]})


def test_each_evaluation_page_answers_each_visitor_as_the_table_says(evaluation_world):
    cells = page_cells(PAGE_EXPECTED, lambda name: page_url(name, evaluation_world))
    check_pages(evaluation_world["users"], cells)


def test_each_evaluation_api_route_answers_each_visitor_as_the_table_says(evaluation_world):
    check_api(evaluation_world["users"], api_cells(API_ENDPOINTS, evaluation_world))
