"""`python -m tests.celery_worker worker ...`: Celery's own command line (`celery -A config worker ...`), for the
workers the tests start. It ends like `celery` does, after the worker's warm shutdown (its task finished, its
consumer and connections closed), but leaves at once instead of tearing the interpreter down object by object:
with Django, pandas, scipy and statsmodels loaded, that last garbage collection took 3-4 s of every worker test."""

from __future__ import annotations

import logging
import os
import sys

from celery.__main__ import main

if __name__ == "__main__":
    sys.argv[0] = "celery"
    code = 0
    try:
        main()
    except SystemExit as done:
        code = done.code if isinstance(done.code, int) else (0 if done.code is None else 1)
    logging.shutdown()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)
