"""The cache's Redis client: django-redis's own, failing open in the two calls where IGNORE_EXCEPTIONS does not.

While Redis is down, IGNORE_EXCEPTIONS makes a read a miss and a write a no-op, but touch() lets the connection
error through (django-redis 6.0 and 7.0) and an ignored incr() answers None. django-axes counts failed sign-ins
with add(), incr() and touch(), so a wrong password would answer 500 instead of going on without a lockout.
Here a count that cannot be kept reads 0 and a touch that cannot be made is skipped, both logged.
"""

from __future__ import annotations

import logging
from typing import Any

from django_redis.client import DefaultClient
from django_redis.exceptions import ConnectionInterrupted
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

logger = logging.getLogger(__name__)
REDIS_DOWN = (ConnectionInterrupted, RedisConnectionError, RedisTimeoutError)


class FailOpenClient(DefaultClient):
    def incr(self, *args: Any, **kwargs: Any) -> int:
        try:
            return super().incr(*args, **kwargs)
        except REDIS_DOWN:
            logger.warning("Redis is down: a count in the cache reads 0 until it is back", exc_info=True)
            return 0

    def touch(self, *args: Any, **kwargs: Any) -> bool:
        try:
            return super().touch(*args, **kwargs)
        except REDIS_DOWN:
            logger.warning("Redis is down: a cache entry's expiry was not renewed", exc_info=True)
            return False
