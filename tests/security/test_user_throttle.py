"""The per-user API throttle (common/throttling.py): DRF's sliding window, in one round trip on Redis (the
suite's cache when REDIS_URL is set), DRF's own way on any other cache."""

from __future__ import annotations

import uuid

import pytest
from django.core.cache import caches
from django.core.cache.backends.redis import RedisCache

from common.throttling import UserRateThrottle
from tests.conftest import api_as


@pytest.fixture
def three_a_minute(monkeypatch):
    monkeypatch.setattr(UserRateThrottle, "THROTTLE_RATES", {**UserRateThrottle.THROTTLE_RATES, "user": "3/min"})


@pytest.fixture(params=["the configured cache", "an in-memory cache"])
def throttle_cache(request, settings, monkeypatch):
    # A key space of this test's own: the same person (id) may have been throttled by an earlier test.
    fresh = uuid.uuid4().hex
    settings.CACHES = {
        **settings.CACHES,
        "default": {**settings.CACHES["default"], "KEY_PREFIX": f"localqa-test-{fresh}"},
        "throttle": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache", "LOCATION": fresh},
    }
    if request.param == "an in-memory cache":
        monkeypatch.setattr(UserRateThrottle, "cache", caches["throttle"])
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


def test_the_suite_runs_the_redis_way_when_it_has_redis(settings, annotator, monkeypatch):
    calls = []
    monkeypatch.setattr(RedisCache, "make_and_validate_key", lambda self, key, version=None: calls.append(key) or key)
    assert api_as(annotator).get("/api/projects/").status_code == 200
    windows = [key for key in calls if key.endswith(":window")]  # the sorted set of the Lua script
    assert bool(windows) == ("redis" in settings.CACHES["default"]["BACKEND"].lower())
