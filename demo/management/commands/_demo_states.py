"""Work in progress for the demo projects (demo_setup): a few items in each state, made through the services
the pages call, so every role finds something to do and something done. Each function runs once, on a
project it has just created; a second `demo_setup` leaves what is there as it is."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from django.contrib.auth.models import User
from django.core.management.base import CommandError

from annotation.models import PagePair, Project, QAItem
from annotation.services.items import qa_item_create
from annotation.services.pairs import pair_claim_next, pair_screen
from annotation.services.projects import project_update
from annotation.services.submission import pair_submit
from exports import services as exports
from multichoice import entities as entity_services
from multichoice.services.items import trivia_item_create, trivia_items
from multichoice.services.reviews import trivia_review
from multichoice.services.translation import translation_claim_next, translation_submit
from review import judging as review_judging
from review import queue as review_queue

Users = Mapping[str, User]

# (question, standard answer, local answer, evidence: a piece of the pair's local lead)
WIKIPEDIA_ITEMS: dict[str, dict[str, list[tuple[str, str, str, str]]]] = {
    "yue-cmn": {
        "缽仔糕": [
            ("钵仔糕用什么原料制作？", "粘米粉、澄面和砂糖", "粘米粉、澄麵同砂糖", "用粘米粉、澄麵同砂糖開漿"),
            ("怎么吃？", "用两支竹签挑起来吃", "用兩支竹籤挑起嚟食", "用兩支竹籤由缽邊挑起成件糕"),
        ],
        "石角村": [("石角村村口的榕树有多少岁？", "三百多岁", "三百幾歲", "三百幾歲嘅細葉榕")],
    },
    "bar-deu": {
        "Weißwurscht": [
            ("Bis wann isst man traditionell Weißwürste?", "Vor dem Mittagsläuten", "Bevors Mittag leit",
             "derf s'Mittagsleitn ned hean"),
            ("Was trinkt man zur Weißwurst?", "Ein Weißbier", "A Weißbier", "a Weißbier"),
        ],
    },
}  # fmt: skip


def _criteria(project: Project, flag: str = "", comment: str = "") -> dict[str, dict[str, str]]:
    return {
        c["key"]: {"verdict": "flag", "comment": comment} if c["key"] == flag else {"verdict": "pass", "comment": ""}
        for c in project.review_criteria
    }


def _annotate(project: Project, user: User, title: str, submit: bool) -> list[QAItem]:
    pair = pair_claim_next(project=project, user=user)
    if pair is None or pair.local_title != title:
        raise CommandError(f"Demo {project.slug}: expected to hand {user} the pair {title!r}, got {pair}.")
    pair_screen(pair=pair, user=user, decision="annotate")
    items = []
    for question, standard, local, evidence in WIKIPEDIA_ITEMS[project.slug][title]:
        start = pair.local_lead.find(evidence)
        if start < 0:
            raise CommandError(f"Demo {project.slug}: {evidence!r} is not in the lead of {title!r}.")
        items.append(
            qa_item_create(
                pair=pair,
                user=user,
                question=question,
                answer_standard=standard,
                answer_local=local,
                spans=[{"start": start, "end": start + len(evidence), "text": evidence}],
            )
        )
    if submit:
        pair_submit(pair=pair, user=user)
    return items


def wikipedia_states(project: Project, users: Users) -> None:
    """yue-cmn: a pair reviewed (one item accepted, one sent back with a comment) and released, a pair being
    annotated; bar-deu: a pair in review. The other pairs wait in the pool."""
    if project.slug == "yue-cmn":
        project_update(project=project, lead_qa_min=1)
        _annotate(project, users["annotator1"], "缽仔糕", submit=True)
        for flag in ("", "standalone"):
            slot = review_queue.review_claim_next(project=project, user=users["reviewer"])
            assert slot is not None
            judgments = _criteria(project, flag, "Which dish? Name the 缽仔糕 so the question stands on its own.")
            review_judging.review_submit(slot=slot, user=users["reviewer"], version=slot.version, judgments=judgments)
        _annotate(project, users["annotator2"], "石角村", submit=False)
        exports.release_build_now(project=project, user=users["coordinator"], changelog="Demo release")
    elif project.slug == "bar-deu":
        _annotate(project, users["annotator2"], "Weißwurscht", submit=True)


def validation_states(project: Project, users: Users, demo_dir: Path) -> None:
    """Six collected pairs imported; the reviewer has validated two of them, which are released."""
    from annotation.importers.sources import ImportSource
    from validation import services as validation

    validation.validation_settings_update(project=project, tasks=["question", "location"])
    path = demo_dir / "doha-val.jsonl"
    report = validation.validation_items_import(
        project=project, source=ImportSource(path.name, data=path.read_bytes()), user=users["coordinator"]
    )
    if not report.ok:
        raise CommandError(f"Demo data {path.name} is broken: " + "; ".join(map(str, report.problems)))
    for _ in range(2):
        slot = validation.validation_claim_next(project=project, user=users["reviewer"])
        assert slot is not None
        data = {"question": "good", "location_relevant": "yes"}
        validation.validation_submit(slot=slot, user=users["reviewer"], version=slot.version, data=data)
    exports.release_build_now(project=project, user=users["coordinator"], changelog="Demo release")


def trivia_states(project: Project, users: Users, demo_dir: Path) -> None:
    """Items written by both annotators: in review, sent back with a comment, accepted (waiting for a translator),
    translated; then a release."""
    for line in (demo_dir / "bar-trivia.jsonl").read_text(encoding="utf-8").splitlines():
        record: dict[str, Any] = json.loads(line)
        state, author = record.pop("state"), users[record.pop("author")]
        comment = record.pop("comment", "")
        target = (record.pop("target_question", ""), record.pop("target_candidates", []))
        item = trivia_item_create(project=project, user=author, **record)
        if state == "in_review":
            continue
        item = trivia_items(project).get(pk=item.pk)
        keys = [c["key"] for c in project.review_criteria]
        met = {key: state != "sent_back" or index > 0 for index, key in enumerate(keys)}
        trivia_review(item=item, user=users["reviewer"], criteria=met, comment=comment)
        if state == "translated":
            translator = users["annotator2"] if author == users["annotator1"] else users["annotator1"]
            claimed = translation_claim_next(project=project, user=translator)
            assert claimed is not None and claimed.pk == item.pk
            translation_submit(item=claimed, user=translator, target_question=target[0], target_candidates=target[1])
    exports.release_build_now(project=project, user=users["coordinator"], changelog="Demo release")


def entity_states(project: Project, users: Users, demo_dir: Path) -> None:
    """Six companies imported, their questions generated; the reviewer verified one and rejected one; a release."""
    path = demo_dir / "companies.csv"
    entity_services.entities_import(project=project, data=path.read_bytes(), name=path.name, user=users["coordinator"])
    entity_services.questions_generate(project=project, user=users["coordinator"])
    for decision in ("accept", "reject"):
        question = entity_services.verification_next(project=project, user=users["reviewer"])
        assert question is not None
        entity_services.question_verify(
            question=question,
            user=users["reviewer"],
            version=question.item.version,
            decision=decision,
            reason="The distractors are too easy." if decision == "reject" else "",
        )
    exports.release_build_now(project=project, user=users["coordinator"], changelog="Demo release")


def pairs_waiting(project: Project) -> int:
    return PagePair.objects.filter(project=project).available().count()


# Made-up models whose answers the demo writes itself from the release (no model server, no network). Wikipedia QA:
# one answers every item with the gold, the other copies the Cantonese answer (traditional script, so the folded
# metrics differ from the raw ones) and, asked the question alone, says it does not know without an answer tag.
# Trivia: one answers the gold letter, the other always "A." (wrong for the strict letter rule, read as A by the
# tolerant one).
DEMO_MODELS = ("demo: gold answers", "demo: Cantonese answers", "demo: always A")


def _demo_predictions(project: Project, release: Any) -> list[dict[str, str]]:
    name = "lead_qa.jsonl" if project.kind == Project.Kind.WIKIPEDIA_QA else "trivia.jsonl"
    text = exports.release_file_path(release, name).read_text(encoding="utf-8")
    lines = []
    for record in (json.loads(line) for line in text.splitlines() if line.strip()):
        if name == "trivia.jsonl":
            gold = "ABCD"[record["answer"]]
            answers = {language: ((DEMO_MODELS[0], gold), (DEMO_MODELS[2], "A.")) for language in record["languages"]}
        else:
            answers = {
                scenario: (
                    (DEMO_MODELS[0], f"<answer>{record['answer_standard']}</answer>"),
                    (
                        DEMO_MODELS[1],
                        "我唔知。" if scenario == "question_only" else f"<answer>{record['answer_local']}</answer>",
                    ),
                )
                for scenario in ("question_only", "standard_lead", "local_lead", "both_leads")
            }
        for scenario, pairs in answers.items():
            lines += [{"id": record["id"], "scenario": scenario, "prediction": p, "model": m} for m, p in pairs]
    return lines


def evaluation_states(project: Project, users: Users) -> None:
    """One finished evaluation run on the project's latest release, scored in this process."""
    from evaluation import services as evaluation
    from exports.models import Release

    release = Release.objects.filter(project=project).published().order_by("-version").first()
    if release is None:
        return
    lines = _demo_predictions(project, release)
    data = "".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines).encode()
    run = evaluation.evaluation_run_create(
        project=project,
        release=release,
        user=users["researcher"],
        data=data,
        file_name="demo-predictions.jsonl",
        enqueue=False,
    )
    if run.status == run.Status.REFUSED:  # the demo writes the file from the release; a refusal is a bug
        raise CommandError(f"Demo evaluation run refused: {run.error} {run.problems[:3]}")
    scored = evaluation.evaluation_run_score(run_id=run.pk)
    if scored is None or scored.status != scored.Status.DONE:
        raise CommandError(f"Demo evaluation run failed: {scored.error if scored else 'not claimed'}")
