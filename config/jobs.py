"""What every background job (collection, import, release build, agreement report) shares.

Each job is a row a worker claims with a conditional update and keeps alive with a heartbeat; a running row
whose heartbeat is older than its stale time (JOB_STALE_SECONDS, RELEASE_STALE_SECONDS,
AGREEMENT_STALE_SECONDS) has lost its worker and may be taken over by the next delivery of its task. Work
a job has committed stays; a takeover continues or starts again (see each service).
"""

from __future__ import annotations

import time

from django.conf import settings


def pause_between_steps() -> None:
    """Tests only: wait JOB_STEP_DELAY seconds (0, no wait, in production) so a fault test can kill a job mid-way."""
    delay = float(getattr(settings, "JOB_STEP_DELAY", 0) or 0)
    if delay > 0:
        time.sleep(delay)
