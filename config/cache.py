"""A Redis cache that fails open: while Redis is down, every read is a miss and every write is dropped.

The cache holds nothing but API throttle counters and login-failure counts (work lives in PostgreSQL), and
in production it is the Redis that is also the broker. Without this, a Redis outage turns every API request
(throttles read the cache) and every log-in into a 500; with it, annotators and reviewers keep working and
the brakes are off until Redis is back. One warning per `WARN_EVERY` seconds says so, not one per request.
Set a short `socket_connect_timeout`/`socket_timeout` in OPTIONS (settings.py does) so a Redis that does not
answer costs a request a fraction of a second, not a hang.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from typing import Any, TypeVar

from django.core.cache.backends.base import DEFAULT_TIMEOUT
from django.core.cache.backends.redis import RedisCache
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

logger = logging.getLogger(__name__)

WARN_EVERY = 60.0  # seconds between two "cache unreachable" warnings of one process
UNREACHABLE = (RedisConnectionError, RedisTimeoutError, OSError)

T = TypeVar("T")


class FailOpenRedisCache(RedisCache):
    _last_warning = 0.0
    _warning_lock = threading.Lock()

    def _or(self, fallback: T, call: Callable[[], T], operation: str) -> T:
        try:
            return call()
        except UNREACHABLE as error:
            self._warn(operation, error)
            return fallback

    def _warn(self, operation: str, error: BaseException) -> None:
        with self._warning_lock:
            now = time.monotonic()
            if now - FailOpenRedisCache._last_warning < WARN_EVERY and FailOpenRedisCache._last_warning:
                return
            FailOpenRedisCache._last_warning = now
        logger.warning(
            "Cache unreachable (%s: %s): treated as empty, so API throttles and login lockouts are off until it "
            "is back. Next warning in %d s at the earliest.",
            operation,
            error,
            WARN_EVERY,
        )

    def add(self, key: Any, value: Any, timeout: Any = DEFAULT_TIMEOUT, version: int | None = None) -> bool:
        return self._or(False, lambda: super(FailOpenRedisCache, self).add(key, value, timeout, version), "add")

    def get(self, key: Any, default: Any = None, version: int | None = None) -> Any:
        return self._or(default, lambda: super(FailOpenRedisCache, self).get(key, default, version), "get")

    def set(self, key: Any, value: Any, timeout: Any = DEFAULT_TIMEOUT, version: int | None = None) -> None:
        self._or(None, lambda: super(FailOpenRedisCache, self).set(key, value, timeout, version), "set")

    def touch(self, key: Any, timeout: Any = DEFAULT_TIMEOUT, version: int | None = None) -> bool:
        return self._or(False, lambda: super(FailOpenRedisCache, self).touch(key, timeout, version), "touch")

    def delete(self, key: Any, version: int | None = None) -> bool:
        return self._or(False, lambda: super(FailOpenRedisCache, self).delete(key, version), "delete")

    def get_many(self, keys: Any, version: int | None = None) -> dict[Any, Any]:
        return self._or({}, lambda: super(FailOpenRedisCache, self).get_many(keys, version), "get_many")

    def has_key(self, key: Any, version: int | None = None) -> bool:
        return self._or(False, lambda: super(FailOpenRedisCache, self).has_key(key, version), "has_key")

    def incr(self, key: Any, delta: int = 1, version: int | None = None) -> int:
        # A missing key still raises ValueError (the cache contract); only an unreachable Redis is swallowed.
        return self._or(delta, lambda: super(FailOpenRedisCache, self).incr(key, delta, version), "incr")

    def set_many(self, data: Any, timeout: Any = DEFAULT_TIMEOUT, version: int | None = None) -> list[Any]:
        return self._or(list(data), lambda: super(FailOpenRedisCache, self).set_many(data, timeout, version), "set")

    def delete_many(self, keys: Any, version: int | None = None) -> None:
        self._or(None, lambda: super(FailOpenRedisCache, self).delete_many(keys, version), "delete_many")

    def clear(self) -> None:  # Django's cache interface returns nothing (RedisCache happens to return a bool)
        self._or(None, lambda: super(FailOpenRedisCache, self).clear(), "clear")
