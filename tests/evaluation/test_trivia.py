"""Trivia releases: multiple-choice accuracy, strict (BertaQA) and tolerant, by language, local/global, category."""

from __future__ import annotations

import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client

from annotation.services.members import membership_set
from evaluation.gold import release_gold
from exports.services import release_build_now
from multichoice.services.files import trivia_import_jsonl
from tests import factories
from tests.conftest import api_as
from tests.multichoice.conftest import item_values, trivia  # noqa: F401  (the fixture)

ITEMS = [
    ("l1", "local", 0, "Geografia eta Historia"),
    ("l2", "local", 2, "Geografia eta Historia"),
    ("g1", "global", 1, "Geografia eta Historia"),
    ("g2", "global", 0, "Geografia eta Historia"),
]


@pytest.fixture
def trivia_release(trivia, coordinator):  # noqa: F811
    records = [
        item_values(id=identifier, subset=subset, answer=answer, category=category)
        | {"target_question": f"Q {identifier}?", "target_candidates": ["a", "b", "c"]}
        for identifier, subset, answer, category in ITEMS
    ]
    trivia_import_jsonl(
        project=trivia, data=b"".join(json.dumps(r).encode() + b"\n" for r in records), user=coordinator
    )
    release = release_build_now(project=trivia, user=coordinator, seed=3)
    assert release.status == "done", release.error
    researcher = factories.user("trivia_researcher")
    membership_set(project=trivia, user=researcher, roles={"researcher"})
    return {"release": release, "researcher": researcher, "slug": trivia.slug}


def test_strict_and_tolerant_accuracy_by_language_and_subset(trivia_release, django_capture_on_commit_callbacks):
    api = api_as(trivia_release["researcher"])
    # The answer letters as released: the release shuffles each item's options by its seed.
    gold = release_gold(trivia_release["release"])
    letters = {identifier: gold.items[identifier].gold for identifier, _, _, _ in ITEMS}
    assert sorted(letters) == ["g1", "g2", "l1", "l2"] and all(letter in "ABC" for letter in letters.values())
    replies = {"l1": "{}", "l2": "{}.", "g1": "({})", "g2": "{}"}  # strict: l1 and g2 only; tolerant: all four
    lines = [
        {
            "id": identifier,
            "scenario": language,
            "prediction": replies[identifier].format(letters[identifier]),
            "model": "m",
        }
        for language in ("eus", "eng")
        for identifier in letters
    ]
    data = "\n".join(json.dumps(line) for line in lines).encode()

    with django_capture_on_commit_callbacks(execute=True):
        created = api.post(
            f"/api/projects/{trivia_release['slug']}/evaluation/runs/",
            {"release": 1, "file": SimpleUploadedFile("p.jsonl", data)},
            format="multipart",
        )
    assert created.status_code == 202, created.json()
    run = api.get(f"/api/projects/{trivia_release['slug']}/evaluation/runs/{created.json()['id']}/").json()

    def cell(metric, scenario, stratum="all", value="all"):
        return next(
            row
            for row in run["results"]
            if (row["metric"], row["scenario"], row["stratum"], row["value"]) == (metric, scenario, stratum, value)
        )

    assert run["status"] == "done", run["error"]
    for language in ("eus", "eng"):
        assert cell("accuracy_strict", language)["mean"] == 0.5
        assert cell("accuracy_strict", language)["n"] == 4
        assert cell("accuracy_strict", language)["interval"] == "wilson"
        assert cell("accuracy_tolerant", language)["mean"] == 1.0
        assert cell("accuracy_strict", language, "subset", "local")["mean"] == 0.5
        assert cell("accuracy_strict", language, "subset", "global")["n"] == 2
    assert run["counts"]["extraction"]["m · eus"] == {"found": 2, "not_found": 2, "tolerant found": 4}
    # Trivia items share no page: the bootstrap resamples items, and every caption says so.
    assert run["provenance"]["resampled_by"] == "item"
    assert run["provenance"]["intervals"].endswith("resampled by item")
    browser = Client()
    browser.force_login(trivia_release["researcher"])
    page = browser.get(f"/projects/{trivia_release['slug']}/evaluation/{run['id']}/").content.decode()
    assert "resampled by item" in page and "page pair" not in page


def test_a_harness_loglikelihood_log_becomes_letters(trivia_release, django_capture_on_commit_callbacks):
    api = api_as(trivia_release["researcher"])
    gold = release_gold(trivia_release["release"])  # the released (shuffled) answer of each item
    samples = []
    for number, (identifier, _, _, _) in enumerate(ITEMS):
        scores = [[-3.0, False], [-2.0, False], [-4.0, False]]
        scores["ABC".index(gold.items[identifier].gold)] = [-0.5, True]
        samples.append({"doc_id": number, "doc": {"id": identifier}, "filtered_resps": scores, "resps": [scores]})
    data = "\n".join(json.dumps(sample) for sample in samples).encode()

    with django_capture_on_commit_callbacks(execute=True):
        created = api.post(
            f"/api/projects/{trivia_release['slug']}/evaluation/runs/",
            {
                "release": 1,
                "source": "harness",
                "model": "llama",
                "scenario": "eus",
                "file": SimpleUploadedFile("s.jsonl", data),
            },
            format="multipart",
        )
    run = api.get(f"/api/projects/{trivia_release['slug']}/evaluation/runs/{created.json()['id']}/").json()

    strict = next(row for row in run["results"] if row["metric"] == "accuracy_strict" and row["stratum"] == "all")
    assert (strict["scenario"], strict["mean"], strict["n"]) == ("eus", 1.0, 4)
