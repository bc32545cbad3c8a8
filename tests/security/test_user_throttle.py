"""The per-user API throttle: DRF's UserRateThrottle as shipped (a sliding window of each person's request times
in the cache: Redis when the suite has REDIS_URL)."""

from __future__ import annotations

import uuid

import pytest
from rest_framework.throttling import UserRateThrottle

from tests.conftest import api_as


@pytest.fixture
def three_a_minute(monkeypatch):
    monkeypatch.setattr(UserRateThrottle, "THROTTLE_RATES", {**UserRateThrottle.THROTTLE_RATES, "user": "3/min"})


@pytest.fixture
def throttle_cache(settings):
    # A key space of this test's own: the same person (id) may have been throttled by an earlier test.
    settings.CACHES = {
        **settings.CACHES,
        "default": {**settings.CACHES["default"], "KEY_PREFIX": f"localqa-test-{uuid.uuid4().hex}"},
    }
    return UserRateThrottle.cache


def test_a_person_over_the_rate_waits_and_others_do_not(three_a_minute, throttle_cache, annotator, reviewer):
    statuses = [api_as(annotator).get("/api/projects/").status_code for _ in range(4)]
    refused = api_as(annotator).get("/api/projects/")

    assert statuses == [200, 200, 200, 429]
    assert refused.status_code == 429 and 55 <= int(refused["Retry-After"]) <= 60  # the oldest leaves in a minute
    assert api_as(reviewer).get("/api/projects/").status_code == 200


def test_the_window_slides(three_a_minute, throttle_cache, annotator, monkeypatch):
    now = [1_000_000.0]
    monkeypatch.setattr(UserRateThrottle, "timer", lambda self: now[0])
    for seconds in (0, 20, 40):
        now[0] = 1_000_000.0 + seconds
        assert api_as(annotator).get("/api/projects/").status_code == 200
    now[0] = 1_000_059.0
    refused = api_as(annotator).get("/api/projects/")
    now[0] = 1_000_060.5  # the first request has left the window: one place again
    again = api_as(annotator).get("/api/projects/")
    full = api_as(annotator).get("/api/projects/")

    assert refused.status_code == 429 and refused["Retry-After"] == "1"
    assert (again.status_code, full.status_code) == (200, 429)
