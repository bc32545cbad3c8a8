"""Project agreement reports: gathered from the review data, computed like `agreement_summary`, stored, debounced."""

from __future__ import annotations

import random
from collections import defaultdict
from datetime import timedelta

import pytest
from django.utils import timezone

from annotation.models import PagePair, Screening
from annotation.services.members import membership_set
from annotation.services.projects import project_update
from common.jobs import stale_seconds
from review import judging as review_judging
from review import labels as review_labels
from review import queue as review_queue
from review import reports
from review.agreement import agreement_summary
from review.models import AgreementReport, ArticleLabel, FinalLabel, LabelKind
from tests import factories
from tests.review.conftest import all_pass, flag, submitted_pair

EVIDENCES = ("深水埗", "姓陳", "菠蘿油", "鴛鴦")


def four_items(project, annotator):
    """Two submitted pairs of two items each (a pair takes at most three lead QAs)."""
    first, items = submitted_pair(project, annotator, evidences=EVIDENCES[:2])
    _, more = submitted_pair(project, annotator, evidences=EVIDENCES[2:])
    return first, items + more


def review(project, user, item, judgments):
    slot = review_queue.review_claim(item=item, user=user)
    return review_judging.review_submit(slot=slot, user=user, version=slot.version, judgments=judgments)


@pytest.fixture
def two_reviewers(project, reviewer, second_reviewer, annotator):
    """Four items, each reviewed by both reviewers; they disagree on fluency of the second item only."""
    project_update(project=project, reviewers_per_item=2)
    pair, items = four_items(project, annotator)
    verdicts = {  # item index: (reviewer's fluency, second reviewer's fluency)
        0: ("pass", "pass"),
        1: ("pass", "flag"),
        2: ("flag", "flag"),
        3: ("pass", "pass"),
    }
    for index, item in enumerate(items):
        for user, verdict in zip((reviewer, second_reviewer), verdicts[index], strict=True):
            judgments = all_pass(project) if verdict == "pass" else flag(project, "fluency", "awkward")
            review(project, user, item, judgments)
    return pair, items, verdicts


def computed(project, **kw):
    report, _ = reports.agreement_report_request(project=project, enqueue=False)
    return reports.agreement_report_compute(report_id=report.pk, bootstrap=200, **kw)


def test_a_report_matches_agreement_summary_computed_on_the_same_judgments(project, two_reviewers):
    _, items, verdicts = two_reviewers
    revisions = {item.pk: item.revisions.get().pk for item in items}

    report = computed(project)

    assert report.status == "done", report.error
    fluency = report.result["scopes"]["review:fluency"]
    expected = agreement_summary(
        [
            (revisions[item.pk], name, verdicts[index][position])
            for index, item in enumerate(items)
            for position, name in enumerate(("reviewer", "reviewer2"))
        ],
        "nominal",
        categories=["pass", "flag"],
        bootstrap=200,
    ).to_dict()
    assert fluency["summary"]["statistics"] == expected["statistics"]
    assert fluency["summary"]["matrices"] == expected["matrices"]
    assert (fluency["summary"]["n_units"], fluency["summary"]["n_raters"]) == (4, 2)
    assert fluency["summary"]["statistics"]["percent_agreement"]["value"] == pytest.approx(0.75)
    # The contested unit links to its item.
    assert [unit["item_id"] for unit in fluency["summary"]["contested_units"]] == [items[1].pk]
    # No variation at all on the other criteria: alpha undefined, said so.
    standalone = report.result["scopes"]["review:standalone"]["summary"]["statistics"]["krippendorff_alpha"]
    assert standalone["value"] is None and "No variation" in standalone["note"]
    assert report.headline["review:fluency"]["alpha"] == expected["statistics"]["krippendorff_alpha"]["value"]
    assert report.fingerprint.startswith("sha256:") and report.finished_at and report.progress == 100


@pytest.mark.parametrize("rows_per_fetch", [1, 2, 5])
def test_judgments_read_a_few_rows_at_a_time_give_the_same_scopes(project, two_reviewers, monkeypatch, rows_per_fetch):
    """The review scopes are read in chunks of rows, each chunk's strata looked up by itself: chunks that split a
    revision's judgments give the same judgments and strata (the scopes' fingerprints) and figures."""
    first, _, _ = two_reviewers
    FinalLabel.objects.create(project=project, pair=first, kind="topic", value="food", method="agreement")
    whole = {scope.key: scope for scope in reports.scopes_gather(project) if scope.kind == "review"}

    monkeypatch.setattr(reports, "ROWS_PER_FETCH", rows_per_fetch)
    chunked = {scope.key: scope for scope in reports.scopes_gather(project) if scope.kind == "review"}

    assert list(chunked) == list(whole)
    for key, scope in whole.items():
        assert reports._scope_fingerprint_text(chunked[key]) == reports._scope_fingerprint_text(scope)
        assert reports.scope_compute(
            chunked[key], chunked[key].tallied(), bootstrap=50, seed=1
        ) == reports.scope_compute(scope, scope.tallied(), bootstrap=50, seed=1)
    fluency = reports.scope_compute(whole["review:fluency"], whole["review:fluency"].tallied(), bootstrap=0, seed=1)
    assert {s["label"] for s in fluency["strata"]["topic"]} == {"food", "(none)"}


def test_strata_by_topic_region_and_annotator(project, two_reviewers, annotator):
    report = computed(project)

    strata = report.result["scopes"]["review:fluency"]["strata"]
    assert set(strata) == {"topic", "region", "annotator"}
    assert [stratum["label"] for stratum in strata["annotator"]] == [annotator.username]
    assert [stratum["label"] for stratum in strata["topic"]] == ["(none)"]  # no final label yet
    assert strata["annotator"][0]["statistics"]["percent_agreement"]["value"] == pytest.approx(0.75)


def test_strata_take_each_pair_s_own_final_label_and_none_where_it_has_none(project, two_reviewers, coordinator):
    first, items, _ = two_reviewers
    second = items[2].pair
    FinalLabel.objects.create(project=project, pair=first, kind="topic", value="food", method="agreement")
    FinalLabel.objects.create(project=project, pair=second, kind="region", value="廣東 𠮶", method="adjudicated")
    # Another project's labels are not this project's.
    other = factories.project(coordinator)
    other_pair = factories.pair(other)
    FinalLabel.objects.create(project=other, pair=other_pair, kind="topic", value="history", method="agreement")

    strata = computed(project).result["scopes"]["review:fluency"]["strata"]

    def units(name):
        return {s["label"]: s["statistics"]["krippendorff_alpha"]["n_units"] for s in strata[name]}

    # items 0-1 are the first pair's (one disagreement), items 2-3 the second's.
    assert units("topic") == {"food": 2, "(none)": 2}
    assert units("region") == {"(none)": 2, "廣東 𠮶": 2}
    food = next(s for s in strata["topic"] if s["label"] == "food")
    assert food["statistics"]["percent_agreement"]["value"] == pytest.approx(0.5)


def test_raw_labels_and_multiple_screenings_are_scopes_of_their_own(project, coordinator, annotator):
    second = factories.user("coordinator2")
    membership_set(project=project, user=second, roles={"coordinator"})
    pairs = [submitted_pair(project, annotator)[0] for _ in range(3)]
    topics = {coordinator: ["food", "food", "history"], second: ["food", "sport", "history"]}
    for user, values in topics.items():
        for pair, value in zip(pairs, values, strict=True):
            review_labels.label_set(pair=pair, user=user, kind="topic", value=value)
            review_labels.label_set(pair=pair, user=user, kind="region", value="local")
    Screening.objects.create(project=project, pair=pairs[0], annotator=coordinator, decision="translated")
    Screening.objects.create(project=project, pair=pairs[1], annotator=coordinator, decision="annotate")

    report = computed(project)

    topic = report.result["scopes"]["label:topic"]["summary"]
    assert (topic["n_units"], topic["n_raters"]) == (3, 2)
    assert topic["statistics"]["percent_agreement"]["value"] == pytest.approx(2 / 3)
    assert [unit["pair_id"] for unit in topic["contested_units"]] == [pairs[1].pk]
    region = report.result["scopes"]["label:region"]["summary"]["statistics"]["krippendorff_alpha"]
    assert region["value"] is None  # everyone said local
    screening = report.result["scopes"]["screening"]["summary"]
    # Two pairs screened twice (annotator, coordinator); the third only once and left out.
    assert (screening["n_units"], screening["n_judgments"]) == (2, 4)
    assert screening["statistics"]["percent_agreement"]["value"] == pytest.approx(0.5)


def test_labels_count_as_they_were_before_the_labellers_saw_each_other(project, coordinator, annotator):
    second = factories.user("coordinator2")
    membership_set(project=project, user=second, roles={"coordinator"})
    pair = submitted_pair(project, annotator)[0]
    review_labels.label_set(pair=pair, user=coordinator, kind="topic", value="history", version=0)
    review_labels.label_set(pair=pair, user=coordinator, kind="topic", value="food", version=1)  # still blind: counts
    review_labels.label_set(pair=pair, user=coordinator, kind="region", value="local")
    review_labels.label_set(pair=pair, user=second, kind="topic", value="sport")
    review_labels.label_set(pair=pair, user=second, kind="region", value="local")  # complete: both see both
    review_labels.label_set(pair=pair, user=second, kind="topic", value="food", version=1)  # swayed: does not count

    topic = computed(project).result["scopes"]["label:topic"]["summary"]

    assert topic["statistics"]["percent_agreement"]["value"] == 0.0
    assert topic["contested_units"][0]["values"] == {"food": 1, "sport": 1}


def test_a_project_without_reviews_gets_a_report_that_says_so(project):
    report = computed(project)

    assert report.status == "done", report.error
    alpha = report.result["scopes"]["review:fluency"]["summary"]["statistics"]["krippendorff_alpha"]
    assert alpha["value"] is None and alpha["note"] == "No judgments."
    assert report.headline["review:fluency"]["n_judgments"] == 0


def test_unchanged_data_reuses_the_latest_report_and_says_so(project, two_reviewers):
    first = computed(project)
    second = computed(project)

    assert second.status == "done"
    assert second.same_as_id == first.pk
    assert "Unchanged since report" in second.stage
    assert second.result == first.result and second.fingerprint == first.fingerprint


def test_new_judgments_change_the_fingerprint(project, two_reviewers, annotator, reviewer):
    first = computed(project)
    _, items = submitted_pair(project, annotator)
    review(project, reviewer, items[0], all_pass(project))

    second = computed(project)

    assert second.same_as_id is None and second.fingerprint != first.fingerprint


def test_only_the_scopes_whose_judgments_changed_are_computed_again(project, two_reviewers, coordinator, monkeypatch):
    first = computed(project)
    pair = PagePair.objects.filter(project=project).first()
    review_labels.label_set(pair=pair, user=coordinator, kind="topic", value="food")
    computed_keys = []
    compute = reports.scope_compute

    def counted(scope, table, **kw):
        computed_keys.append(scope.key)
        return compute(scope, table, **kw)

    monkeypatch.setattr(reports, "scope_compute", counted)

    second = computed(project)

    assert second.same_as_id is None and second.fingerprint != first.fingerprint
    assert computed_keys == ["label:topic"]
    assert second.stage == f"Done: 1 of {len(second.result['scopes'])} scopes computed; " + (
        f"{len(second.result['scopes']) - 1} unchanged since report {first.pk}, taken from it."
    )
    for key, scope in second.result["scopes"].items():
        if key != "label:topic":
            assert scope == first.result["scopes"][key]
    # Taken or computed, every scope is what a report computed from nothing gives.
    AgreementReport.objects.exclude(pk=second.pk).delete()
    monkeypatch.setattr(reports, "scope_compute", compute)
    fresh = computed(project)
    assert fresh.fingerprint == second.fingerprint
    assert fresh.result["scopes"] == second.result["scopes"]


def test_a_report_with_another_bootstrap_computes_every_scope_again(project, two_reviewers):
    first = computed(project)
    report, _ = reports.agreement_report_request(project=project, enqueue=False)
    second = reports.agreement_report_compute(report_id=report.pk, bootstrap=100)

    assert second.fingerprint != first.fingerprint
    assert second.stage.startswith(f"Done: {len(second.result['scopes'])} of {len(second.result['scopes'])} scopes")


def test_a_retried_or_duplicated_task_is_harmless(project, two_reviewers):
    report = computed(project)
    finished = (report.finished_at, report.attempts, report.result)

    again = reports.agreement_report_compute(report_id=report.pk)

    assert again is None
    report.refresh_from_db()
    assert (report.finished_at, report.attempts, report.result) == finished


def test_a_running_report_is_not_claimed_twice_until_its_worker_goes_silent(project):
    report, _ = reports.agreement_report_request(project=project, enqueue=False)
    AgreementReport.objects.filter(pk=report.pk).update(status="running", heartbeat_at=timezone.now(), attempts=1)

    assert reports.agreement_report_compute(report_id=report.pk) is None

    silent = timezone.now() - timedelta(seconds=stale_seconds(AgreementReport) + 1)
    AgreementReport.objects.filter(pk=report.pk).update(heartbeat_at=silent)
    taken_over = reports.agreement_report_compute(report_id=report.pk, bootstrap=10)
    assert (taken_over.status, taken_over.attempts) == ("done", 2)


def test_a_failing_computation_is_recorded_on_the_report(project, monkeypatch):
    def broken(project, beat):
        raise RuntimeError("database went away")

    monkeypatch.setattr(reports, "SCOPE_GATHERERS", [broken])

    report = computed(project)

    assert report.status == "failed"
    assert report.error == "RuntimeError: database went away"


def test_asking_while_a_report_waits_returns_the_waiting_one(project, coordinator):
    first, created = reports.agreement_report_request(project=project, user=coordinator, enqueue=False)
    second, created_again = reports.agreement_report_request(project=project, user=coordinator, enqueue=False)

    assert (created, created_again) == (True, False)
    assert second.pk == first.pk
    assert AgreementReport.objects.filter(project=project).count() == 1


# Debounce


@pytest.fixture
def auto_after_six(settings):
    settings.AGREEMENT_AUTO_JUDGMENTS = 6  # two reviews of three criteria
    settings.AGREEMENT_AUTO_COUNTDOWN = 30


def test_a_burst_of_reviews_queues_one_report(
    project, reviewer, second_reviewer, annotator, auto_after_six, django_capture_on_commit_callbacks, monkeypatch
):
    sent = []
    monkeypatch.setattr(
        "review.tasks.agreement_report_task.apply_async", lambda args, countdown: sent.append((args, countdown))
    )
    project_update(project=project, reviewers_per_item=2)
    _, items = four_items(project, annotator)

    with django_capture_on_commit_callbacks(execute=True):
        review(project, reviewer, items[0], all_pass(project))  # 3 judgments: not enough yet
        assert not AgreementReport.objects.exists()
        for item in items[1:]:
            review(project, reviewer, item, all_pass(project))
        for item in items:
            review(project, second_reviewer, item, all_pass(project))

    queued = AgreementReport.objects.get()
    assert (queued.status, queued.trigger) == ("pending", "auto")
    assert sent == [((queued.pk,), 30)]


def test_after_a_report_the_count_starts_again(project, reviewer, annotator, auto_after_six, monkeypatch):
    monkeypatch.setattr("review.tasks.agreement_report_task.apply_async", lambda args, countdown: None)
    _, items = four_items(project, annotator)
    for item in items[:2]:
        review(project, reviewer, item, all_pass(project))
    queued = AgreementReport.objects.get()
    reports.agreement_report_compute(report_id=queued.pk, bootstrap=10)

    review(project, reviewer, items[2], all_pass(project))
    assert AgreementReport.objects.count() == 1  # 3 new judgments: not yet
    review(project, reviewer, items[3], all_pass(project))
    assert AgreementReport.objects.count() == 2


def test_automatic_reports_can_be_turned_off(project, reviewer, annotator, settings):
    settings.AGREEMENT_AUTO_JUDGMENTS = 0
    _, items = four_items(project, annotator)
    for item in items:
        review(project, reviewer, item, all_pass(project))
    assert not AgreementReport.objects.exists()


# What a release cites


def test_the_release_gets_the_latest_done_report_without_per_rater_figures(project, two_reviewers):
    assert reports.latest_agreement_report(project) is None
    report = computed(project)

    cited = reports.project_agreement_report(project=project)

    assert cited["report_id"] == report.pk and cited["fingerprint"] == report.fingerprint
    assert set(cited["scopes"]) == set(report.result["scopes"])
    assert (
        cited["scopes"]["review:fluency"]["statistics"]
        == report.result["scopes"]["review:fluency"]["summary"]["statistics"]
    )
    assert "pairs" not in str(cited.keys())
    assert cited["judgments_since"] == 0


def test_the_release_is_told_how_many_judgments_came_after_the_report(project, two_reviewers, annotator, reviewer):
    computed(project)
    _, items = submitted_pair(project, annotator)
    review(project, reviewer, items[0], all_pass(project))

    assert reports.latest_agreement_report(project)["judgments_since"] == 3


def test_the_csv_has_a_row_per_figure_of_every_scope(project, two_reviewers):
    report = computed(project)

    rows = reports.report_csv_rows(report.result)

    assert rows[0][:3] == ["report_scope", "stratification", "scope"]
    scopes = {row[0] for row in rows[1:]}
    assert {"review:fluency", "label:topic", "screening"} <= scopes
    assert any(row[0] == "review:fluency" and row[1] == "annotator" for row in rows)
    assert any(row[0] == "review:fluency" and row[2] == "pair" for row in rows)


def test_a_report_queued_long_ago_and_never_claimed_is_sent_again_once(
    project, reviewer, annotator, auto_after_six, monkeypatch, django_capture_on_commit_callbacks
):
    sent = []
    monkeypatch.setattr("review.tasks.agreement_report_task.apply_async", lambda args, countdown: sent.append(args))
    waiting, _ = reports.agreement_report_request(project=project, enqueue=False)
    _, items = four_items(project, annotator)

    with django_capture_on_commit_callbacks(execute=True):
        review(project, reviewer, items[0], all_pass(project))
    assert sent == []  # queued a moment ago: its message is still on its way

    long_ago = timezone.now() - timedelta(seconds=stale_seconds(AgreementReport) + 3600)
    AgreementReport.objects.filter(pk=waiting.pk).update(created_at=long_ago)
    with django_capture_on_commit_callbacks(execute=True):
        review(project, reviewer, items[1], all_pass(project))
        review(project, reviewer, items[2], all_pass(project))

    assert sent == [(waiting.pk,)]
    assert AgreementReport.objects.count() == 1


def test_while_the_cache_is_unreachable_reviews_count_for_nothing(project, reviewer, annotator, settings):
    # A Redis cache that nothing answers (a port nobody listens on), failing open as the settings make it.
    settings.CACHES = {
        "default": {
            "BACKEND": "django_redis.cache.RedisCache",
            "LOCATION": "redis://127.0.0.1:9/0",
            "OPTIONS": {"IGNORE_EXCEPTIONS": True, "SOCKET_CONNECT_TIMEOUT": 0.2, "SOCKET_TIMEOUT": 0.2},
        }
    }
    settings.AGREEMENT_AUTO_JUDGMENTS = 4  # two reviews of three criteria would queue one

    _, items = four_items(project, annotator)
    for item in items[:2]:
        review(project, reviewer, item, all_pass(project))  # recorded; no report queued by itself
    assert not AgreementReport.objects.exists()
    assert reports._counted_since_asked(project, 3) == 3


def _labels_as_the_rule_reads(project):
    """The rule of `_independent_labels`, read plainly: a Python object per label (the reference)."""
    history = defaultdict(lambda: defaultdict(lambda: defaultdict(list)))
    for kind, pair_id, labeller_id, value, created_at in (
        ArticleLabel.objects.filter(project=project)
        .order_by("created_at", "id")
        .values_list("kind", "pair_id", "labeller_id", "value", "created_at")
    ):
        history[pair_id][labeller_id][kind].append((created_at, value))
    out = defaultdict(list)
    for pair_id, labellers in history.items():
        done = sorted(
            max(kinds[kind][0][0] for kind in LabelKind.values)
            for kinds in labellers.values()
            if all(kinds.get(kind) for kind in LabelKind.values)
        )
        complete = done[project.labellers_per_pair - 1] if len(done) >= project.labellers_per_pair else None
        for labeller_id, kinds in labellers.items():
            for kind, rows in kinds.items():
                before = [v for created_at, v in rows if complete is None or created_at <= complete]
                value = before[-1] if before else rows[0][1]
                out[kind].append((pair_id, labeller_id, value))
    return dict(out)


@pytest.mark.parametrize("needed", [1, 2, 3])
def test_labels_worked_out_in_columns_follow_the_rule_on_random_histories(project, annotator, needed):
    """Relabels before and after completion, labellers who come late or give one kind only, equal times."""
    project.labellers_per_pair = needed
    project.save(update_fields=["labellers_per_pair"])
    rng = random.Random(needed)
    labellers = [factories.user(f"labeller{n}") for n in range(4)]
    pairs = [submitted_pair(project, annotator)[0] for _ in range(12)]
    start = timezone.now()
    rows = []
    for _ in range(150):
        rows.append(
            ArticleLabel(
                project=project,
                pair=rng.choice(pairs),
                labeller=rng.choice(labellers),
                kind=rng.choice(LabelKind.values),
                value=rng.choice(["food", "sport", "history", "local", "global"]),
                created_at=start + timedelta(seconds=rng.randrange(40)),
                superseded_at=start,  # history rows: the one-current-label constraint does not apply
            )
        )
    ArticleLabel.objects.bulk_create(rows)

    worked_out = defaultdict(list)
    for pair_id, kind, values in reports._independent_labels(project):
        worked_out[kind] += [(pair_id, labeller_id, value) for labeller_id, value in values]

    assert {kind: sorted(rows) for kind, rows in worked_out.items()} == {
        kind: sorted(rows) for kind, rows in _labels_as_the_rule_reads(project).items()
    }
