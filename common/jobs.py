"""What every background job (collection, import, release build, agreement report) shares.

Each job is a row a worker claims with a conditional update and keeps alive with a heartbeat; a running row
whose heartbeat is older than its stale time (JOB_STALE_SECONDS, RELEASE_STALE_SECONDS,
AGREEMENT_STALE_SECONDS) has lost its worker and may be taken over by the next delivery of its task. Work
a job has committed stays; a takeover continues or starts again (see each service).
"""

from __future__ import annotations

import time
from typing import Any

from django.conf import settings
from django.db import InterfaceError, OperationalError

# A job task whose database went away (a PostgreSQL restart) tries again this often before giving up.
DATABASE_RETRIES = 12


def pause_between_steps() -> None:
    """Tests only: wait JOB_STEP_DELAY seconds (0, no wait, in production) so a fault test can kill a job mid-way."""
    delay = float(getattr(settings, "JOB_STEP_DELAY", 0) or 0)
    if delay > 0:
        time.sleep(delay)


def retry_when_the_database_returns(stale_setting: str) -> dict[str, Any]:
    """Celery options for a job's task: when the database goes away mid-job, send the task again for later.

    The job's row cannot even be marked failed then, so it stays running with a heartbeat that goes stale;
    the retry comes a little after that (`stale_setting` + 5 s), when the service takes the job over.
    """
    return {
        "autoretry_for": (OperationalError, InterfaceError),
        "max_retries": DATABASE_RETRIES,
        "default_retry_delay": int(getattr(settings, stale_setting)) + 5,
    }
