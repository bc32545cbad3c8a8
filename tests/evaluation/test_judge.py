"""An LLM judge of a run (the stub server as judge): exact YES/NO after re-asks, unscored counted and shown, a resumed
judgment asks nothing twice; people check the judge and override it; agreement maths against published values."""

from __future__ import annotations

import csv as csv_module
import io

import pytest
from django.urls import reverse
from statsmodels.stats.inter_rater import cohens_kappa as statsmodels_kappa

from endpoints.models import ModelCall
from evaluation import judging, services
from evaluation.models import EvaluationRun, JudgedItem, Judgment
from evaluation.statistics import cohens_kappa, gwet_ac1
from tests.conftest import api_as
from tests.endpoints.conftest import make_endpoint
from tests.evaluation.conftest import predictions, prompt_lines
from tests.model_stub import StubReply

HOSTILE = "<script>alert(1)</script>" + "x" * 5000


def scored_run(release, user, answer=None) -> EvaluationRun:
    """A scored upload run, question only, every answer its gold (or `answer(line)`)."""
    answer = answer or (lambda line: f"<answer>{line['answer_standard']}</answer>")
    data = predictions(release, answer, scenarios=["question_only"])
    run = services.evaluation_run_create(project=release.project, release=release, user=user, data=data, enqueue=False)
    services.evaluation_run_score(run_id=run.pk)
    run.refresh_from_db()
    assert run.status == "done", run.error
    return run


@pytest.fixture
def judged_world(yue_release, researcher, coordinator, model_stub):
    """Six answers; the judge says YES, "Yes." then NO, garbage every time, hostile text, and NO twice."""
    lines = prompt_lines(yue_release, "question_only")
    questions = [line["question"] for line in lines]
    scripts = {
        questions[0]: ["YES"],
        questions[1]: ["Yes.", "NO"],
        questions[2]: ["Hmm, I think the answer is partly right"] * 10,
        questions[3]: [HOSTILE] * 10,
        questions[4]: [" NO\n"],
        questions[5]: [StubReply.server_error(), "YES"],
    }
    asked: dict[str, int] = {}

    def reply(request):
        question = next(q for q in questions if f"Question: {q}\n" in request.prompt_text)
        count = asked.get(question, 0)
        asked[question] = count + 1
        script = scripts[question]
        return script[min(count, len(script) - 1)]

    model_stub.answer(reply)
    run = scored_run(yue_release, researcher)
    endpoint = make_endpoint(yue_release.project, coordinator, model_stub, name="judge", concurrency=2)
    return {"run": run, "endpoint": endpoint, "questions": questions, "lines": lines, "asked": asked}


def item_of(judgment: Judgment, line: dict) -> JudgedItem:
    return JudgedItem.objects.get(judgment=judgment, prediction__item_id=line["id"])


def test_the_judge_is_asked_until_it_says_exactly_yes_or_no_and_the_rest_is_unscored(
    judged_world, researcher, settings, model_stub
):
    settings.MODEL_MAX_ATTEMPTS = 1  # a failed call stays failed in this run
    world = judged_world
    judgment = judging.judgment_start(run=world["run"], endpoint=world["endpoint"], user=researcher, enqueue=False)

    judging.judgment_run(judgment_id=judgment.pk)

    judgment.refresh_from_db()
    assert judgment.status == "done", judgment.error
    lines = world["lines"]
    first, second, garbage, hostile, spaced, failed = (item_of(judgment, line) for line in lines)
    assert (first.verdict, first.asks, first.outputs) == ("yes", 1, ["YES"])
    assert (second.verdict, second.asks, second.outputs) == ("no", 2, ["Yes.", "NO"])
    assert (garbage.verdict, garbage.asks) == ("unscored", 10)
    assert hostile.verdict == "unscored" and all(len(output) == judging.MAX_OUTPUT_CHARS for output in hostile.outputs)
    assert spaced.verdict == "no"  # surrounding blanks aside, exactly NO
    assert failed.verdict == "error" and failed.error
    # the protocol: temperature 0.1, question, gold and answer in the prompt
    sent = model_stub.requests[0].json
    assert sent["temperature"] == 0.1
    assert lines[0]["answer_standard"] in model_stub.requests[0].prompt_text or any(
        lines[0]["answer_standard"] in request.prompt_text for request in model_stub.requests
    )
    assert ModelCall.objects.filter(purpose="judge").count() == len(model_stub.requests)
    (row,) = judging.judgment_results(judgment)
    assert (row["yes"], row["no"], row["unscored"], row["failed"]) == (1, 2, 2, 1)
    assert row["n"] == 3 and row["accuracy"] == pytest.approx(1 / 3)
    assert row["ci_low"] < 1 / 3 < row["ci_high"]

    # Resumed: only the failed item is asked again; every other item keeps its verdict and costs nothing.
    sent_before = len(model_stub.requests)
    judging.judgment_resume(judgment=judgment, enqueue=False)
    judging.judgment_run(judgment_id=judgment.pk)

    assert len(model_stub.requests) == sent_before + 1
    assert item_of(judgment, lines[5]).verdict == "yes"
    (row,) = judging.judgment_results(judgment)
    assert (row["yes"], row["no"], row["unscored"], row["failed"]) == (2, 2, 2, 0)

    # A second judgment with the same judge and prompt: every reply comes from the cache, nothing is sent.
    again = judging.judgment_start(run=world["run"], endpoint=world["endpoint"], user=researcher, enqueue=False)
    judging.judgment_run(judgment_id=again.pk)
    assert len(model_stub.requests) == sent_before + 1
    assert [r["yes"] for r in judging.judgment_results(again)] == [2]
    assert ModelCall.objects.filter(purpose="judge", cached=True).exists()


def test_an_item_without_an_answer_is_counted_no_without_asking(yue_release, researcher, coordinator, model_stub):
    run = scored_run(yue_release, researcher, answer=lambda line: "no tags at all")
    endpoint = make_endpoint(yue_release.project, coordinator, model_stub)
    judgment = judging.judgment_start(run=run, endpoint=endpoint, user=researcher, enqueue=False)

    judging.judgment_run(judgment_id=judgment.pk)

    assert model_stub.requests == []
    (row,) = judging.judgment_results(judgment)
    assert (row["no"], row["not_asked"], row["accuracy"]) == (6, 6, 0.0)


def test_the_judge_prompt_is_versioned_and_a_judgment_records_its_version(judged_world, researcher):
    project = judged_world["run"].project
    first = judging.judge_prompt_current(project)
    assert first.version == 1 and all(name in first.text for name in judging.PLACEHOLDERS)
    with pytest.raises(judging.InvalidInput):
        judging.judge_prompt_save(project=project, user=researcher, text="Is {answer} right?")
    second = judging.judge_prompt_save(
        project=project, user=researcher, text="Q: {question}\nGold: {gold}\nA: {answer}\nYES or NO?"
    )
    assert second.version == 2
    assert judging.judge_prompt_save(project=project, user=researcher, text=second.text).pk == second.pk

    judgment = judging.judgment_start(
        run=judged_world["run"], endpoint=judged_world["endpoint"], user=researcher, enqueue=False
    )

    assert (judgment.prompt_version, judgment.endpoint_name, judgment.endpoint_model) == (
        2,
        "judge",
        "qwen2.5-7b-instruct",
    )


def test_braces_in_an_answer_are_only_text():
    filled = judging.judge_prompt_fill(
        "{question}|{gold}|{answer}", question="{gold}", gold="g", answer="{0} {x} {answer}"
    )
    assert filled == "{gold}|g|{0} {x} {answer}"


def test_people_check_the_judge_by_page_and_agreement_is_shown(judged_world, researcher, client):
    world = judged_world
    judgment = judging.judgment_start(run=world["run"], endpoint=world["endpoint"], user=researcher, enqueue=False)
    judging.judgment_run(judgment_id=judgment.pk)
    client.force_login(researcher)
    check_url = reverse("evaluation_judge_check", args=["yue-cmn", world["run"].pk, judgment.pk])

    marked = []
    for _ in range(6):
        page = client.get(check_url)
        assert page.status_code == 200
        item = page.context["item"]
        if item is None:
            break
        # the person calls every answer correct: agreeing with the judge's YES, not with its NO
        response = client.post(check_url, {"item": item.pk, "verdict": "yes"})
        assert response.status_code in (200, 302)
        marked.append(item.pk)

    assert len(set(marked)) == 6  # the failed call was retried and answered YES
    agreement = judging.judgment_agreement(judgment)
    assert agreement["n"] == 4 and agreement["table"] == [[2, 0], [2, 0]]  # the unscored two are left out
    assert agreement["raw"]["value"] == pytest.approx(0.5)
    assert agreement["checked"] == 6
    page = client.get(reverse("evaluation_judgment", args=["yue-cmn", world["run"].pk, judgment.pk]))
    assert page.status_code == 200
    content = page.content.decode()
    assert 'id="judge-agreement"' in content and "Gwet" in content and "irrCAC" in content
    assert "<script>alert(1)" not in content


def test_an_override_counts_instead_of_the_judge_and_a_second_click_restores_it(judged_world, researcher):
    api = api_as(researcher)
    world = judged_world
    judgment = judging.judgment_start(run=world["run"], endpoint=world["endpoint"], user=researcher, enqueue=False)
    judging.judgment_run(judgment_id=judgment.pk)
    no_item = item_of(judgment, world["lines"][1])
    url = (
        f"/api/projects/yue-cmn/evaluation/runs/{world['run'].pk}/judgments/{judgment.pk}/items/{no_item.pk}/override/"
    )

    response = api.post(url, {"verdict": "yes"}, format="json")

    assert response.status_code == 200, response.json()
    assert response.json()["override"] == "yes" and response.json()["effective"] == "yes"
    (row,) = judging.judgment_results(judgment)
    assert (row["yes"], row["no"], row["overridden"]) == (3, 1, 1)  # the failed call was retried: YES
    assert api.post(url, {"verdict": "yes"}, format="json").json()["override"] == ""
    (row,) = judging.judgment_results(judgment)
    assert (row["yes"], row["no"], row["overridden"]) == (2, 2, 0)


def test_a_judgment_through_the_api_runs_as_a_job(judged_world, researcher, django_capture_on_commit_callbacks):
    api = api_as(researcher)
    world = judged_world
    base = f"/api/projects/yue-cmn/evaluation/runs/{world['run'].pk}/judgments/"

    with django_capture_on_commit_callbacks(execute=True):
        response = api.post(base, {"endpoint": world["endpoint"].pk}, format="json")

    assert response.status_code == 202, response.json()
    detail = api.get(f"{base}{response.json()['id']}/").json()
    assert detail["status"] == "done" and detail["prompt_version"] == 1
    assert detail["results"][0]["unscored"] == 2
    items = api.get(f"{base}{response.json()['id']}/items/").json()
    assert items["count"] == 6
    assert {item["verdict"] for item in items["results"]} == {"yes", "no", "unscored"}
    csv = api.get(f"{base}{response.json()['id']}/verdicts.csv")
    rows = list(csv_module.reader(io.StringIO(csv.content.decode())))
    assert csv["Content-Type"].startswith("text/csv") and len(rows) == 7
    assert rows[0][:9] == [
        "run", "judgment", "judge", "judge_model", "prompt_version", "item_id", "model", "scenario", "verdict"
    ]  # fmt: skip
    assert all(row[2:5] == ["judge", "qwen2.5-7b-instruct", "1"] for row in rows[1:])
    assert sorted(row[8] for row in rows[1:]) == ["no", "no", "unscored", "unscored", "yes", "yes"]


# Agreement maths


def test_kappa_and_its_interval_match_statsmodels():
    for table in ([[20, 5], [10, 15]], [[118, 5], [2, 0]], [[40, 3], [7, 12]], [[13, 0, 0], [0, 20, 7], [0, 4, 56]]):
        ours = cohens_kappa(table)
        theirs = statsmodels_kappa(table)
        assert ours.value == pytest.approx(theirs.kappa)
        assert ours.se == pytest.approx(theirs.std_kappa)
        assert (ours.low, ours.high) == (pytest.approx(theirs.kappa_low), pytest.approx(theirs.kappa_upp))


def test_ac1_and_its_interval_match_gwets_published_example():
    """irrCAC README (Gwet), cont3x3abstractors: gwet.ac1.table gives AC1 0.8493305, se 0.04321747,
    95% interval (0.764, 0.935); kappa2.table gives κ 0.7964094 with se 0.05891072."""
    ac1 = gwet_ac1([[13, 0, 0], [0, 20, 7], [0, 4, 56]])
    assert ac1.value == pytest.approx(0.8493305, abs=5e-8)
    assert ac1.se == pytest.approx(0.04321747, abs=5e-9)
    assert (round(ac1.low, 3), round(ac1.high, 3)) == (0.764, 0.935)
    assert cohens_kappa([[13, 0, 0], [0, 20, 7], [0, 4, 56]]).se == pytest.approx(0.05891072, abs=5e-9)


def test_ac1_stays_high_under_skew_while_kappa_collapses_and_an_empty_table_is_undefined():
    """Gwet 2008's two-rater case: 118 / 5 / 2 / 0 of 125 gives AC1 0.940777, κ −0.023392."""
    assert gwet_ac1([[118, 5], [2, 0]]).value == pytest.approx(0.940777, abs=1e-6)
    assert cohens_kappa([[118, 5], [2, 0]]).value == pytest.approx(-0.023392, abs=1e-6)
    assert judging.agreement_of([])["kappa"]["value"] is None
    assert judging.agreement_of([])["raw"]["value"] is None
    assert cohens_kappa([[5, 0], [0, 0]]).value is None  # no variation: κ undefined, not 0


def test_the_judge_pages_start_a_judgment_and_override_one_item_in_place(
    judged_world, researcher, client, django_capture_on_commit_callbacks
):
    world = judged_world
    client.force_login(researcher)
    start_url = reverse("evaluation_judgments", args=["yue-cmn", world["run"].pk])
    assert client.get(start_url).status_code == 200

    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(start_url, {"endpoint": world["endpoint"].pk})

    judgment = Judgment.objects.get(run=world["run"])
    assert response.status_code == 302 and response["Location"].endswith(f"/judge/{judgment.pk}/")
    judgment.refresh_from_db()
    assert judgment.status == "done", judgment.error
    assert client.post(start_url, {"endpoint": 987654}).status_code == 404  # not an endpoint of the project
    item = item_of(judgment, world["lines"][0])
    url = reverse("evaluation_judged_override", args=["yue-cmn", world["run"].pk, judgment.pk, item.pk])

    row = client.post(url, {"verdict": "no"}, HTTP_HX_REQUEST="true")

    assert row.status_code == 200
    assert row.content.decode().lstrip().startswith(f'<tr id="judged-{item.pk}">')
    assert "Incorrect ✓ (restore)" in row.content.decode()
    item.refresh_from_db()
    assert item.override == "no" and item.effective == "no" and item.verdict == "yes"
    client.post(url, {"verdict": "no"}, HTTP_HX_REQUEST="true")
    item.refresh_from_db()
    assert item.override == "" and item.effective == "yes"


def test_items_without_an_answer_are_not_offered_for_checking(yue_release, researcher, coordinator, model_stub):
    run = scored_run(yue_release, researcher, answer=lambda line: "no tags at all")
    endpoint = make_endpoint(yue_release.project, coordinator, model_stub)
    judgment = judging.judgment_start(run=run, endpoint=endpoint, user=researcher, enqueue=False)
    judging.judgment_run(judgment_id=judgment.pk)

    assert judging.judged_item_next_to_check(judgment) is None
    assert judging.judgment_agreement(judgment)["n"] == 0


def test_the_prompt_is_edited_on_the_judge_page_and_a_waiting_judgment_polls_its_progress(
    judged_world, researcher, client
):
    world = judged_world
    client.force_login(researcher)
    judge_page = reverse("evaluation_judgments", args=["yue-cmn", world["run"].pk])
    save = reverse("evaluation_judge_prompt", args=["yue-cmn"])

    response = client.post(save, {"text": "{question} / {gold} / {answer}: YES or NO", "next": judge_page})
    elsewhere = client.post(save, {"text": "{question} {gold} {answer}", "next": "https://evil.example/"})

    assert response.status_code == 302 and response["Location"] == judge_page
    assert elsewhere["Location"] == reverse("evaluation_runs", args=["yue-cmn"])
    assert judging.judge_prompt_current(world["run"].project).version == 3
    judgment = judging.judgment_start(run=world["run"], endpoint=world["endpoint"], user=researcher, enqueue=False)
    status = client.get(
        reverse("evaluation_judgment", args=["yue-cmn", world["run"].pk, judgment.pk]), HTTP_HX_REQUEST="true"
    )
    content = status.content.decode()
    assert 'id="judgment-status"' in content and "hx-get" in content and "0 of 6 answers judged" in content
    assert judgment.prompt_version == 3


def test_the_evaluate_command_judges_the_run_it_scored_with_the_pages_service(
    yue_release, coordinator, model_stub, tmp_path, capsys
):
    """`evaluate … --judge NAME`: the same judgment as the page (re-asks, unscored counted), in the calling
    process; accuracy and its Wilson interval equal statsmodels' for the counts the judge gave."""
    import json

    from django.core.management import call_command
    from statsmodels.stats.proportion import proportion_confint

    from tests.evaluation.conftest import write

    lines = prompt_lines(yue_release, "question_only")
    scripts = {line["question"]: ["YES"] for line in lines[:4]}
    scripts[lines[4]["question"]] = ["Yes.", "NO"]
    scripts[lines[5]["question"]] = ["maybe"] * 10
    model_stub.answer(lambda request: _scripted(scripts, request))
    make_endpoint(yue_release.project, coordinator, model_stub, name="judge")
    data = predictions(
        yue_release, lambda line: f"<answer>{line['answer_standard']}</answer>", scenarios=["question_only"]
    )
    path = write(tmp_path, "predictions.jsonl", data)

    call_command(
        "evaluate", "yue-cmn", "1", str(path), "--out", str(tmp_path / "out"), "--draws", "0", "--judge", "judge"
    )

    document = json.loads((tmp_path / "out" / "results.json").read_text(encoding="utf-8"))
    judged = document["judgment"]
    assert (judged["endpoint"], judged["prompt_version"], judged["temperature"]) == ("judge", 1, 0.1)
    (row,) = judged["results"]
    assert (row["yes"], row["no"], row["unscored"], row["n"]) == (4, 1, 1, 5)
    low, high = proportion_confint(4, 5, method="wilson")
    assert row["accuracy"] == pytest.approx(0.8)
    assert (row["ci_low"], row["ci_high"]) == (pytest.approx(low), pytest.approx(high))
    verdicts = list(csv_module.DictReader(io.StringIO((tmp_path / "out" / "judgment.csv").read_text("utf-8"))))
    assert sorted(v["verdict"] for v in verdicts) == ["no", "unscored", "yes", "yes", "yes", "yes"]
    out = capsys.readouterr().out
    assert "LLM judge judge" in out and "Question only: 80.0" in out and "n=5" in out
    assert JudgedItem.objects.filter(judgment_id=judged["id"]).count() == 6


def _scripted(scripts: dict[str, list[str]], request) -> str:
    """The judge's next scripted output for the question in this prompt (re-asks walk down the script)."""
    question = next(q for q in scripts if f"Question: {q}\n" in request.prompt_text)
    script = scripts[question]
    reply = script[0]
    if len(script) > 1:
        scripts[question] = script[1:]
    return reply


def test_the_evaluate_command_names_the_projects_endpoints_when_the_judge_is_unknown(yue_release, tmp_path):
    from django.core.management import call_command
    from django.core.management.base import CommandError

    from tests.evaluation.conftest import write

    path = write(tmp_path, "predictions.jsonl", predictions(yue_release, lambda line: "", scenarios=["question_only"]))

    with pytest.raises(CommandError, match="No model endpoint 'nobody' in yue-cmn"):
        call_command("evaluate", "yue-cmn", "1", str(path), "--out", str(tmp_path / "out"), "--judge", "nobody")
    assert not EvaluationRun.objects.exists()
