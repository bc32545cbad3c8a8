"""Is it local knowledge? An item's save asks a stub model (tests/model_stub.py) closed-book and with the standard
lead; the outcome lands on the item's check, never holding up the save."""

from __future__ import annotations

import pytest

from annotation.models import LocalCheck, QAItem
from annotation.services.items import qa_item_create, qa_item_update
from endpoints.models import ModelCall
from evaluation import local_checks
from evaluation.models import LocalCheckSetting
from tests.endpoints.conftest import make_endpoint
from tests.model_stub import StubReply

ANSWER = "九龍城寨"


@pytest.fixture
def checking(project, coordinator, model_stub, settings):
    settings.LOCAL_CHECK_DELAY_SECONDS = 0
    settings.LOCAL_CHECK_RETRY_SECONDS = 60
    endpoint = make_endpoint(project, coordinator, model_stub, timeout_seconds=1)
    local_checks.local_check_setting_save(
        project=project, user=coordinator, enabled=True, endpoint=endpoint, threshold=0.5
    )
    return endpoint


def _item(pair, annotator, question="香港哪個地方曾經是無法可管的城寨？", answer=ANSWER):
    return qa_item_create(pair=pair, user=annotator, question=question, answer_standard=answer, answer_local=answer)


def _lead_only(request) -> str:
    """The stub knows the answer only when it reads the standard lead."""
    return ANSWER if "Question:" in request.prompt_text else "我唔知"


def test_a_save_leaves_a_pending_check_and_the_model_is_asked_only_after_the_commit(
    checking, annotating_pair, annotator, model_stub, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        item = _item(annotating_pair, annotator)
    check = LocalCheck.objects.get(item=item)
    assert check.status == LocalCheck.Status.PENDING
    assert model_stub.requests == [] and len(callbacks) == 1  # the save is done; nothing was asked yet
    callbacks[0]()
    check.refresh_from_db()
    assert check.status == LocalCheck.Status.DONE
    assert len(model_stub.requests) == 2


def test_a_model_that_answers_from_the_standard_lead_flags_the_item(
    checking, annotating_pair, annotator, model_stub, django_capture_on_commit_callbacks
):
    model_stub.answer(_lead_only)
    with django_capture_on_commit_callbacks(execute=True):
        item = _item(annotating_pair, annotator)
    check = LocalCheck.objects.get(item=item)
    assert check.result == LocalCheck.Result.STANDARD_LEAD
    assert check.lead_answer == ANSWER and check.lead_score == pytest.approx(1.0)
    assert check.closed_book_answer == "我唔知" and check.closed_book_score < 0.5
    closed, with_lead = model_stub.requests
    assert annotating_pair.standard_lead not in closed.prompt_text
    assert annotating_pair.standard_lead in with_lead.prompt_text
    assert ModelCall.objects.filter(purpose="local_check", status="ok").count() == 2


def test_a_wrong_answer_leaves_the_item_as_local_knowledge(
    checking, annotating_pair, annotator, model_stub, django_capture_on_commit_callbacks
):
    model_stub.answer(lambda request: "石硤尾")
    with django_capture_on_commit_callbacks(execute=True):
        item = _item(annotating_pair, annotator)
    check = LocalCheck.objects.get(item=item)
    assert check.status == LocalCheck.Status.DONE
    assert check.result == LocalCheck.Result.NOT_ANSWERED
    assert not check.model_answers


def test_a_closed_book_answer_counts_first(
    checking, annotating_pair, annotator, model_stub, django_capture_on_commit_callbacks
):
    model_stub.answer(lambda request: ANSWER)
    with django_capture_on_commit_callbacks(execute=True):
        item = _item(annotating_pair, annotator)
    assert LocalCheck.objects.get(item=item).result == LocalCheck.Result.CLOSED_BOOK


@pytest.mark.parametrize(
    ("reply", "words"),
    [
        (StubReply.garbage(), "Reply not understood"),
        (StubReply.server_error(), "Server error: 500"),
        (StubReply.slow(3.0), "Timed out"),
    ],
    ids=["garbage", "a 500", "a timeout"],
)
def test_a_model_that_fails_leaves_a_failed_check_with_the_reason_to_be_tried_again(
    checking, annotating_pair, annotator, model_stub, django_capture_on_commit_callbacks, reply, words
):
    model_stub.script(reply, reply)  # both attempts of the try
    with django_capture_on_commit_callbacks(execute=True):
        item = _item(annotating_pair, annotator)
    check = LocalCheck.objects.get(item=item)
    assert check.status == LocalCheck.Status.FAILED
    assert words in check.error
    assert check.failures == 1 and check.retry_at is not None  # tried again later
    assert check.result == ""
    # The retry, once due, asks again and records the outcome.
    LocalCheck.objects.filter(pk=check.pk).update(retry_at=check.requested_at)
    model_stub.answer(lambda request: "石硤尾")
    local_checks.local_check_run(check_id=check.pk)
    check.refresh_from_db()
    assert check.status == LocalCheck.Status.DONE and check.result == LocalCheck.Result.NOT_ANSWERED


def test_a_revised_answer_reruns_the_check_and_an_unchanged_one_does_not(
    checking, annotating_pair, annotator, model_stub, django_capture_on_commit_callbacks
):
    model_stub.answer(_lead_only)
    with django_capture_on_commit_callbacks(execute=True):
        item = _item(annotating_pair, annotator)
    assert len(model_stub.requests) == 2
    with django_capture_on_commit_callbacks(execute=True):
        item = qa_item_update(item=item, user=annotator, version=item.version, answer_local="九龍城寨啦")
    assert len(model_stub.requests) == 2  # the local answer is not what is checked
    with django_capture_on_commit_callbacks(execute=True):
        item = qa_item_update(item=item, user=annotator, version=item.version, answer_standard="城寨")
    check = LocalCheck.objects.get(item=item)
    assert check.answer == "城寨" and check.status == LocalCheck.Status.DONE
    # Asked again (the same prompts: answered from the endpoint's cache, each call recorded).
    assert ModelCall.objects.filter(purpose="local_check").count() == 4
    assert ModelCall.objects.filter(purpose="local_check", cached=True).count() == 2


def test_the_check_is_off_by_default(
    project, annotating_pair, annotator, model_stub, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        item = _item(annotating_pair, annotator)
    assert not LocalCheck.objects.filter(item=item).exists()
    assert model_stub.requests == []
    assert not LocalCheckSetting.objects.filter(project=project).exists()


def test_a_judge_decides_instead_of_chrf_when_one_is_set(
    checking, project, coordinator, annotating_pair, annotator, model_stub, django_capture_on_commit_callbacks
):
    judge = make_endpoint(project, coordinator, model_stub, name="judge", model="judge-model")
    local_checks.local_check_setting_save(
        project=project, user=coordinator, enabled=True, endpoint=checking, threshold=0.5, judge=judge
    )
    model_stub.answer(
        lambda request: (
            ("YES" if "Generated answer: 城寨" in request.prompt_text else "NO")
            if request.model == "judge-model"
            else "城寨"
        )
    )
    with django_capture_on_commit_callbacks(execute=True):
        item = _item(annotating_pair, annotator)
    check = LocalCheck.objects.get(item=item)
    assert check.result == LocalCheck.Result.CLOSED_BOOK  # chrF++ alone would not have counted it
    assert check.closed_book_score < 0.5
    assert "judge" in check.method


def test_an_endpoint_of_another_project_is_refused(checking, other_project, coordinator, model_stub):
    from common.errors import InvalidInput

    with pytest.raises(InvalidInput):
        local_checks.local_check_setting_save(
            project=other_project.__class__.objects.get(pk=checking.project_id),
            user=coordinator,
            enabled=True,
            endpoint=make_endpoint(other_project, coordinator, model_stub),
            threshold=0.5,
        )


def test_the_flag_travels_into_the_release_and_the_evaluation_strata(
    checking, project, annotator, coordinator, model_stub, django_capture_on_commit_callbacks, tmp_path, settings
):
    pytest.importorskip("datasets")
    from evaluation.gold import release_gold
    from exports import services as releases
    from exports.models import Release
    from tests.exports.conftest import authored_pair
    from tests.exports.loading import assert_release_loads

    settings.MEDIA_ROOT = tmp_path / "media"
    # The model knows one answer from the standard lead; it knows nothing else.
    model_stub.answer(
        lambda request: "菠蘿油同埋鴛鴦（标准）" if "Question: 关于「菠蘿油" in request.prompt_text else "不知道"
    )
    with django_capture_on_commit_callbacks(execute=True):
        authored_pair(project, annotator)  # two lead QAs
    changed = LocalCheck.objects.get(question__contains="老闆姓陳")
    QAItem.objects.filter(pk=changed.item_id).update(answer_standard="陈先生")  # changed after its check

    release = releases.release_build_now(project=project, user=coordinator, seed=1)
    assert release.status == Release.Status.DONE, release.error
    loaded = assert_release_loads(release, tmp_path / "hf")
    rows = [row for split in loaded["lead_qa"] for row in loaded["lead_qa"][split]]
    values = {row["question"]: row["local_knowledge_check"] for row in rows}
    assert values == {"关于「菠蘿油同埋鴛鴦」的问题？": "standard_lead", "关于「老闆姓陳」的问题？": None}

    gold = release_gold(release)
    assert "local_knowledge_check" in gold.strata
    assert sorted(item.strata["local_knowledge_check"] for item in gold.items.values()) == [
        "(none)",
        "standard_lead",
    ]


def test_the_author_reads_the_check_and_asks_again_through_the_api_and_the_card(
    checking, annotating_pair, annotator, reviewer, client, model_stub, django_capture_on_commit_callbacks
):
    from tests.conftest import api_as

    model_stub.answer(_lead_only)
    with django_capture_on_commit_callbacks(execute=True):
        item = _item(annotating_pair, annotator)
    url = f"/api/projects/{item.project.slug}/items/{item.pk}/local-check/"
    body = api_as(annotator).get(url).json()
    assert (body["status"], body["result"], body["lead_answer"], body["current"]) == (
        "done",
        "standard_lead",
        ANSWER,
        True,
    )
    assert api_as(reviewer).get(url).status_code == 403
    with django_capture_on_commit_callbacks(execute=False):
        again = api_as(annotator).post(url)
    assert again.status_code == 202 and again.json()["status"] == "pending"

    client.force_login(annotator)
    card = client.get(f"/projects/{item.project.slug}/items/{item.pk}/local-check/", HTTP_HX_REQUEST="true")
    html = card.content.decode()
    assert 'hx-trigger="every 2s"' in html  # pending: the card keeps asking
    LocalCheck.objects.filter(item=item).update(status="failed", error="Timed out: No answer within 1 s.")
    html = client.get(card.request["PATH_INFO"], HTTP_HX_REQUEST="true").content.decode()
    assert "Local-knowledge check failed." in html and "Timed out" in html
    assert "every 2s" not in html  # nothing running: no more polling


def test_the_coordinator_turns_the_check_on_from_its_page(client, project, coordinator, model_stub):
    endpoint = make_endpoint(project, coordinator, model_stub)
    client.force_login(coordinator)
    url = f"/projects/{project.slug}/local-knowledge-check/"
    refused = client.post(url, {"enabled": "on", "threshold": "0.5"})
    assert refused.status_code == 400 and "choose the model" in refused.content.decode()
    assert client.post(url, {"enabled": "on", "endpoint": endpoint.pk, "threshold": "2"}).status_code == 400
    assert client.post(url, {"enabled": "on", "endpoint": endpoint.pk, "threshold": "0.6"}).status_code == 302
    setting = LocalCheckSetting.objects.get(project=project)
    assert setting.enabled and setting.endpoint_id == endpoint.pk and setting.threshold == 0.6
    assert "Items so far" in client.get(url).content.decode()


def test_the_reviewer_sees_the_flag_on_the_review_screen(
    checking, project, annotator, reviewer, client, model_stub, django_capture_on_commit_callbacks
):
    from review import queue as review_queue
    from tests.review.conftest import submitted_pair

    model_stub.answer(lambda request: "深水埗")  # it says where the café is, even without the lead
    with django_capture_on_commit_callbacks(execute=True):
        _, items = submitted_pair(project, annotator, evidences=("深水埗", "姓陳"))
    check = LocalCheck.objects.get(item=items[0])
    assert check.result == LocalCheck.Result.CLOSED_BOOK, (check.answer, check.error)
    slot = review_queue.review_claim(item=items[0], user=reviewer)
    client.force_login(reviewer)

    page = client.get(f"/projects/{project.slug}/review/{slot.pk}/").content.decode()

    assert 'id="local-check-line"' in page
    assert "A model answers this without any article" in page


def test_a_save_with_the_check_on_costs_a_few_queries_and_no_model_call(
    checking, project, coordinator, annotating_pair, annotator, model_stub, django_capture_on_commit_callbacks
):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    item = _item(annotating_pair, annotator)  # its check exists: a later save rewrites it

    def save(question: str) -> int:
        nonlocal item
        with CaptureQueriesContext(connection) as queries, django_capture_on_commit_callbacks(execute=False):
            item = qa_item_update(
                item=item, user=annotator, version=item.version, question=question, answer_standard=ANSWER
            )
        return len(queries)

    on = save("香港哪個地方曾經是城寨？")
    LocalCheckSetting.objects.filter(project=project).update(enabled=False)
    off = save("香港哪個地方曾經是無法可管的城寨？")
    print(f"\nqueries of one save: {off} with the check off, {on} with it on")
    assert on - off <= 3  # is the check on, the check as it was, the check written
    assert model_stub.requests == []
