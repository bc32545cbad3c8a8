"""Queue counts say what this person can get (a pair they skipped is not waiting for them), and a skip can be
taken back: the pair is theirs again, the skip kept in the record as undone."""

from __future__ import annotations

import pytest
from django.urls import reverse

from annotation.models import PagePair, PairSkip
from annotation.services.pairs import pair_claim_next, pair_give_back, pair_skip_undo
from audit.models import Action, AuditEvent
from common.errors import InvalidState
from tests import factories

pytestmark = pytest.mark.django_db


def _skip_the_only_pair(project, annotator) -> PagePair:
    factories.pair(project)
    pair = pair_claim_next(project=project, user=annotator)
    assert pair is not None
    pair_give_back(pair=pair, user=annotator, reason="")
    return pair


def test_the_project_page_does_not_count_a_pair_this_person_skipped_as_waiting_for_them(
    client, project, annotator, second_annotator
):
    pair = _skip_the_only_pair(project, annotator)
    client.force_login(annotator)

    page = client.get(reverse("project_detail", args=[project.slug])).content.decode()

    step = page[page.index('id="step-next-pair"') :]
    step = step[: step.index("</section>")]
    assert "1 pair waiting" not in step and "1</strong> pair waiting" not in step
    assert '<strong class="count">0</strong> pairs waiting for you' in step
    assert "skipped by you" in step and pair.local_title in step
    assert "primary big" not in step  # no big Next pair button when nothing waits for this person
    client.force_login(second_annotator)
    other = client.get(reverse("project_detail", args=[project.slug])).content.decode()
    assert '<strong class="count">1</strong> pair waiting for you' in other


def test_undoing_a_skip_hands_the_pair_back_and_keeps_the_skip_in_the_record(client, project, annotator):
    pair = _skip_the_only_pair(project, annotator)
    skip = PairSkip.objects.get(pair=pair, annotator=annotator)
    client.force_login(annotator)

    response = client.post(reverse("pair_skip_undo", args=[project.slug, pair.pk]))

    assert response.status_code == 302 and response["Location"] == pair.get_absolute_url()
    pair.refresh_from_db()
    assert pair.assignee == annotator and pair.status == PagePair.Status.CLAIMED
    skip.refresh_from_db()
    assert skip.undone_at is not None
    assert AuditEvent.objects.filter(action=Action.PAIR_SKIP_UNDONE, object_id=pair.pk).exists()
    pair_give_back(pair=pair, user=annotator)  # skipped again: a new skip, the old one stays
    assert PairSkip.objects.filter(pair=pair, annotator=annotator).count() == 2
    assert pair_claim_next(project=project, user=annotator) is None


def test_undoing_a_skip_gives_back_the_untouched_pair_handed_out_after_it(project, annotator):
    factories.pair(project)
    factories.pair(project)
    first = pair_claim_next(project=project, user=annotator)
    skip = pair_give_back(pair=first, user=annotator)
    second = pair_claim_next(project=project, user=annotator)
    assert second is not None and second.pk != first.pk

    back = pair_skip_undo(skip=skip, user=annotator)

    assert back is not None and back.pk == first.pk
    second.refresh_from_db()
    assert second.status == PagePair.Status.NEW and second.assignee is None  # back in the pool, no skip recorded
    assert not PairSkip.objects.filter(pair=second).exists()


def test_a_skip_taken_by_someone_else_meanwhile_is_undone_and_says_so(project, annotator, second_annotator):
    pair = _skip_the_only_pair(project, annotator)
    skip = PairSkip.objects.get(pair=pair)
    assert pair_claim_next(project=project, user=second_annotator).pk == pair.pk

    assert pair_skip_undo(skip=skip, user=annotator) is None
    skip.refresh_from_db()
    assert skip.undone_at is not None


def test_only_the_person_who_skipped_can_undo_it(client, project, annotator, second_annotator):
    pair = _skip_the_only_pair(project, annotator)
    skip = PairSkip.objects.get(pair=pair)
    with pytest.raises(InvalidState):
        pair_skip_undo(skip=skip, user=second_annotator)
    client.force_login(second_annotator)
    assert client.post(reverse("pair_skip_undo", args=[project.slug, pair.pk])).status_code == 404


def test_the_api_takes_a_skip_back(project, annotator):
    from tests.conftest import api_as

    pair = _skip_the_only_pair(project, annotator)

    response = api_as(annotator).post(f"/api/projects/{project.slug}/pairs/{pair.pk}/skip/undo/")

    assert response.status_code == 200 and response.json() == {"pair": pair.pk, "yours": True}
    assert api_as(annotator).post(f"/api/projects/{project.slug}/pairs/{pair.pk}/skip/undo/").status_code == 404
