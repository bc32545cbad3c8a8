"""Versioned judge rubrics (YES / NO; three-way CORRECT / INCORRECT / NOT_ATTEMPTED) and the judge checked by people
on a seeded sample of k items per model × scenario, with agreement per judge column (the stub server as judge)."""

from __future__ import annotations

import csv as csv_module
import io
import json

import pytest
from django.core.management import call_command
from django.urls import reverse
from statsmodels.stats.inter_rater import cohens_kappa as statsmodels_kappa
from statsmodels.stats.proportion import proportion_confint

from evaluation import judging, services
from evaluation.models import EvaluationRun, JudgeCheckSample, JudgedItem, JudgePrompt, Judgment, Prediction
from tests.conftest import api_as
from tests.endpoints.conftest import make_endpoint
from tests.evaluation.conftest import predictions, prompt_lines
from tests.evaluation.test_judge import _scripted, item_of, scored_run

SCENARIOS = ["question_only", "standard_lead"]


# The three-way rubric


@pytest.mark.parametrize(
    ("output", "rubric", "verdict"),
    [
        ("CORRECT", "three_way", "correct"),
        (" INCORRECT\n", "three_way", "incorrect"),
        ("NOT_ATTEMPTED", "three_way", "not_attempted"),
        ("Correct", "three_way", None),  # case is exact
        ("CORRECT.", "three_way", None),
        ("NOT ATTEMPTED", "three_way", None),  # the word as written, underscore and all
        ("The answer is CORRECT", "three_way", None),
        ("YES", "three_way", None),  # another rubric's word is garbage here
        ("CORRECT", "yes_no", None),
        ("YES", "yes_no", "yes"),
        ("", "three_way", None),
    ],
)
def test_a_three_way_verdict_is_exactly_one_of_its_three_words(output, rubric, verdict):
    assert judging.verdict_of(output, rubric) == verdict


def test_each_rubric_has_its_own_prompt_versions_numbered_in_one_sequence(project, researcher):
    first = judging.judge_prompt_current(project)
    three = judging.judge_prompt_current(project, "three_way")
    assert (first.version, first.rubric, three.version, three.rubric) == (1, "yes_no", 2, "three_way")
    assert "NOT_ATTEMPTED" in three.text and all(name in three.text for name in judging.PLACEHOLDERS)
    edited = judging.judge_prompt_save(
        project=project, user=researcher, rubric="three_way", text="{question} {gold} {answer}: CORRECT?"
    )
    assert (edited.version, edited.rubric) == (3, "three_way")
    assert judging.judge_prompt_current(project).pk == first.pk  # YES / NO keeps its own current version
    with pytest.raises(judging.InvalidInput):
        judging.judge_prompt_save(project=project, user=researcher, rubric="five_way", text="{question}{gold}{answer}")
    # the edit form shows a rubric nobody used yet in its default wording, without saving a version
    JudgePrompt.objects.filter(rubric="three_way").delete()
    shown = {each["rubric"]: each for each in judging.judge_prompts_shown(project)}
    assert shown["three_way"]["version"] is None and shown["three_way"]["text"] == judging.DEFAULT_THREE_WAY_PROMPT
    assert not JudgePrompt.objects.filter(rubric="three_way").exists()


@pytest.fixture
def three_way_world(yue_release, researcher, coordinator, model_stub):
    """Six answers, the sixth without an answer tag; the judge says CORRECT, "Correct." then INCORRECT, garbage
    every time, NOT_ATTEMPTED, and YES every time (not a three-way word)."""
    lines = prompt_lines(yue_release, "question_only")
    scripts = {
        lines[0]["question"]: ["CORRECT"],
        lines[1]["question"]: ["Correct.", "INCORRECT"],
        lines[2]["question"]: ["It depends"] * 10,
        lines[3]["question"]: [" NOT_ATTEMPTED\n"],
        lines[4]["question"]: ["YES"] * 10,
    }
    model_stub.answer(lambda request: _scripted(scripts, request))
    unanswered = lines[5]["id"]
    run = scored_run(
        yue_release,
        researcher,
        answer=lambda line: "no tags" if line["id"] == unanswered else f"<answer>{line['answer_standard']}</answer>",
    )
    endpoint = make_endpoint(yue_release.project, coordinator, model_stub, name="judge")
    return {"run": run, "endpoint": endpoint, "lines": lines}


def test_a_three_way_judgment_counts_unanswered_not_attempted_garbage_unscored_and_reports_three_rates(
    three_way_world, researcher, model_stub
):
    world = three_way_world
    judgment = judging.judgment_start(
        run=world["run"], endpoint=world["endpoint"], user=researcher, rubric="three_way", enqueue=False
    )
    judging.judgment_run(judgment_id=judgment.pk)

    judgment.refresh_from_db()
    assert judgment.status == "done", judgment.error
    assert (judgment.rubric, judgment.prompt.rubric, judgment.prompt_version) == ("three_way", "three_way", 1)
    assert all("NOT_ATTEMPTED" in request.prompt_text for request in model_stub.requests)
    verdicts = [item_of(judgment, line) for line in world["lines"]]
    assert [(v.verdict, v.asks) for v in verdicts[:5]] == [
        ("correct", 1), ("incorrect", 2), ("unscored", 10), ("not_attempted", 1), ("unscored", 10)
    ]  # fmt: skip
    assert (verdicts[5].verdict, verdicts[5].asked, verdicts[5].asks) == ("not_attempted", False, 0)
    assert len(model_stub.requests) == 1 + 2 + 10 + 1 + 10  # the unanswered item is never asked

    (row,) = judging.judgment_results(judgment)
    assert (row["correct"], row["incorrect"], row["not_attempted"], row["unscored"], row["failed"]) == (1, 1, 2, 2, 0)
    assert (row["yes"], row["no"], row["not_asked"]) == (0, 0, 1)
    # correct over all graded: 1 / 4; not attempted: 2 / 4; correct given attempted: 1 / 2 (Wilson, as statsmodels)
    assert (row["n"], row["accuracy"], row["not_attempted_rate"]) == (4, 0.25, 0.5)
    assert (row["n_attempted"], row["correct_given_attempted"]) == (2, 0.5)
    for value, low, high, successes, n in (
        ("accuracy", "ci_low", "ci_high", 1, 4),
        ("not_attempted_rate", "not_attempted_ci_low", "not_attempted_ci_high", 2, 4),
        ("correct_given_attempted", "attempted_ci_low", "attempted_ci_high", 1, 2),
    ):
        expected = proportion_confint(successes, n, method="wilson")
        assert (row[low], row[high]) == (pytest.approx(expected[0]), pytest.approx(expected[1])), value
    # provenance in every CSV line: prompt version and rubric
    rows = list(csv_module.DictReader(io.StringIO(judging.judgment_csv(judgment))))
    assert {(r["prompt_version"], r["rubric"]) for r in rows} == {("1", "three_way")}
    assert sorted(r["verdict"] for r in rows) == [
        "correct", "incorrect", "not_attempted", "not_attempted", "unscored", "unscored"
    ]  # fmt: skip


def test_a_yes_no_judgment_and_a_three_way_one_of_the_same_run_keep_their_own_prompts(
    three_way_world, researcher, model_stub
):
    world = three_way_world
    model_stub.answer(lambda request: "YES" if "YES if" in request.prompt_text else "CORRECT")
    yes_no = judging.judgment_start(run=world["run"], endpoint=world["endpoint"], user=researcher, enqueue=False)
    judging.judgment_run(judgment_id=yes_no.pk)
    three = judging.judgment_start(
        run=world["run"], endpoint=world["endpoint"], user=researcher, rubric="three_way", enqueue=False
    )
    judging.judgment_run(judgment_id=three.pk)

    (plain,) = judging.judgment_results(yes_no)
    (graded,) = judging.judgment_results(three)
    assert (plain["rubric"], plain["yes"], plain["no"], plain["accuracy"]) == ("yes_no", 5, 1, 5 / 6)
    assert plain["not_attempted_rate"] is None and plain["correct"] == 0
    assert (graded["correct"], graded["not_attempted"], graded["accuracy"]) == (5, 1, 5 / 6)
    assert graded["correct_given_attempted"] == 1.0
    assert (yes_no.prompt_version, three.prompt_version) == (1, 2)


# Sampling k per scenario


def two_model_run(release, user) -> EvaluationRun:
    """A scored run of two models under two scenarios: four cells of six answers."""
    answer = lambda line: f"<answer>{line['answer_standard']}</answer>"  # noqa: E731
    data = predictions(release, answer, model="model-a", scenarios=SCENARIOS) + predictions(
        release, answer, model="model-b", scenarios=SCENARIOS
    )
    run = services.evaluation_run_create(project=release.project, release=release, user=user, data=data, enqueue=False)
    services.evaluation_run_score(run_id=run.pk)
    run.refresh_from_db()
    assert run.status == "done", run.error
    return run


def judged_directly(run: EvaluationRun, rubric: str = "yes_no", endpoint_name: str = "judge") -> Judgment:
    """A finished judgment whose verdicts are written here (no judge asked): in model-b · standard_lead, one call
    failed, one item had no answer and one output was unscored; the rest alternate between the rubric's first
    two verdicts."""
    prompt = judging.judge_prompt_current(run.project, rubric)
    judgment = Judgment.objects.create(
        run=run,
        endpoint_name=endpoint_name,
        endpoint_model="m",
        prompt=prompt,
        prompt_version=prompt.version,
        rubric=rubric,
        status="done",
    )
    first, second = {"yes_no": ("yes", "no"), "three_way": ("correct", "incorrect")}[rubric]
    rows = []
    predictions_of_run = Prediction.objects.filter(run=run).order_by("model", "scenario", "item_id")
    for index, prediction in enumerate(predictions_of_run):
        verdict, asked = (first if index % 2 else second), True
        if (prediction.model, prediction.scenario) == ("model-b", "standard_lead"):
            position = index % 6
            if position == 0:
                verdict = "error"
            elif position == 1:
                verdict, asked = judging.UNANSWERED[rubric], False
            elif position == 2:
                verdict = "unscored"
        rows.append(JudgedItem(judgment=judgment, prediction=prediction, verdict=verdict, asked=asked))
    JudgedItem.objects.bulk_create(rows)
    return judgment


def sampled_ids(judgment: Judgment) -> dict[tuple[str, str], set[str]]:
    found: dict[tuple[str, str], set[str]] = {}
    for item in JudgedItem.objects.filter(judgment=judgment, check_sample__isnull=False).select_related("prediction"):
        found.setdefault((item.prediction.model, item.prediction.scenario), set()).add(item.prediction.item_id)
    return found


def test_sampling_draws_k_per_cell_with_its_seed_fewer_where_a_cell_has_fewer_and_never_twice(
    yue_release, researcher, coordinator
):
    run = two_model_run(yue_release, researcher)
    judgment = judged_directly(run)

    sample = judging.judgment_sample(judgment=judgment, k=4, user=coordinator, seed=7)

    cells = {(cell["model"], cell["scenario"]): cell for cell in sample.cells}
    assert len(cells) == 4
    # model-b · standard_lead: a failed call and an unanswered item are not drawn; the unscored one may be
    assert cells[("model-b", "standard_lead")] == {
        "kind": "lead", "model": "model-b", "scenario": "standard_lead", "eligible": 4, "before": 0, "added": 4
    }  # fmt: skip
    assert all(cell["added"] == 4 and cell["eligible"] == 6 for key, cell in cells.items() if key[0] == "model-a")
    assert sample.added == 16 and (sample.k, sample.seed, sample.created_by) == (4, 7, coordinator)
    first = sampled_ids(judgment)
    assert {key: len(ids) for key, ids in first.items()} == dict.fromkeys(cells, 4)
    failed_or_unanswered = JudgedItem.objects.filter(judgment=judgment).exclude(asked=True, verdict__in=("yes", "no"))
    assert not failed_or_unanswered.filter(check_sample__isnull=False, asked=False).exists()
    assert not failed_or_unanswered.filter(check_sample__isnull=False, verdict="error").exists()

    # The same seed on another judgment of the same answers draws the same items.
    twin = judged_directly(run, endpoint_name="twin")
    judging.judgment_sample(judgment=twin, k=4, user=coordinator, seed=7)
    assert sampled_ids(twin) == first
    other = judged_directly(run, endpoint_name="other seed")
    judging.judgment_sample(judgment=other, k=4, user=coordinator, seed=8)
    assert sampled_ids(other) != first

    # Sampling again adds items not drawn before: k = 4 leaves 2 per six-item cell, and the short cell has none.
    again = judging.judgment_sample(judgment=judgment, k=4, user=coordinator, seed=7)
    cells = {(cell["model"], cell["scenario"]): cell for cell in again.cells}
    assert cells[("model-a", "question_only")] == {
        "kind": "lead", "model": "model-a", "scenario": "question_only", "eligible": 6, "before": 4, "added": 2
    }  # fmt: skip
    assert cells[("model-b", "standard_lead")]["added"] == 0 and again.added == 6
    second = sampled_ids(judgment)
    assert all(first[key] <= second[key] for key in first)
    assert JudgedItem.objects.filter(judgment=judgment, check_sample__isnull=False).count() == 16 + 6
    assert "fewer where a cell had fewer left" in judging.judgment_sample_summary(again)
    # k larger than every cell: whatever is left, nothing twice
    assert judging.judgment_sample(judgment=judgment, k=500, user=coordinator).added == 0

    with pytest.raises(judging.InvalidInput):
        judging.judgment_sample(judgment=judgment, k=0, user=coordinator)
    Judgment.objects.filter(pk=judgment.pk).update(status="running")
    judgment.refresh_from_db()
    with pytest.raises(judging.InvalidState):
        judging.judgment_sample(judgment=judgment, k=4, user=coordinator)


def test_the_queue_serves_sampled_items_first_and_agreement_is_shown_per_judge_column(
    yue_release, researcher, coordinator, reviewer
):
    run = two_model_run(yue_release, researcher)
    judgment = judged_directly(run)
    judging.judgment_sample(judgment=judgment, k=2, user=coordinator, seed=3)
    sampled = set(JudgedItem.objects.filter(judgment=judgment, check_sample__isnull=False).values_list("id", flat=True))
    assert len(sampled) == 8

    served = []
    for _ in range(8):
        item = judging.judged_item_next_to_check(judgment)
        assert item is not None
        item.judgment = judgment
        served.append(item.pk)
        judging.judged_item_check(item=item, user=reviewer, verdict="yes")  # the person says yes to everything
    assert set(served) == sampled  # every sampled item came before any other
    assert judging.judgment_check_progress(judgment) == {
        "sampled": 8, "sampled_checked": 8, "checked": 8, "checkable": 22
    }  # fmt: skip
    nxt = judging.judged_item_next_to_check(judgment)
    assert nxt is not None and nxt.pk not in sampled  # then the rest, as before

    rows = {(row["model"], row["scenario"]): row for row in judging.judgment_results(judgment)}
    for key, row in rows.items():
        agreement = row["agreement"]
        assert (agreement["checked"], agreement["sampled"], agreement["sampled_checked"]) == (2, 2, 2), key
        checked = JudgedItem.objects.filter(
            judgment=judgment, prediction__model=key[0], prediction__scenario=key[1]
        ).exclude(human="")
        pairs = [(item.verdict, item.human) for item in checked if item.verdict in ("yes", "no")]
        assert agreement["n"] == len(pairs) and agreement["small"]
        left = agreement["left_out"]
        assert agreement["n"] + left["unscored"] + left["failed"] + left["not_asked"] == 2  # nothing dropped
        table = agreement["table"]
        assert table == [[sum(1 for p in pairs if p == (a, b)) for b in ("yes", "no")] for a in ("yes", "no")]
        assert agreement["raw"]["value"] == pytest.approx(table[0][0] / len(pairs)) if pairs else True
    whole = judging.judgment_agreement(judgment)
    assert whole["checked"] == 8 and whole["sampled_checked"] == 8
    assert whole["n"] == sum(row["agreement"]["n"] for row in rows.values())


# Agreement on a 3×3 table


def gwet_ac1_by_hand(table: list[list[int]]) -> float:
    """Gwet (2008): AC1 = (pa − pe) / (1 − pe), pe = Σ_k π_k (1 − π_k) / (q − 1), π_k the mean of the two raters'
    marginal shares of category k."""
    n = sum(map(sum, table))
    q = len(table)
    pa = sum(table[k][k] for k in range(q)) / n
    shares = [(sum(table[k]) + sum(row[k] for row in table)) / (2 * n) for k in range(q)]
    pe = sum(share * (1 - share) for share in shares) / (q - 1)
    return (pa - pe) / (1 - pe)


def test_three_way_agreement_is_kappa_and_ac1_on_the_3x3_table(yue_release, researcher, coordinator, reviewer):
    """The whole pipeline (judge verdicts, people's checks) into a 3×3 table whose κ equals statsmodels' and whose
    AC1 equals Gwet's formula computed by hand."""
    table = [[10, 2, 1], [3, 8, 2], [0, 1, 5]]
    labels = ("correct", "incorrect", "not_attempted")
    pairs = [(labels[a], labels[b]) for a in range(3) for b in range(3) for _ in range(table[a][b])]
    found = judging.agreement_of(pairs, "three_way")
    theirs = statsmodels_kappa(table)
    assert found["table"] == table and found["labels"] == list(labels)
    assert found["kappa"]["value"] == pytest.approx(theirs.kappa)
    assert found["kappa"]["se"] == pytest.approx(theirs.std_kappa)
    assert (found["kappa"]["ci_low"], found["kappa"]["ci_high"]) == (
        pytest.approx(theirs.kappa_low),
        pytest.approx(theirs.kappa_upp),
    )
    assert found["ac1"]["value"] == pytest.approx(gwet_ac1_by_hand(table), abs=1e-12)
    assert found["raw"]["value"] == pytest.approx(23 / 32)

    # The same table through a three-way judgment that people checked
    run = scored_run(yue_release, researcher)
    prompt = judging.judge_prompt_current(run.project, "three_way")
    judgment = Judgment.objects.create(
        run=run, endpoint_name="j", endpoint_model="m", prompt=prompt, prompt_version=prompt.version,
        rubric="three_way", status="done",
    )  # fmt: skip
    template = Prediction.objects.filter(run=run).first()
    assert template is not None
    for index, (judge, person) in enumerate(pairs):
        prediction = Prediction.objects.create(
            run=run, item_id=f"x{index}", item_kind="lead", scenario="question_only", model="m3"
        )
        JudgedItem.objects.create(judgment=judgment, prediction=prediction, verdict=judge, human=person)
    whole = judging.judgment_agreement(judgment)
    assert whole["table"] == table and whole["kappa"]["value"] == pytest.approx(theirs.kappa)
    (row,) = [row for row in judging.judgment_results(judgment) if row["model"] == "m3"]
    assert row["agreement"]["ac1"]["value"] == pytest.approx(gwet_ac1_by_hand(table), abs=1e-12)
    assert not row["agreement"]["small"] and row["agreement"]["n"] == 32


def test_a_person_gives_the_rubrics_own_verdicts_only(yue_release, researcher, reviewer):
    run = scored_run(yue_release, researcher)
    judgment = judged_directly(run, "three_way")
    item = JudgedItem.objects.filter(judgment=judgment).first()
    assert item is not None
    item.judgment = judgment
    with pytest.raises(judging.InvalidInput, match="correct, incorrect or not_attempted"):
        judging.judged_item_check(item=item, user=reviewer, verdict="yes")
    assert judging.judged_item_check(item=item, user=reviewer, verdict="not_attempted").human == "not_attempted"
    assert judging.judged_item_override(item=item, user=reviewer, verdict="not_attempted").override == "not_attempted"
    (row,) = judging.judgment_results(judgment)
    assert row["overridden"] == 1


# Through the API and the pages


def test_the_api_starts_a_three_way_judgment_samples_and_a_reviewer_checks_without_seeing_the_judge(
    three_way_world, researcher, coordinator, reviewer, django_capture_on_commit_callbacks
):
    world = three_way_world
    api = api_as(coordinator)
    prompt = api.get("/api/projects/yue-cmn/evaluation/judge-prompt/?rubric=three_way").json()
    assert prompt["rubric"] == "three_way" and "NOT_ATTEMPTED" in prompt["text"]
    assert api.get("/api/projects/yue-cmn/evaluation/judge-prompt/?rubric=nine").status_code == 400
    base = f"/api/projects/yue-cmn/evaluation/runs/{world['run'].pk}/judgments/"

    with django_capture_on_commit_callbacks(execute=True):
        started = api.post(base, {"endpoint": world["endpoint"].pk, "rubric": "three_way"}, format="json")

    assert started.status_code == 202, started.json()
    url = f"{base}{started.json()['id']}/"
    detail = api.get(url).json()
    assert (detail["status"], detail["rubric"]) == ("done", "three_way")
    assert "NOT_ATTEMPTED" in detail["convention"]
    assert detail["results"][0]["correct"] == 1 and detail["results"][0]["agreement"]["n"] == 0

    sampled = api.post(f"{url}samples/", {"k": 3, "seed": 11}, format="json")
    assert sampled.status_code == 201, sampled.json()
    assert (sampled.json()["added"], sampled.json()["seed"], sampled.json()["created_by"]) == (3, 11, "coordinator")
    assert sampled.json()["cells"][0]["eligible"] == 5  # the unanswered item is not drawn
    assert api.get(f"{url}samples/").json()["count"] == 1
    assert api.post(f"{url}samples/", {"k": 0}, format="json").status_code == 400

    checker = api_as(reviewer)
    assert checker.get(url).status_code == 403  # a reviewer checks; the results are the researchers'
    for _ in range(3):
        nxt = checker.get(f"{url}check/next/").json()
        assert nxt["item"]["sampled"] and "verdict" not in nxt["item"] and nxt["question"]
        assert nxt["verdicts"] == ["correct", "incorrect", "not_attempted"]
        refused = checker.post(f"{url}items/{nxt['item']['id']}/check/", {"verdict": "yes"}, format="json")
        assert refused.status_code == 400
        done = checker.post(f"{url}items/{nxt['item']['id']}/check/", {"verdict": "correct"}, format="json")
        assert done.status_code == 200 and done.json()["human"] == "correct" and "verdict" not in done.json()
    progress = checker.get(f"{url}check/next/").json()["progress"]
    assert (progress["sampled"], progress["sampled_checked"]) == (3, 3)
    row = api.get(url).json()["results"][0]
    assert row["agreement"]["sampled_checked"] == 3
    assert row["agreement"]["n"] + sum(row["agreement"]["left_out"].values()) == 3


def test_the_pages_sample_check_by_rubric_keys_and_show_agreement_beside_the_judge_column(
    yue_release, researcher, coordinator, reviewer, client
):
    run = two_model_run(yue_release, researcher)
    judgment = judged_directly(run, "three_way")
    args = ["yue-cmn", run.pk, judgment.pk]
    client.force_login(coordinator)

    response = client.post(reverse("evaluation_judgment_sample", args=args), {"k": "2", "seed": "5"}, follow=True)

    assert response.status_code == 200
    content = response.content.decode()
    assert "Sampled 8 items (2 per scenario, seed 5)" in content
    assert 'id="judgment-rubric"' in content and "Correct / incorrect / not attempted" in content
    assert content.count('class="agreement-cell"') == 4 and "checked 0 of 2 sampled" in content
    bad = client.post(reverse("evaluation_judgment_sample", args=args), {"k": "x"}, follow=True)
    assert "whole numbers" in bad.content.decode()

    client.force_login(reviewer)
    check_url = reverse("evaluation_judge_check", args=args)
    page = client.get(check_url).content.decode()
    assert 'data-judge-key="c"' in page and 'data-judge-key="i"' in page and 'data-judge-key="a"' in page
    assert 'id="judge-agreement"' not in page and "Checked 0 of 8 sampled" in page
    for _ in range(8):
        item = client.get(check_url).context["item"]
        assert item.check_sample_id is not None
        client.post(check_url, {"item": item.pk, "verdict": "correct"}, HTTP_HX_REQUEST="true")
    assert "Checked 8 of 8 sampled" in client.get(check_url).content.decode()
    checks = client.get(reverse("evaluation_judge_checks", args=["yue-cmn"])).content.decode()
    assert "8 of 8 sampled" in checks

    client.force_login(coordinator)
    content = client.get(reverse("evaluation_judgment", args=args)).content.decode()
    assert content.count("checked 2 of 2 sampled") == 4 and "small n" in content and "AC1" in content
    assert "Person NOT_ATTEMPTED" in content  # the whole judgment's 3×3 table
    item = JudgedItem.objects.filter(judgment=judgment).first()
    assert item is not None
    row = client.post(
        reverse("evaluation_judged_override", args=[*args, item.pk]),
        {"verdict": "not_attempted"},
        HTTP_HX_REQUEST="true",
    )
    assert "Not attempted ✓ (restore)" in row.content.decode()


def test_the_judgments_page_starts_a_three_way_judgment_and_saves_its_prompt(
    three_way_world, researcher, client, django_capture_on_commit_callbacks
):
    world = three_way_world
    client.force_login(researcher)
    page_url = reverse("evaluation_judgments", args=["yue-cmn", world["run"].pk])
    page = client.get(page_url).content.decode()
    assert 'value="three_way"' in page and "NOT_ATTEMPTED" in page
    assert not JudgePrompt.objects.filter(rubric="three_way").exists()  # showing the form saves nothing

    saved = client.post(
        reverse("evaluation_judge_prompt", args=["yue-cmn"]),
        {"rubric": "three_way", "text": "Q {question} G {gold} A {answer}: CORRECT, INCORRECT or NOT_ATTEMPTED"},
    )
    assert saved.status_code == 302
    with django_capture_on_commit_callbacks(execute=True):
        started = client.post(page_url, {"endpoint": world["endpoint"].pk, "rubric": "three_way"})
    judgment = Judgment.objects.get(run=world["run"])
    assert started.status_code == 302 and judgment.rubric == "three_way"
    assert judgment.prompt.text.startswith("Q {question}")
    refused = client.post(page_url, {"endpoint": world["endpoint"].pk, "rubric": "ten_way"})
    assert refused.status_code == 400


# The commands


def test_the_sample_command_draws_and_prints_agreement_per_judge_column(yue_release, researcher, reviewer, capsys):
    run = two_model_run(yue_release, researcher)
    judgment = judged_directly(run)

    call_command("evaluation_judge_sample", "yue-cmn", str(judgment.pk), "--k", "3", "--seed", "9")

    out = capsys.readouterr().out
    assert "Sampled 12 items (3 per scenario, seed 9)" in out
    assert out.count("checked 0 of 3 sampled") == 4 and "n=0: nothing to compare" in out
    sample = JudgeCheckSample.objects.get(judgment=judgment)
    assert (sample.k, sample.seed, sample.added, sample.created_by) == (3, 9, 12, None)
    for item in JudgedItem.objects.filter(judgment=judgment, check_sample=sample):
        JudgedItem.objects.filter(pk=item.pk).update(human=item.verdict if item.verdict in ("yes", "no") else "yes")
    call_command("evaluation_judge_sample", "yue-cmn", str(judgment.pk), "--no-sample")
    out = capsys.readouterr().out
    assert "Sampled" not in out and "whole judgment: checked 12 of 12 sampled" in out and "κ" in out


def test_the_evaluate_command_judges_three_way_and_prints_the_three_rates(
    yue_release, coordinator, model_stub, tmp_path, capsys
):
    from tests.evaluation.conftest import write

    lines = prompt_lines(yue_release, "question_only")
    replies = ["CORRECT", "CORRECT", "CORRECT", "INCORRECT", "NOT_ATTEMPTED", "maybe"]
    scripts = {
        line["question"]: [reply] * (10 if reply == "maybe" else 1) for line, reply in zip(lines, replies, strict=True)
    }
    model_stub.answer(lambda request: _scripted(scripts, request))
    make_endpoint(yue_release.project, coordinator, model_stub, name="judge")
    path = write(
        tmp_path,
        "p.jsonl",
        predictions(
            yue_release, lambda line: f"<answer>{line['answer_standard']}</answer>", scenarios=["question_only"]
        ),
    )

    call_command(
        "evaluate", "yue-cmn", "1", str(path), "--out", str(tmp_path / "out"), "--draws", "0",
        "--judge", "judge", "--rubric", "three_way",
    )  # fmt: skip

    document = json.loads((tmp_path / "out" / "results.json").read_text(encoding="utf-8"))
    (row,) = document["judgment"]["results"]
    assert document["judgment"]["rubric"] == "three_way"
    assert (row["correct"], row["incorrect"], row["not_attempted"], row["unscored"], row["n"]) == (3, 1, 1, 1, 5)
    assert row["correct_given_attempted"] == pytest.approx(0.75)
    out = capsys.readouterr().out
    assert "rubric three_way" in out and "Question only: 60.0" in out and "not attempted 20.0" in out
    assert "correct given attempted 75.0" in out


# The run's downloads


def test_the_runs_markdown_and_latex_downloads_carry_each_finished_judgment_with_its_agreement(
    yue_release, researcher, coordinator, reviewer
):
    run = two_model_run(yue_release, researcher)
    judgment = judged_directly(run, rubric="three_way")
    judging.judgment_sample(judgment=judgment, k=2, user=coordinator, seed=3)
    for _ in range(2):
        item = judging.judged_item_next_to_check(judgment)
        assert item is not None
        item.judgment = judgment
        judging.judged_item_check(item=item, user=reviewer, verdict="correct")

    markdown = services.evaluation_run_results_download(run, "md")
    latex = services.evaluation_run_results_download(run, "tex")

    assert f"judgment {judgment.pk}, rubric Correct / incorrect / not attempted (SimpleQA)" in markdown
    header = next(line for line in markdown.splitlines() if line.startswith("| Kind · model · scenario"))
    assert "Judge: correct | Not attempted | Correct given attempted |" in header
    rows = {
        line.split(" | ")[0]: line for line in markdown.splitlines() if line.startswith("| Lead-section QA · model-")
    }
    assert len(rows) == 4  # two models × two scenarios
    failing = next(line for label, line in rows.items() if "model-b" in label and "standard lead" in label)
    assert "1 unscored, 1 failed" in failing  # left out of n, counted beside it
    checked = [line for line in rows.values() if "not checked" not in line]
    assert checked and all("κ" in line and "AC1" in line and "small n" in line for line in checked)
    assert "\\caption{LLM judge judge (m), judgment" in latex
    # An unfinished judgment is not a result: it is left out of the downloads.
    Judgment.objects.filter(pk=judgment.pk).update(status="running")
    assert "LLM judge" not in services.evaluation_run_results_download(run, "md")
