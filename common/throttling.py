"""The API's per-user throttle: DRF's own rule (a sliding window of request times per user) in one cache round trip.

DRF's `UserRateThrottle` reads the user's list of request times from the cache and writes it back: two round
trips, and the whole list (up to the rate's number of requests) pickled both ways on every request. On a Redis
cache this keeps the times in a sorted set and asks one Lua script to drop the old ones, count, and add this
request unless the limit is reached, so concurrent requests cannot both take the last place either. Any other
cache (the in-memory one of a development setup) goes DRF's way. An unreachable Redis lets the request through,
as the fail-open cache does (config/cache.py), with its one warning a minute.
"""

from __future__ import annotations

import hashlib
import secrets
import weakref
from typing import Any

from django.core.cache import DEFAULT_CACHE_ALIAS, caches
from django.core.cache import cache as default_cache
from django.core.cache.backends.redis import RedisCache
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import NoScriptError
from redis.exceptions import TimeoutError as RedisTimeoutError
from rest_framework import throttling

UNREACHABLE = (RedisConnectionError, RedisTimeoutError, OSError)

# KEYS[1]: the user's set; ARGV: now, window (s), limit, a member naming this request. Returns {allowed, the
# requests in the window (this one included when allowed), the oldest one's time when refused}.
WINDOW = """
local key, now, window, limit = KEYS[1], tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
redis.call('ZREMRANGEBYSCORE', key, '-inf', now - window)
local count = redis.call('ZCARD', key)
if count >= limit then
  local oldest = redis.call('ZRANGE', key, 0, 0, 'WITHSCORES')
  return {0, count, oldest[2] or tostring(now)}
end
redis.call('ZADD', key, now, ARGV[4])
redis.call('PEXPIRE', key, math.ceil(window * 1000))
return {1, count + 1, ''}
"""
WINDOW_SHA = hashlib.sha1(WINDOW.encode()).hexdigest()  # noqa: S324 - Redis names scripts by their SHA-1


# Django's Redis cache makes a new client object (with its table of reply parsers) for every call; the throttle
# runs on every request, so it keeps one per connection pool, for as long as the pool lives.
_CLIENTS: weakref.WeakKeyDictionary[Any, Any] = weakref.WeakKeyDictionary()


def redis_client_of(backend: RedisCache) -> Any:
    cache_client: Any = backend._cache  # Django's own RedisCacheClient: its pool and client class
    pool = cache_client._get_connection_pool(write=True)
    client = _CLIENTS.get(pool)
    if client is None:
        client = _CLIENTS.setdefault(pool, cache_client._client(connection_pool=pool))
    return client


class UserRateThrottle(throttling.UserRateThrottle):
    num_requests: int  # set by DRF's __init__ from the rate
    duration: int

    def allow_request(self, request: Any, view: Any) -> bool:
        # DRF's default is a proxy of the default cache: the cache itself says which kind it is.
        backend = caches[DEFAULT_CACHE_ALIAS] if self.cache is default_cache else self.cache
        if not isinstance(backend, RedisCache):
            return super().allow_request(request, view)
        if self.rate is None:
            return True
        self.key = self.get_cache_key(request, view)
        if self.key is None:
            return True
        self.now = self.timer()
        key = backend.make_and_validate_key(f"{self.key}:window")
        args = (repr(self.now), self.duration, self.num_requests, f"{self.now!r}:{secrets.token_hex(4)}")
        try:
            client = redis_client_of(backend)
            try:
                allowed, count, oldest = client.evalsha(WINDOW_SHA, 1, key, *args)
            except NoScriptError:  # the first call since Redis started
                allowed, count, oldest = client.eval(WINDOW, 1, key, *args)
        except UNREACHABLE as error:
            warn = getattr(backend, "_warn", None)
            if warn is not None:
                warn("throttle", error)
            return True
        # What DRF's `wait()` reads: as many times as the window holds, the oldest last.
        self.history = [float(oldest)] * int(count) if not allowed else []
        return bool(allowed)
