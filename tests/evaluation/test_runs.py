"""Researchers upload predictions against a release through the API and pages; the results are right and pinned."""

from __future__ import annotations

import importlib.util
import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command
from django.urls import reverse

from evaluation.models import EvaluationRun, Prediction
from exports import services as releases
from tests.conftest import api_as
from tests.evaluation.conftest import predictions, prompt_lines, write


def upload(api, slug: str, data: bytes, **extra):
    fields = {"release": 1, "file": SimpleUploadedFile("predictions.jsonl", data), **extra}
    return api.post(f"/api/projects/{slug}/evaluation/runs/", fields, format="multipart")


def scored(api, slug, data, django_capture_on_commit_callbacks, **extra) -> dict:
    with django_capture_on_commit_callbacks(execute=True):
        response = upload(api, slug, data, **extra)
    assert response.status_code == 202, response.json()
    run = api.get(f"/api/projects/{slug}/evaluation/runs/{response.json()['id']}/").json()
    assert run["status"] == "done", run["error"]
    return run


def overall(run: dict, metric: str, mode: str, scenario: str = "question_only", model: str = "oracle") -> dict:
    return next(
        row
        for row in run["results"]
        if (row["metric"], row["mode"], row["scenario"], row["model"], row["stratum"])
        == (metric, mode, scenario, model, "all")
    )


def test_gold_answers_score_100_empty_answers_0_on_the_cantonese_release(
    yue_release, researcher, django_capture_on_commit_callbacks
):
    api = api_as(researcher)
    oracle = predictions(yue_release, lambda line: f"<answer>{line['answer_standard']}</answer>")
    empty = predictions(yue_release, lambda line: "<answer></answer>", model="empty")

    run = scored(api, "yue-cmn", oracle + empty, django_capture_on_commit_callbacks)

    metrics = {(row["mode"], row["metric"]) for row in run["results"]}
    jieba = importlib.util.find_spec("jieba") is not None
    assert metrics == {
        *([("parity", "rouge_l")] if jieba else []),
        ("parity", "chrf_pp"),
        ("recommended", "rouge_l"),
        ("recommended", "rouge_l_folded"),
        ("recommended", "chrf"),
        ("recommended", "chrf_pp"),
        ("recommended", "exact_match"),
        ("recommended", "exact_match_folded"),
    }
    for scenario in ("question_only", "standard_lead", "local_lead", "both_leads"):
        for mode, metric in metrics:
            assert overall(run, metric, mode, scenario)["mean"] == pytest.approx(1.0), (scenario, metric)
            assert overall(run, metric, mode, scenario)["n"] == 6
            assert overall(run, metric, mode, scenario, model="empty")["mean"] == 0.0
    # Chinese parity ROUGE-L needs jieba: without it, it says so instead of showing a number made another way
    assert jieba or "jieba" in run["counts"]["unavailable"]["parity:rouge_l"]
    assert run["counts"]["extraction"]["empty · local_lead"] == {"empty": 6}


def test_a_traditional_answer_scores_through_the_folded_variant(
    yue_release, researcher, django_capture_on_commit_callbacks
):
    """Answers copied from the Cantonese lead are traditional; the gold is simplified."""
    api = api_as(researcher)
    copied = predictions(yue_release, lambda line: f"<answer>{line['answer_local']}（標準）</answer>")

    run = scored(api, "yue-cmn", copied, django_capture_on_commit_callbacks)

    raw = overall(run, "exact_match", "recommended")
    folded = overall(run, "exact_match_folded", "recommended")
    assert raw["mean"] < 1.0
    assert folded["mean"] == pytest.approx(1.0)
    assert overall(run, "rouge_l_folded", "recommended")["mean"] == pytest.approx(1.0)


def test_bavarian_release_parity_rouge_is_the_studys_package_and_german_is_never_lowercased(
    bar_world, django_capture_on_commit_callbacks
):
    api = api_as(bar_world["researcher"])
    release = bar_world["release"]
    oracle = predictions(release, lambda line: f"<Answer>{line['answer_standard']}</Answer>")
    lower = predictions(release, lambda line: f"<answer>{line['answer_standard'].lower()}</answer>", model="lower")
    shuffled_gold = {
        line["id"]: other["answer_standard"]
        for line, other in zip(
            prompt_lines(release, "question_only"), reversed(prompt_lines(release, "question_only")), strict=True
        )
    }
    shuffled = predictions(release, lambda line: f"<answer>{shuffled_gold[line['id']]}</answer>", model="shuffled")

    run = scored(api, "bar-deu", oracle + lower + shuffled, django_capture_on_commit_callbacks)

    for mode, metric in (("parity", "rouge_l"), ("parity", "chrf_pp"), ("recommended", "rouge_l")):
        assert overall(run, metric, mode)["mean"] == pytest.approx(1.0, abs=1e-6)
        assert overall(run, metric, mode, model="shuffled")["mean"] < 0.3
    # "Landeshauptstadt von Bayern" vs "landeshauptstadt von bayern": 1 of 3 tokens agree
    assert overall(run, "rouge_l", "parity", model="lower")["mean"] < 0.7
    # every lexical metric was computed; only BERTScore is reported unavailable (its model is not on disk)
    assert set(run["counts"]["unavailable"]) == {"parity:bertscore"}


def test_missing_items_are_scored_as_empty_counted_and_named(
    yue_release, researcher, django_capture_on_commit_callbacks
):
    api = api_as(researcher)
    lines = prompt_lines(yue_release, "question_only")
    answered = lines[:2]
    data = "\n".join(
        json.dumps({"id": line["id"], "scenario": "question_only", "prediction": "<answer>x</answer>", "model": "m"})
        for line in answered
    ).encode()

    run = scored(api, "yue-cmn", data, django_capture_on_commit_callbacks)

    missing = run["counts"]["missing"]["m · question_only"]
    assert missing["count"] == 4
    assert set(missing["ids"]) == {line["id"] for line in lines[2:]}
    assert overall(run, "rouge_l", "recommended", model="m")["n"] == 6  # every item of the release is in n
    assert Prediction.objects.filter(extraction="missing").count() == 4


def test_a_bad_file_is_refused_whole_with_every_line_named(yue_release, researcher):
    api = api_as(researcher)
    good = prompt_lines(yue_release, "question_only")[0]["id"]
    lines = [
        json.dumps({"id": good, "scenario": "question_only", "prediction": "<answer>a</answer>", "model": "m"}),
        json.dumps({"id": good, "scenario": "question_only", "prediction": "again", "model": "m"}),
        '{"id": "' + good + '", "scenario": "question_only", "prediction": NaN, "model": "m"}',
        json.dumps({"id": "yue-cmn-q999999", "scenario": "question_only", "prediction": "", "model": "m"}),
        json.dumps({"id": good, "scenario": "both_contexts", "prediction": "", "model": "m"}),
        json.dumps({"id": good, "scenario": "local_lead", "model": "m"}),
        "[1, 2]",
        "{not json",
    ]

    response = upload(api, "yue-cmn", "\n".join(lines).encode())

    assert response.status_code == 400
    body = response.json()
    named = {(problem["line"], problem["field"]) for problem in body["problems"]}
    assert named == {(2, "id"), (3, "line"), (4, "id"), (5, "scenario"), (6, "prediction"), (7, "line"), (8, "line")}
    assert "line 1" in next(p["reason"] for p in body["problems"] if p["line"] == 2)
    assert body["counts"]["unknown_ids"] == 1
    assert body["counts"]["refused_lines"] == 7
    assert Prediction.objects.count() == 0  # nothing stored
    assert EvaluationRun.objects.get(pk=body["run"]).status == "refused"


def test_not_utf8_and_oversized_files_are_refused(yue_release, researcher, settings):
    api = api_as(researcher)
    good = prompt_lines(yue_release, "question_only")[0]["id"]
    line = json.dumps({"id": good, "scenario": "question_only", "prediction": "x", "model": "m"}).encode()

    latin = upload(api, "yue-cmn", line + b"\n" + line.replace(b'"x"', b'"\xe9"'))
    settings.EVALUATION_MAX_BYTES = 100
    big = upload(api, "yue-cmn", line * 5)

    assert latin.status_code == 400
    assert latin.json()["problems"] == [
        {"line": 2, "field": "file", "reason": f"not UTF-8 (byte {len(line) + 1 + line.index(b'x')} of the file)"}
    ]
    assert big.status_code == 400
    assert big.json()["field"] == "file"
    assert "limited to 100 bytes" in big.json()["detail"]
    assert Prediction.objects.count() == 0


def test_a_harness_samples_log_is_imported(yue_release, researcher, django_capture_on_commit_callbacks):
    api = api_as(researcher)
    samples = [
        {
            "doc_id": number,
            "doc": line,
            "target": line["answer_standard"],
            "resps": [[f"<answer>{line['answer_standard']}</answer>"]],
            "filtered_resps": [f"<answer>{line['answer_standard']}</answer>"],
        }
        for number, line in enumerate(prompt_lines(yue_release, "standard_lead"))
    ]
    data = "\n".join(json.dumps(sample, ensure_ascii=False) for sample in samples).encode()

    without_model = upload(api, "yue-cmn", data, source="harness")
    run = scored(api, "yue-cmn", data, django_capture_on_commit_callbacks, source="harness", model="qwen2.5-7b")

    assert without_model.status_code == 400 and without_model.json()["field"] == "model"
    assert overall(run, "chrf_pp", "recommended", "standard_lead", model="qwen2.5-7b")["mean"] == pytest.approx(1.0)


def test_results_are_pinned_to_the_release_files(yue_release, researcher):
    api = api_as(researcher)
    data = predictions(yue_release, lambda line: "<answer>x</answer>", scenarios=("question_only",))
    response = upload(api, "yue-cmn", data)  # not scored yet: on_commit callbacks are not run here
    run = EvaluationRun.objects.get(pk=response.json()["id"])
    assert run.manifest_sha256 == yue_release.file_entry("manifest.json")["sha256"]
    assert {entry["name"] for entry in run.release_files} >= {"lead_qa.jsonl"}
    path = releases.release_file_path(yue_release, "lead_qa.jsonl")
    path.write_bytes(path.read_bytes().replace("标准".encode(), "改了".encode()))

    from evaluation import services

    services.evaluation_run_score(run_id=run.pk)

    run.refresh_from_db()
    assert run.status == "failed"
    assert "no longer matches its sha256" in run.error


@pytest.mark.parametrize(
    ("who", "expected"),
    [("outsider", 404), ("annotator", 403), ("reviewer", 403), ("researcher", 200), ("coordinator", 200)],
)
def test_only_researchers_and_coordinators_see_runs(yue_release, request, client, who, expected):
    user = request.getfixturevalue(who)
    api = api_as(user)
    client.force_login(user)
    run = EvaluationRun.objects.create(
        project=yue_release.project, release=yue_release, release_version=1, manifest_sha256="", status="done"
    )

    responses = [
        client.get(reverse("evaluation_runs", args=["yue-cmn"])),
        client.get(reverse("evaluation_run", args=["yue-cmn", run.pk])),
        client.get(reverse("evaluation_csv", args=["yue-cmn", run.pk])),
        api.get("/api/projects/yue-cmn/evaluation/runs/"),
        api.get(f"/api/projects/yue-cmn/evaluation/runs/{run.pk}/"),
    ]

    assert [response.status_code for response in responses] == [expected] * 5
    if expected != 200:
        refused = upload(api, "yue-cmn", b"{}")
        assert refused.status_code == expected


def test_the_page_uploads_shows_tables_by_topic_and_region_and_downloads_csv(
    yue_release, researcher, client, django_capture_on_commit_callbacks
):
    client.force_login(researcher)
    formula = "=cmd|' /C calc'!A0"
    data = predictions(yue_release, lambda line: f"<answer>{line['answer_standard']}</answer>", model=formula)

    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(
            reverse("evaluation_run_create", args=["yue-cmn"]),
            {"release": 1, "source": "predictions", "file": SimpleUploadedFile("p.jsonl", data)},
        )
    page = client.get(response["Location"]).content.decode()
    csv = client.get(response["Location"] + "results.csv").content.decode()

    assert "Lead-section QA" in page
    assert 'data-stratum="topic"' in page and 'data-stratum="region"' in page
    assert "100.0" in page
    assert "Δ vs question only" in page
    assert "manifest sha256" in page
    assert csv.splitlines()[0].startswith("project,release_version,manifest_sha256,run,kind,model")
    assert "'=cmd" in csv and ",=cmd" not in csv  # a formula-like model name is quoted for spreadsheets


def test_the_command_scores_a_file_and_writes_results(yue_release, tmp_path, capsys):
    data = predictions(yue_release, lambda line: f"<answer>{line['answer_standard']}</answer>")
    path = write(tmp_path, "predictions.jsonl", data)

    call_command("evaluate", "yue-cmn", "1", str(path), "--out", str(tmp_path / "out"), "--draws", "200")

    document = json.loads((tmp_path / "out" / "results.json").read_text(encoding="utf-8"))
    assert document["provenance"]["release_version"] == 1
    assert document["provenance"]["bootstrap_draws"] == 200
    assert (tmp_path / "out" / "results.csv").read_text(encoding="utf-8").count("\n") == len(document["results"]) + 1
    assert "Lead-section QA · oracle" in capsys.readouterr().out


def test_the_command_names_refused_lines(yue_release, tmp_path):
    from django.core.management.base import CommandError

    line = b'{"id": "nope", "scenario": "question_only", "prediction": "", "model": "m"}\n'
    path = write(tmp_path, "bad.jsonl", line)

    with pytest.raises(CommandError, match="1 line"):
        call_command("evaluate", "yue-cmn", "1", str(path), "--out", str(tmp_path / "out"))


def test_a_failed_run_is_scored_again_from_its_page_once_the_files_are_back(
    yue_release, researcher, client, django_capture_on_commit_callbacks
):
    api = api_as(researcher)
    data = predictions(
        yue_release, lambda line: f"<answer>{line['answer_standard']}</answer>", scenarios=("both_leads",)
    )
    run = EvaluationRun.objects.get(pk=upload(api, "yue-cmn", data).json()["id"])
    path = releases.release_file_path(yue_release, "lead_qa.jsonl")
    original = path.read_bytes()
    path.write_bytes(original + b"\n")
    from evaluation import services

    services.evaluation_run_score(run_id=run.pk)
    run.refresh_from_db()
    assert run.status == "failed"
    path.write_bytes(original)
    client.force_login(researcher)

    with django_capture_on_commit_callbacks(execute=True):
        client.post(reverse("evaluation_run_score", args=["yue-cmn", run.pk]))

    run.refresh_from_db()
    assert run.status == "done", run.error
    assert next(row for row in run.results if row["metric"] == "exact_match" and row["stratum"] == "all")["mean"] == 1.0


def test_a_file_of_many_bad_lines_lists_the_first_500_and_counts_them_all(yue_release, researcher):
    response = upload(api_as(researcher), "yue-cmn", b"{}\r\n" * 20_000)

    assert response.status_code == 400
    assert response.json()["counts"]["refused_lines"] == 20_000
    assert response.json()["counts"]["problems"] == 80_000  # four fields missing on each line
    assert len(response.json()["problems"]) == 500
    assert response.json()["problems"][0] == {"line": 1, "field": "id", "reason": "missing"}


def test_every_items_answer_extraction_and_scores_are_listed_and_filtered(
    yue_release, researcher, outsider, client, django_capture_on_commit_callbacks
):
    api = api_as(researcher)
    data = predictions(
        yue_release, lambda line: f"<answer>{line['answer_standard']}</answer>", scenarios=("question_only",)
    ) + predictions(yue_release, lambda line: "不知道", model="shy", scenarios=("question_only",))
    run = scored(api, "yue-cmn", data, django_capture_on_commit_callbacks)
    url = f"/api/projects/yue-cmn/evaluation/runs/{run['id']}/predictions/"

    everything = api.get(url).json()
    not_found = api.get(url, {"extraction": "not_found"}).json()
    client.force_login(researcher)
    page = client.get(reverse("evaluation_items", args=["yue-cmn", run["id"]]), {"model": "shy"}).content.decode()

    assert everything["count"] == 12
    assert not_found["count"] == 6
    assert {row["model"] for row in not_found["results"]} == {"shy"}
    assert not_found["results"][0]["scores"]["recommended:rouge_l"] == 0.0
    assert "No answer found" in page and 'lang="cmn"' in page
    assert api_as(outsider).get(url).status_code == 404


def test_an_item_without_gold_is_left_out_of_every_score_counted_and_named(
    project, annotator, coordinator, researcher, django_capture_on_commit_callbacks
):
    from annotation.models import QAItem
    from tests.exports.conftest import authored_pair

    authored_pair(project, annotator)
    authored_pair(project, annotator, evidence=("深水埗", "六十幾年"))
    emptied = QAItem.objects.filter(project=project).order_by("id").first()
    QAItem.objects.filter(pk=emptied.pk).update(answer_standard="")
    release = releases.release_build_now(project=project, user=coordinator, seed=1)
    data = predictions(release, lambda line: f"<answer>{line['answer_standard']}</answer>")

    run = scored(api_as(researcher), "yue-cmn", data, django_capture_on_commit_callbacks)

    assert run["counts"]["left_out_no_gold"] == [f"yue-cmn-q{emptied.pk}"]
    row = overall(run, "rouge_l", "recommended")
    assert (row["n"], row["left_out"], row["mean"]) == (3, 1, pytest.approx(1.0))


def test_a_byte_order_mark_is_not_a_problem_and_a_wrong_type_is_named_in_json_words(yue_release, researcher):
    good = prompt_lines(yue_release, "question_only")[0]["id"]
    line = {"id": good, "scenario": "question_only", "prediction": None, "model": "m"}

    response = upload(api_as(researcher), "yue-cmn", b"\xef\xbb\xbf" + json.dumps(line).encode())

    assert response.json()["problems"] == [{"line": 1, "field": "prediction", "reason": "must be a string, not null"}]


def test_each_scenario_is_compared_with_question_only_on_the_same_items(
    yue_release, researcher, client, django_capture_on_commit_callbacks
):
    data = predictions(
        yue_release,
        lambda line: (
            "<answer>不知道</answer>"
            if line["scenario"] == "question_only"
            else f"<answer>{line['answer_standard']}</answer>"
        ),
        scenarios=("question_only", "local_lead", "both_leads"),
    )

    run = scored(api_as(researcher), "yue-cmn", data, django_capture_on_commit_callbacks)

    rows = {(row["scenario"], row["metric"]): row for row in run["comparisons"]}
    assert set(rows) == {(s, m) for s in ("local_lead", "both_leads") for m in ("rouge_l", "exact_match")}
    exact = rows[("local_lead", "exact_match")]
    assert (exact["n"], exact["delta"], exact["test"]) == (6, 1.0, "McNemar (exact)")
    assert exact["p"] == pytest.approx(2 * 0.5**6)
    assert exact["p_holm"] == pytest.approx(2 * 2 * 0.5**6)  # two scenarios in the family
    client.force_login(researcher)
    page = client.get(reverse("evaluation_run", args=["yue-cmn", run["id"]])).content.decode()
    assert "+100.0" in page and "p<sub>Holm</sub>" in page
